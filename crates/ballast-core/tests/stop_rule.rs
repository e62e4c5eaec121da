//! The stopping rule for multi-ball steps ([`Stop`]) and the specialised (1, 1)-Memory and
//! Caching rule ([`MemoryOne`]).
//!
//! Statistical tests use fixed seeds and `common::ALPHA` = 0.001.

mod common;

use ballast_core::engine::run_rule_observed;
use ballast_core::loads::{LoadState, UnitLoads};
use ballast_core::process::{Ctx, Placement, Ranks, Rule};
use ballast_core::{
    derive_seed, sim_rng, simulate_observed, simulate_seeded, Engine, Observer, ProcessSpec,
    RunSpec, Stop,
};
use common::{chi2_critical, chi2_gof};
use rand::RngCore;

/// Records every ball's bin and the total weight at every observation point.
#[derive(Default)]
struct Trace {
    bins: Vec<usize>,
    totals: Vec<f64>,
}

impl Observer for Trace {
    fn on_ball<S: LoadState>(&mut self, _state: &S, bin: usize, _weight: f64) {
        self.bins.push(bin);
    }
    fn on_observation<S: LoadState>(&mut self, state: &S) {
        self.totals.push(state.total());
    }
}

fn traced(spec: &RunSpec, seed: u64) -> (ballast_core::RunOutcome, Trace) {
    let mut t = Trace::default();
    let out = simulate_observed(spec, &mut sim_rng(seed), &mut t).expect("valid");
    (out, t)
}

const MULTI: [ProcessSpec; 4] = [
    ProcessSpec::Twinning,
    ProcessSpec::Packing { offset: 1 },
    ProcessSpec::Packing { offset: 3 },
    ProcessSpec::TightPacking { offset: 1, balls: None },
];

/// Largest step a multi-ball process can take while fewer than `m` balls are placed:
/// Packing and Tight-Packing fill up to `⌈W/n⌉ + offset` from a load `>= 0` with `W < m`.
fn max_step(p: &ProcessSpec, n: u64, m: u64) -> u64 {
    match *p {
        ProcessSpec::Twinning => 2,
        ProcessSpec::Packing { offset } | ProcessSpec::TightPacking { offset, balls: None } => {
            m.div_ceil(n) + u64::from(offset)
        }
        _ => 1,
    }
}

#[test]
fn stop_names_parse_and_truncate_is_the_default() {
    assert_eq!(RunSpec::new(ProcessSpec::Twinning, 4, 4).stop, Stop::Truncate);
    assert_eq!(Stop::default(), Stop::Truncate);
    for (name, s) in Stop::ALL {
        assert_eq!(Stop::from_name(name), Ok(s));
        assert_eq!(s.name(), name);
    }
    let err = Stop::from_name("round").expect_err("unknown").to_string();
    assert!(err.contains("stop") && err.contains("truncate, finish"), "{err}");
    assert!(ProcessSpec::Packing { offset: 1 }.multi_ball());
    assert!(!ProcessSpec::DChoice { d: 2 }.multi_ball());
}

#[test]
fn finish_completes_the_last_step_of_a_sequential_run() {
    let (n, m) = (50u64, 5_003u64);
    for (k, p) in MULTI.iter().enumerate() {
        for engine in [Engine::Bins, Engine::Levels] {
            let mut overshoots = 0;
            for r in 0..20u64 {
                let seed = derive_seed(31, &[k as u64, r]);
                let trunc = RunSpec::new(p.clone(), n, m).engine(engine);
                let fin = trunc.clone().stop(Stop::Finish);
                let (t, tt) = traced(&trunc, seed);
                let (f, ft) = traced(&fin, seed);
                assert_eq!(t.balls, m);
                assert!(f.balls >= m, "{}: {} < m", p.kind(), f.balls);
                assert!(f.balls < m + max_step(p, n, m), "{}: {} balls", p.kind(), f.balls);
                assert_eq!(ft.bins.len() as u64, f.balls);
                assert_eq!(f.observations, 1);
                // Same decisions up to m; the finished run only adds the rest of the step.
                assert_eq!(&ft.bins[..m as usize], &tt.bins[..]);
                if engine == Engine::Bins {
                    assert_eq!(f.samples, t.samples, "{}: the last step costs no sample", p.kind());
                    if !matches!(p, ProcessSpec::TightPacking { .. }) {
                        // One step, one bin: the added balls go where the cut step went.
                        let last = *tt.bins.last().expect("m > 0");
                        assert!(ft.bins[m as usize..].iter().all(|&b| b == last));
                    }
                }
                assert!(f.max_load >= t.max_load);
                overshoots += u64::from(f.balls > m);
            }
            assert!(overshoots > 0, "{}: no run finished a step past m", p.kind());
        }
    }
}

#[test]
fn finish_ends_every_batch_on_a_step_boundary() {
    let (n, m, b) = (40u64, 4_010u64, 100u64);
    for (k, p) in MULTI.iter().enumerate() {
        let mut overshoots = 0;
        for r in 0..20u64 {
            let seed = derive_seed(32, &[k as u64, r]);
            let trunc = RunSpec::new(p.clone(), n, m).batched(b).engine(Engine::Bins);
            let (t, tt) = traced(&trunc, seed);
            assert_eq!(t.balls, m);
            let sizes: Vec<u64> = std::iter::once(0.0)
                .chain(tt.totals.iter().copied())
                .collect::<Vec<f64>>()
                .windows(2)
                .map(|w| (w[1] - w[0]) as u64)
                .collect();
            let last = *sizes.last().expect("batches");
            assert!(sizes[..sizes.len() - 1].iter().all(|&s| s == b) && last == m % b);

            let (f, ft) = traced(&trunc.clone().stop(Stop::Finish), seed);
            let step = max_step(p, n, f.balls);
            assert!(f.balls >= m && f.balls < m + step, "{}: {} balls", p.kind(), f.balls);
            let mut done = 0u64;
            for w in
                std::iter::once(0.0).chain(ft.totals.iter().copied()).collect::<Vec<_>>().windows(2)
            {
                let size = (w[1] - w[0]) as u64;
                let want = b.min(m - done);
                assert!(size >= want && size < want + step, "{}: batch of {size}", p.kind());
                overshoots += u64::from(size > want);
                done += size;
            }
            assert_eq!(done, f.balls);
            assert_eq!(f.observations, ft.totals.len() as u64);
        }
        assert!(overshoots > 0, "{}: no batch ever finished a step past b", p.kind());
    }
}

#[test]
fn finish_does_nothing_to_single_ball_processes() {
    for p in [
        ProcessSpec::DChoice { d: 2 },
        ProcessSpec::OneChoice,
        ProcessSpec::MeanThinning { strict: true },
        ProcessSpec::Memory { d: 1, k: 1 },
    ] {
        for spec in
            [RunSpec::new(p.clone(), 30, 3001), RunSpec::new(p.clone(), 30, 3001).batched(70)]
        {
            let t = simulate_seeded(&spec.clone().engine(Engine::Bins), 5).expect("valid");
            let f =
                simulate_seeded(&spec.stop(Stop::Finish).engine(Engine::Bins), 5).expect("valid");
            assert_eq!(t, f, "{}", p.kind());
        }
    }
}

/// Twinning, n = 2, m = 2 by hand: the first ball lands alone (both bins are at the
/// average); the second sample is the empty bin with probability 1/2, which is underloaded
/// and takes 2 balls. Truncate cuts that step to 1 ball (loads {1, 1}); Finish places both
/// (loads {1, 2}, 3 balls, gap 2 − 3/2). Otherwise the loaded bin gets 1 ball (loads {2, 0}).
/// Packing (offset 1), n = 4, m = 2: the second sample is empty with probability 3/4 and is
/// raised to ⌈1/4⌉ + 1 = 2; Finish then places 3 balls (gap 2 − 3/4), else 2 (gap 2 − 2/4).
#[test]
fn hand_built_finish() {
    let runs = 4000u64;
    let cases = [
        (ProcessSpec::Twinning, 2u64, 0.5f64, 0.5f64, 1.0f64),
        (ProcessSpec::Packing { offset: 1 }, 4, 0.75, 1.25, 1.5),
    ];
    for (case, (p, n, p_finish, gap3, gap2)) in cases.into_iter().enumerate() {
        let mut counts = [0u64; 2];
        for r in 0..runs {
            let seed = derive_seed(33, &[case as u64, r]);
            let t = simulate_seeded(&RunSpec::new(p.clone(), n, 2), seed).expect("valid");
            assert_eq!(t.balls, 2);
            let f = simulate_seeded(&RunSpec::new(p.clone(), n, 2).stop(Stop::Finish), seed)
                .expect("valid");
            match f.balls {
                3 => {
                    assert_eq!((f.final_gap, f.max_load), (gap3, 2.0));
                    // Same decisions: the truncated run put 1 ball where Finish put 2.
                    assert_eq!(t.max_load, 1.0);
                    counts[0] += 1;
                }
                2 => {
                    assert_eq!((f.final_gap, f.max_load), (gap2, 2.0));
                    assert_eq!(t, f);
                    counts[1] += 1;
                }
                other => panic!("{}: {other} balls", p.kind()),
            }
            assert_eq!(f.samples, 2);
        }
        let (stat, df) = chi2_gof(&counts, &[p_finish, 1.0 - p_finish]);
        assert!(stat < chi2_critical(df), "{}: chi2 = {stat:.1}, counts {counts:?}", p.kind());
    }
}

/// The straightforward (1, 1)-Memory / Caching step, as it was written before the
/// branch-free [`ballast_core::process::MemoryOne`]: the reference for draw-for-draw
/// equality (same random stream, same choices).
#[derive(Clone, Debug)]
struct ReferenceMemory {
    least_loaded: bool,
    cache: Option<usize>,
}

impl Rule for ReferenceMemory {
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        let j = ctx.sample(rng);
        let c = match self.cache {
            Some(c) if c != j => c,
            _ => {
                self.cache = Some(j);
                return Placement::one(j);
            }
        };
        let (lj, lc): (f64, f64) = (s.load(j).into(), s.load(c).into());
        let to_cache = lc < lj || (lc == lj && ctx.coin(rng));
        let (bin, other, l_bin, l_other) = if to_cache { (c, j, lc, lj) } else { (j, c, lj, lc) };
        let keep = if self.least_loaded {
            let after = l_bin + 1.0;
            if after < l_other || (after == l_other && ctx.coin(rng)) {
                bin
            } else {
                other
            }
        } else {
            bin
        };
        self.cache = Some(keep);
        Placement::one(bin)
    }
}

#[test]
fn fast_memory_makes_the_same_choices_as_the_straightforward_rule() {
    for (least_loaded, process) in
        [(true, ProcessSpec::Memory { d: 1, k: 1 }), (false, ProcessSpec::Caching { d: 1 })]
    {
        for (n, m, batch) in [(2u64, 500u64, None), (7, 20_000, None), (50, 20_000, Some(40))] {
            for seed in 0..5u64 {
                let mut spec = RunSpec::new(process.clone(), n, m).engine(Engine::Bins);
                if let Some(b) = batch {
                    spec = spec.batched(b);
                }
                let (fast, fast_trace) = traced(&spec, seed);
                let mut reference = Trace::default();
                let rule = ReferenceMemory { least_loaded, cache: None };
                let slow = run_rule_observed(
                    &spec,
                    UnitLoads::new(n as usize, false),
                    rule,
                    &mut sim_rng(seed),
                    &mut reference,
                );
                assert_eq!(fast_trace.bins, reference.bins, "{} n={n}", process.kind());
                assert_eq!(fast, slow);
            }
        }
    }
}
