//! Biased bin sampling (`ballast_core::sampling`, `docs/sampling.md`): the alias table draws
//! the law it was built for, the bin engine's processes draw their samples from it, and the
//! paths that cannot (kernels, sorted weighted batches, the level engine, uniform-only
//! processes) step aside or refuse.
//!
//! Every statistical test is seeded, at significance α = `ALPHA` = 0.001 with the chi-square
//! critical value of its degrees of freedom, and comes with a deliberately wrong variant that
//! the same test rejects (the statistics of those are printed on failure and stated in the
//! comments: far above the critical value, so the power at these sizes is essentially 1).

mod common;

use std::collections::BTreeMap;

use ballast_core::registry::{self, check_run, find_sampling, ParamValue};
use ballast_core::sampling::parse_weights;
use ballast_core::{
    resolve_engine, sim_rng, simulate, simulate_ball_by_ball, simulate_observed, AliasTable,
    Engine, ProcessSpec, RunSpec, Sampling, Weights,
};
use common::{chi2_critical, chi2_gof, BinTrace, ALPHA};

fn laws(n: usize) -> Vec<(&'static str, Sampling)> {
    // Explicit: a deterministic irregular vector with a 40-fold spread.
    let w: Vec<f64> = (0..n).map(|i| 0.5 + ((i * 7919) % 13) as f64 * 1.5).collect();
    vec![
        ("two_class", Sampling::TwoClass { fraction: 0.3, factor: 4.0 }),
        ("zipf", Sampling::Zipf { s: 1.0 }),
        ("explicit", Sampling::Explicit(w.into())),
    ]
}

fn counts_of(draws: impl Iterator<Item = usize>, n: usize) -> Vec<u64> {
    let mut c = vec![0u64; n];
    for i in draws {
        c[i] += 1;
    }
    c
}

/// The table's columns give back the law (rounding only), for every law and some sizes.
#[test]
fn alias_table_columns_give_back_the_law() {
    for n in [1usize, 2, 3, 20, 1000] {
        for (name, s) in laws(n) {
            s.validate(n as u64).unwrap();
            let t = s.table(n).unwrap();
            let want = s.probabilities(n);
            for (i, (a, b)) in t.implied().iter().zip(&want).enumerate() {
                assert!((a - b).abs() < 1e-12, "{name} n={n} bin {i}: {a} vs {b}");
            }
        }
    }
    // Two-class: round(fraction·n) heavy bins, factor times as likely.
    let p = Sampling::TwoClass { fraction: 0.7, factor: 3.0 }.probabilities(10);
    assert_eq!(Sampling::heavy_bins(0.7, 10), 7);
    assert!((p[6] / p[7] - 3.0).abs() < 1e-12 && (p[0] - p[6]).abs() < 1e-15);
}

/// 200 000 draws of the table against the exact probabilities (n = 20, df = 19, critical
/// value 43.8 at α = 0.001). Wrong variants, same test: uniform draws (statistics in the
/// thousands for every law) and a table built with the heaviest bin's weight 15 % too high
/// (for Zipf p₁ goes from 0.278 to 0.307: a noncentrality of about 600, far beyond the
/// critical value, so the power is 1 to many digits; the test asks for twice the critical
/// value).
#[test]
fn alias_draws_follow_the_law_and_wrong_tables_are_rejected() {
    let n = 20;
    let draws = 200_000;
    let crit = chi2_critical(n - 1);
    for (k, (name, s)) in laws(n).into_iter().enumerate() {
        let probs = s.probabilities(n);
        let t = s.table(n).unwrap();
        let mut rng = sim_rng(100 + k as u64);
        let c = counts_of((0..draws).map(|_| t.draw(&mut rng)), n);
        let (stat, df) = chi2_gof(&c, &probs);
        assert!(stat < crit, "{name}: chi2 = {stat:.1} (df {df}, critical {crit:.1})");

        let mut rng = sim_rng(200 + k as u64);
        let uniform = counts_of((0..draws).map(|_| rng_below(&mut rng, n)), n);
        let (stat, _) = chi2_gof(&uniform, &probs);
        assert!(stat > 10.0 * crit, "{name}: uniform draws not rejected, chi2 = {stat:.1}");

        let mut w = s.weights(n).unwrap();
        let heaviest = (0..n).max_by(|&a, &b| w[a].total_cmp(&w[b])).unwrap();
        w[heaviest] *= 1.15;
        let wrong = AliasTable::new(&w).unwrap();
        let mut rng = sim_rng(300 + k as u64);
        let c = counts_of((0..draws).map(|_| wrong.draw(&mut rng)), n);
        let (stat, _) = chi2_gof(&c, &probs);
        assert!(stat > 2.0 * crit, "{name}: perturbed table not rejected, chi2 = {stat:.1}");
        eprintln!("{name}: perturbed table chi2 = {stat:.1} (critical {crit:.1})");
    }
}

fn rng_below(rng: &mut ballast_core::SimRng, n: usize) -> usize {
    ballast_core::rng::below(rng, n as u64) as usize
}

/// The engine's samples are the table's: One-Choice (one sample, the ball goes there), run
/// by the bin engine with the law, sends its 100 000 balls by the law (chi-square as above,
/// n = 20); the same run with uniform sampling is rejected.
#[test]
fn one_choice_on_the_bin_engine_draws_the_law() {
    let n = 20;
    let crit = chi2_critical(n - 1);
    for (name, s) in laws(n) {
        let probs = s.probabilities(n);
        for (uniform, seed) in [(false, 5u64), (true, 6)] {
            let law = if uniform { Sampling::Uniform } else { s.clone() };
            let spec = RunSpec::new(ProcessSpec::OneChoice, n as u64, 100_000).sampling(law);
            let mut trace = BinTrace::default();
            simulate_observed(&spec, &mut sim_rng(seed), &mut trace).unwrap();
            let (stat, _) = chi2_gof(&counts_of(trace.0.into_iter(), n), &probs);
            if uniform {
                assert!(stat > 10.0 * crit, "{name}: uniform run not rejected ({stat:.1})");
            } else {
                assert!(stat < crit, "{name}: chi2 = {stat:.1}, critical {crit:.1}");
            }
        }
    }
}

/// Bin probabilities of the two-class law on 3 bins with one heavy bin of factor c.
fn three_bin_law(c: f64) -> [f64; 3] {
    [c / (c + 2.0), 1.0 / (c + 2.0), 1.0 / (c + 2.0)]
}

/// The exact law of the load vector (unsorted) of Two-Choice with random ties after `m`
/// balls, samples i.i.d. from `p`, by recursion over the balls: the pair (i, j) has
/// probability p_i p_j; the lighter gets the ball, a tie (i = j included) either with 1/2.
fn two_choice_exact(p: &[f64; 3], m: u32) -> BTreeMap<[u32; 3], f64> {
    let mut law = BTreeMap::from([([0u32; 3], 1.0)]);
    for _ in 0..m {
        let mut next = BTreeMap::new();
        for (x, q) in &law {
            for i in 0..3 {
                for j in 0..3 {
                    let pq = q * p[i] * p[j];
                    let to = |b: usize, w: f64, next: &mut BTreeMap<[u32; 3], f64>| {
                        let mut y = *x;
                        y[b] += 1;
                        *next.entry(y).or_insert(0.0) += w;
                    };
                    if x[i] < x[j] {
                        to(i, pq, &mut next);
                    } else if x[j] < x[i] {
                        to(j, pq, &mut next);
                    } else {
                        to(i, pq / 2.0, &mut next);
                        to(j, pq / 2.0, &mut next);
                    }
                }
            }
        }
        law = next;
    }
    law
}

/// The exact law of (1, 1)-Memory (`memory` with d = 1, k = 1): one fresh sample j and the
/// cached bin c; the lighter gets the ball (a tie by a fair coin; j = c: that bin); then the
/// cache keeps the lighter of the two after placing (a tie by a fair coin). State: loads and
/// cache (3 = empty, the first ball); the law returned is that of the loads.
fn memory_exact(p: &[f64; 3], m: u32) -> BTreeMap<[u32; 3], f64> {
    let mut law: BTreeMap<([u32; 3], usize), f64> = BTreeMap::from([(([0u32; 3], 3), 1.0)]);
    for _ in 0..m {
        let mut next = BTreeMap::new();
        let mut add = |x: [u32; 3], cache: usize, w: f64| {
            *next.entry((x, cache)).or_insert(0.0) += w;
        };
        for (&(x, c), &q) in &law {
            for j in 0..3 {
                let w = q * p[j];
                if c == 3 || c == j {
                    let mut y = x;
                    y[j] += 1;
                    add(y, j, w);
                    continue;
                }
                // Receivers with their probabilities.
                let receivers: Vec<(usize, usize, f64)> = if x[j] < x[c] {
                    vec![(j, c, 1.0)]
                } else if x[c] < x[j] {
                    vec![(c, j, 1.0)]
                } else {
                    vec![(j, c, 0.5), (c, j, 0.5)]
                };
                for (bin, other, pr) in receivers {
                    let mut y = x;
                    y[bin] += 1;
                    if y[bin] < y[other] {
                        add(y, bin, w * pr);
                    } else if y[other] < y[bin] {
                        add(y, other, w * pr);
                    } else {
                        add(y, bin, w * pr / 2.0);
                        add(y, other, w * pr / 2.0);
                    }
                }
            }
        }
        law = next;
    }
    let mut loads = BTreeMap::new();
    for ((x, _), q) in law {
        *loads.entry(x).or_insert(0.0) += q;
    }
    loads
}

/// The final loads of `runs` seeded runs of `spec` (from the bins of every ball).
fn simulated_states(spec: &RunSpec, runs: u64, seed: u64) -> BTreeMap<[u32; 3], u64> {
    let mut out = BTreeMap::new();
    for r in 0..runs {
        let mut trace = BinTrace::default();
        simulate_observed(spec, &mut sim_rng(ballast_core::derive_seed(seed, &[r])), &mut trace)
            .unwrap();
        let mut x = [0u32; 3];
        for b in trace.0 {
            x[b] += 1;
        }
        *out.entry(x).or_insert(0u64) += 1;
    }
    out
}

/// Chi-square of simulated states against an exact law; states expected fewer than 10
/// times are pooled into one cell. Returns (statistic, critical value at α).
fn against_exact(sim: &BTreeMap<[u32; 3], u64>, exact: &BTreeMap<[u32; 3], f64>) -> (f64, f64) {
    let total: u64 = sim.values().sum();
    let (mut obs, mut probs) = (Vec::new(), Vec::new());
    let (mut rest_o, mut rest_p) = (0u64, 0.0);
    for (x, &p) in exact {
        let o = sim.get(x).copied().unwrap_or(0);
        if p * total as f64 >= 10.0 {
            obs.push(o);
            probs.push(p);
        } else {
            rest_o += o;
            rest_p += p;
        }
    }
    assert!(sim.keys().all(|x| exact.contains_key(x)), "a state the exact law excludes");
    if rest_p * total as f64 >= 10.0 {
        obs.push(rest_o);
        probs.push(rest_p);
    }
    let (stat, df) = chi2_gof(&obs, &probs);
    (stat, chi2_critical(df))
}

/// The full-state law of Two-Choice and of (1, 1)-Memory under two-class sampling at n = 3
/// (one heavy bin, factor 4: probabilities 2/3, 1/6, 1/6), m = 4 balls: 15 load vectors,
/// 40 000 seeded runs each against the exact law by recursion (α = 0.001). Wrong variants,
/// same runs and test: uniform sampling, and factor 3 instead of 4 (heavy bin 3/5 instead of
/// 2/3), both rejected (statistics in the hundreds to thousands against critical values
/// near 30).
#[test]
fn exact_state_law_of_two_choice_and_memory_under_two_class_sampling() {
    let (n, m, runs) = (3u64, 4u32, 40_000u64);
    let law = |factor: f64| Sampling::TwoClass { fraction: 1.0 / 3.0, factor };
    let p = three_bin_law(4.0);
    let cases = [
        (ProcessSpec::DChoice { d: 2 }, two_choice_exact(&p, m)),
        (ProcessSpec::Memory { d: 1, k: 1 }, memory_exact(&p, m)),
    ];
    for (k, (process, exact)) in cases.into_iter().enumerate() {
        let total: f64 = exact.values().sum();
        assert!((total - 1.0).abs() < 1e-12);
        let spec = RunSpec::new(process.clone(), n, u64::from(m)).sampling(law(4.0));
        let (stat, crit) = against_exact(&simulated_states(&spec, runs, 10 + k as u64), &exact);
        assert!(stat < crit, "{process:?}: chi2 = {stat:.1}, critical {crit:.1}");
        eprintln!("{process:?}: chi2 = {stat:.1} (critical {crit:.1})");

        for (wrong, seed) in [(Sampling::Uniform, 20u64), (law(3.0), 30)] {
            let spec = RunSpec::new(process.clone(), n, u64::from(m)).sampling(wrong.clone());
            let (stat, crit) =
                against_exact(&simulated_states(&spec, runs, seed + k as u64), &exact);
            assert!(stat > crit, "{process:?} with {wrong:?} not rejected: {stat:.1} <= {crit:.1}");
            eprintln!("{process:?} with {wrong:?}: chi2 = {stat:.1} (critical {crit:.1})");
        }
    }
}

/// The kernels draw uniform bins themselves, so a biased run must not enter them: the fast
/// entry point gives the values of the straightforward loop (with uniform sampling they agree
/// too, which `tests/kernels.rs` checks draw for draw). Likewise exponential batches large
/// enough for the sorted weighted path go ball by ball under a biased law.
#[test]
fn biased_runs_skip_the_kernels_and_the_sorted_batches() {
    let s = Sampling::TwoClass { fraction: 0.5, factor: 4.0 };
    let specs = [
        RunSpec::new(ProcessSpec::DChoice { d: 2 }, 200, 20_000),
        RunSpec::new(ProcessSpec::DChoice { d: 3 }, 200, 20_000),
        RunSpec::new(ProcessSpec::OnePlusBeta { beta: 0.5 }, 200, 20_000),
        RunSpec::new(ProcessSpec::GMyopic { g: 1.0 }, 200, 20_000),
        RunSpec::new(ProcessSpec::DChoice { d: 2 }, 100, 100_000)
            .batched(50_000)
            .weights(Weights::Exp { mean: 1.0 }),
    ];
    for spec in specs {
        let spec = spec.sampling(s.clone());
        let fast = simulate(&spec, &mut sim_rng(3)).unwrap();
        let slow = simulate_ball_by_ball(&spec, &mut sim_rng(3), &mut ()).unwrap();
        assert_eq!(fast, slow, "{:?}", spec.process);
        // And the law matters: the uniform run of the seed is another run.
        let uniform = simulate(&spec.clone().sampling(Sampling::Uniform), &mut sim_rng(3)).unwrap();
        assert_ne!(fast, uniform, "{:?}", spec.process);
    }
}

#[test]
fn the_level_engine_refuses_and_auto_resolves_to_bins() {
    let s = Sampling::Zipf { s: 1.0 };
    // Sequential with large n, and large batches: `auto` would pick levels when uniform.
    for spec in [
        RunSpec::new(ProcessSpec::DChoice { d: 2 }, 1 << 20, 1000),
        RunSpec::new(ProcessSpec::OneChoice, 1000, 1 << 20).batched(1 << 19),
    ] {
        assert_eq!(resolve_engine(&spec).unwrap(), Engine::Levels);
        let biased = spec.clone().sampling(s.clone());
        assert_eq!(resolve_engine(&biased).unwrap(), Engine::Bins);
        let e = resolve_engine(&biased.clone().engine(Engine::Levels)).unwrap_err();
        assert!(e.to_string().contains("uniform bin sampling"), "{e}");
        let e = check_run(&biased.engine(Engine::Levels)).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("engine"));
    }
}

#[test]
fn uniform_only_processes_are_refused_and_degenerate_laws_warned() {
    let s = Sampling::TwoClass { fraction: 0.5, factor: 4.0 };
    for process in [ProcessSpec::AlwaysGoLeft { d: 2 }, ProcessSpec::Equalize { d: 2 }] {
        let spec = RunSpec::new(process.clone(), 100, 1000).sampling(s.clone());
        let e = check_run(&spec).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("sampling"), "{e}");
        assert!(e.message.contains("supports uniform sampling only"), "{e}");
        // The core refuses it too, for callers that skip the registry's check.
        assert!(simulate(&spec, &mut sim_rng(1)).is_err(), "{process:?}");
    }
    // Every other process takes it, in the bin engine, with its supported settings.
    for def in registry::PROCESSES {
        let spec = RunSpec::new(def.example(), 50, 500).sampling(s.clone());
        assert_eq!(check_run(&spec).is_ok(), def.settings.biased, "{}", def.name);
        if def.settings.biased {
            simulate(&spec, &mut sim_rng(1)).unwrap();
        }
    }
    // The delay setting runs biased too.
    let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 100, 10_000).sampling(s.clone());
    let delayed = RunSpec {
        setting: ballast_core::Setting::Delay { tau: 50, mode: ballast_core::DelayMode::Random },
        ..spec
    };
    assert!(check_run(&delayed).unwrap().is_empty());
    assert!(simulate(&delayed, &mut sim_rng(2)).unwrap().final_gap > 10.0);
    // Laws that are uniform in effect: legal, with a warning.
    for degenerate in [
        Sampling::TwoClass { fraction: 0.5, factor: 1.0 },
        Sampling::TwoClass { fraction: 0.001, factor: 4.0 },
        Sampling::Zipf { s: 0.0 },
        Sampling::Explicit(vec![2.0; 100].into()),
    ] {
        let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 100, 1000).sampling(degenerate);
        let w = check_run(&spec).unwrap();
        assert!(w.len() == 1 && w[0].contains("degenerate"), "{w:?}");
    }
}

#[test]
fn invalid_laws_are_refused_with_the_field() {
    let bad = [
        (Sampling::TwoClass { fraction: 1.5, factor: 4.0 }, "sampling.fraction"),
        (Sampling::TwoClass { fraction: 0.5, factor: 0.0 }, "sampling.factor"),
        (Sampling::TwoClass { fraction: 0.5, factor: f64::INFINITY }, "sampling.factor"),
        (Sampling::Zipf { s: -1.0 }, "sampling.s"),
        (Sampling::Zipf { s: 600.0 }, "sampling.s"),
        (Sampling::Explicit(vec![1.0; 3].into()), "sampling"),
        (Sampling::Explicit(vec![1.0, 0.0, 1.0, 1.0].into()), "sampling"),
        (Sampling::Explicit(vec![1.0, f64::NAN, 1.0, 1.0].into()), "sampling"),
        (Sampling::Explicit(vec![1e308, 1e308, 1.0, 1.0].into()), "sampling"),
    ];
    for (s, field) in bad {
        let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 4, 10).sampling(s.clone());
        match spec.validate() {
            Err(ballast_core::Error::Invalid { field: f, .. }) => assert_eq!(f, field, "{s:?}"),
            other => panic!("{s:?}: {other:?}"),
        }
    }
}

#[test]
fn the_registry_declares_the_laws() {
    let names: Vec<&str> = registry::SAMPLINGS.iter().map(|s| s.name).collect();
    assert_eq!(names, ["uniform", "two_class", "zipf", "file"]);
    let def = find_sampling("two_class").unwrap();
    let s = def
        .build(&[("fraction", ParamValue::Num(0.5)), ("factor", ParamValue::Num(4.0))], None)
        .unwrap();
    assert_eq!(s, Sampling::TwoClass { fraction: 0.5, factor: 4.0 });
    let e = def.build(&[("fraction", ParamValue::Num(0.5))], None).unwrap_err();
    assert!(e.message.contains("needs parameter `factor`"), "{e}");
    let e = def
        .build(&[("fraction", ParamValue::Num(0.5)), ("factor", ParamValue::Num(0.0))], None)
        .unwrap_err();
    assert_eq!(e.param.as_deref(), Some("factor"), "{e}");
    let e = find_sampling("zipff").unwrap_err();
    assert!(e.message.contains("did you mean `zipf`"), "{e}");
    assert_eq!(find_sampling("zipf").unwrap().build(&[], None).unwrap(), Sampling::Zipf { s: 1.0 });
    let file = find_sampling("file").unwrap();
    assert_eq!(file.file, Some("path"));
    assert!(file.build(&[], None).is_err());
    assert_eq!(
        file.build(&[], Some(vec![1.0, 2.0])).unwrap(),
        Sampling::Explicit(vec![1.0, 2.0].into())
    );
}

#[test]
fn weight_files_parse_with_comments_and_name_the_line() {
    let w = parse_weights("# weights\n1\n\n2.5  # the second\n  3e0\n").unwrap();
    assert_eq!(w, [1.0, 2.5, 3.0]);
    let e = parse_weights("1\n  secret # c\n").unwrap_err();
    assert_eq!((e.line, e.column), (2, 3));
    assert!(!e.message.contains("secret"), "{e}");
    assert_eq!(parse_weights("1\n-2\n").unwrap_err().line, 2);
    let e = parse_weights("1\n2\n1e999\n").unwrap_err();
    assert_eq!(e.line, 3);
    assert!(!e.message.contains("1e999"), "{e}");
    assert!(parse_weights("# nothing\n").is_err());
}

/// The significance level the tests above use.
#[test]
fn alpha_is_the_shared_level() {
    assert_eq!(ALPHA, 0.001);
}
