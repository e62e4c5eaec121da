//! Criterion group `potentials`: the cost of tracking all four potentials on every ball.
//!
//! `cargo bench -p ballast-benches --bench potentials` (about a minute on 2 cores).
//! Two-Choice, n = 10⁴, m = 10⁶ on the bin engine, sequential and batched with b = n, each
//! without an observer (`none`) and with [`Potentials`] tracking
//! `exponential:alpha=0.1`, `hyperbolic:alpha=0.05`, `quadratic` and `absolute` (`all4`).
//! The target is `all4 ≤ 1.5 × none` in ns per ball (= 1e9 / the `thrpt` criterion prints).
//! Two cases have no target and are reported for honesty: `exp1` repeats the sequential
//! pair with Exp(1) weights (the exponential sums cost transcendental calls per ball, the
//! absolute potential a bucket queue), and `all4_drift_every_ball` also *reads* all four
//! values after every ball into [`Drift`](ballast_potential::Drift) statistics (what the
//! per-step drift measurement costs; unit-mode exponential reads are O(levels)).

use std::hint::black_box;
use std::time::Duration;

use ballast_core::{sim_rng, simulate_observed, Engine, ProcessSpec, RunSpec, Weights};
use ballast_potential::{PotentialSpec, Potentials, Recorder, Sampling};
use criterion::{criterion_main, Criterion, SamplingMode, Throughput};

/// The four tracked potentials.
const ALL4: [&str; 4] = ["exponential:alpha=0.1", "hyperbolic:alpha=0.05", "quadratic", "absolute"];

fn potentials(c: &mut Criterion) {
    let (n, m) = (10_000u64, 1_000_000u64);
    let base = RunSpec::new(ProcessSpec::DChoice { d: 2 }, n, m).engine(Engine::Bins);
    let cases = [
        ("two_choice/n=1e4/seq", base.clone()),
        ("two_choice/n=1e4/batch=n", base.clone().batched(n)),
        ("two_choice_exp1/n=1e4/seq", base.weights(Weights::Exp { mean: 1.0 })),
    ];
    let specs = PotentialSpec::parse_all(ALL4).expect("valid potentials");
    let mut group = c.benchmark_group("potentials");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    group.throughput(Throughput::Elements(m));
    for (id, spec) in &cases {
        let mut seed = 0u64;
        group.bench_function(format!("{id}/none"), |b| {
            b.iter(|| {
                seed += 1;
                let out = simulate_observed(black_box(spec), &mut sim_rng(seed), &mut ())
                    .expect("valid spec");
                black_box(out.final_gap)
            });
        });
        group.bench_function(format!("{id}/all4"), |b| {
            b.iter(|| {
                seed += 1;
                let mut pot = Potentials::new(&specs).expect("valid potentials");
                let out = simulate_observed(black_box(spec), &mut sim_rng(seed), &mut pot)
                    .expect("valid spec");
                black_box((out.final_gap, pot.value(1)))
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
}

// `criterion_group!` generates an undocumented public function.
#[allow(missing_docs)]
mod groups {
    criterion::criterion_group!(benches, super::potentials);
}
use groups::benches;
criterion_main!(benches);
