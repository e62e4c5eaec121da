//! Criterion group `potentials`: the cost of tracking all four potentials on every ball.
//!
//! `cargo bench -p ballast-benches --bench potentials` (about a minute on 2 cores).
//! Two-Choice, n = 10⁴, m = 10⁶ on the bin engine, sequential and batched with b = n, each
//! without an observer (`none`) and with [`Potentials`] tracking
//! `exponential:alpha=0.1`, `hyperbolic:alpha=0.05`, `quadratic` and `absolute` (`all4`).
//! The target is `all4 ≤ 1.5 × none` in ns per ball (= 1e9 / the `thrpt` criterion prints).
//!
//! After the criterion cases the bench prints an `overhead` table with the ns per ball of each
//! `none`/`all4` pair and their ratio, twice: from criterion's own timed iterations (mean over
//! every iteration it ran, warm-up included) and from an interleaved measurement (the pair run
//! alternately, [`INTERLEAVED_RUNS`] times each, minimum ns per ball), which is the robust one
//! on a shared machine where other work comes and goes between criterion's cases.
//!
//! Two cases have no target and are reported for honesty: `exp1` repeats the sequential
//! pair with Exp(1) weights (the exponential sums cost transcendental calls per ball, the
//! absolute potential a bucket queue), and `all4_drift_every_ball` also *reads* all four
//! values after every ball into [`Drift`](ballast_potential::Drift) statistics (what the
//! per-step drift measurement costs; unit-mode exponential reads are O(levels)).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use ballast_core::{sim_rng, simulate_observed, Engine, ProcessSpec, RunSpec, Weights};
use ballast_potential::{PotentialSpec, Potentials, Recorder, Sampling};
use criterion::{criterion_main, Criterion, SamplingMode, Throughput};

/// The four tracked potentials.
const ALL4: [&str; 4] = ["exponential:alpha=0.1", "hyperbolic:alpha=0.05", "quadratic", "absolute"];

/// Runs of each side in the interleaved overhead measurement.
const INTERLEAVED_RUNS: u64 = 31;

/// The target for `all4 / none`.
const TARGET_RATIO: f64 = 1.5;

/// Total time and iterations criterion ran per benchmark id (for the overhead table).
type Timings = RefCell<BTreeMap<String, (Duration, u64)>>;

/// One run of `spec` without an observer.
fn run_none(spec: &RunSpec, seed: u64) -> f64 {
    let out = simulate_observed(black_box(spec), &mut sim_rng(seed), &mut ()).expect("valid spec");
    black_box(out.final_gap)
}

/// One run of `spec` with all four potentials tracked on every ball.
fn run_all4(spec: &RunSpec, specs: &[PotentialSpec], seed: u64) -> f64 {
    let mut pot = Potentials::new(specs).expect("valid potentials");
    let out = simulate_observed(black_box(spec), &mut sim_rng(seed), &mut pot).expect("valid spec");
    black_box(out.final_gap + pot.value(1))
}

/// Times `iters` calls of `f`, adding the total to `timings[id]`.
fn timed(timings: &Timings, id: &str, iters: u64, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        f();
    }
    let took = start.elapsed();
    let mut t = timings.borrow_mut();
    let e = t.entry(id.to_owned()).or_default();
    e.0 += took;
    e.1 += iters;
    took
}

fn potentials(c: &mut Criterion) {
    let (n, m) = (10_000u64, 1_000_000u64);
    let base = RunSpec::new(ProcessSpec::DChoice { d: 2 }, n, m).engine(Engine::Bins);
    let cases = [
        ("two_choice/n=1e4/seq", base.clone(), true),
        ("two_choice/n=1e4/batch=n", base.clone().batched(n), true),
        ("two_choice_exp1/n=1e4/seq", base.weights(Weights::Exp { mean: 1.0 }), false),
    ];
    let specs = PotentialSpec::parse_all(ALL4).expect("valid potentials");
    let timings = Timings::default();
    let mut group = c.benchmark_group("potentials");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    group.throughput(Throughput::Elements(m));
    for (id, spec, _) in &cases {
        let mut seed = 0u64;
        let none = format!("{id}/none");
        group.bench_function(&none, |b| {
            b.iter_custom(|iters| {
                timed(&timings, &none, iters, || {
                    seed += 1;
                    run_none(spec, seed);
                })
            });
        });
        let all4 = format!("{id}/all4");
        group.bench_function(&all4, |b| {
            b.iter_custom(|iters| {
                timed(&timings, &all4, iters, || {
                    seed += 1;
                    run_all4(spec, &specs, seed);
                })
            });
        });
        if *id == "two_choice/n=1e4/seq" {
            group.bench_function(format!("{id}/all4_drift_every_ball"), |b| {
                b.iter(|| {
                    seed += 1;
                    let mut rec = Recorder::new(&specs, Sampling::Every(1))
                        .and_then(|r| r.with_drift(10))
                        .expect("valid recorder");
                    let out = simulate_observed(black_box(spec), &mut sim_rng(seed), &mut rec)
                        .expect("valid spec");
                    black_box((out.final_gap, rec.drift().map(|d| d.skipped())))
                });
            });
        }
    }
    group.finish();

    // The overhead table, only in a real `cargo bench` run (not `cargo test --benches`).
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let t = timings.borrow();
    let ns_per_ball = |id: &str| t.get(id).map(|&(d, it)| d.as_secs_f64() * 1e9 / (it * m) as f64);
    println!("\npotentials overhead: ns per ball, all four potentials (all4) vs none");
    println!("{:<28} {:>10} {:>10} {:>7}  source", "case", "none", "all4", "ratio");
    for (id, spec, has_target) in &cases {
        let target =
            if *has_target { format!("(target <= {TARGET_RATIO})") } else { String::new() };
        if let (Some(none), Some(all4)) =
            (ns_per_ball(&format!("{id}/none")), ns_per_ball(&format!("{id}/all4")))
        {
            println!(
                "{id:<28} {none:>10.2} {all4:>10.2} {:>7.3}  criterion (mean of its iterations) {target}",
                all4 / none
            );
        }
        if !*has_target {
            continue;
        }
        // Interleaved: the two sides alternate, so load from other processes hits both alike.
        let (mut none, mut all4) = (f64::INFINITY, f64::INFINITY);
        for seed in 0..INTERLEAVED_RUNS {
            let start = Instant::now();
            run_none(spec, 1000 + seed);
            none = none.min(start.elapsed().as_secs_f64() * 1e9 / m as f64);
            let start = Instant::now();
            run_all4(spec, &specs, 1000 + seed);
            all4 = all4.min(start.elapsed().as_secs_f64() * 1e9 / m as f64);
        }
        println!(
            "{id:<28} {none:>10.2} {all4:>10.2} {:>7.3}  interleaved (min of {INTERLEAVED_RUNS} runs each) {target}",
            all4 / none
        );
    }
}

// `criterion_group!` generates an undocumented public function.
#[allow(missing_docs)]
mod groups {
    criterion::criterion_group!(benches, super::potentials);
}
use groups::benches;
criterion_main!(benches);
