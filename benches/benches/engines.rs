//! Criterion groups `bin_engine`, `level_engine` and `weighted_batches`: whole runs,
//! throughput in balls.
//!
//! `weighted_batches` times batched Exp(1)-weighted Two-Choice (random ties) and Three-Choice
//! (positional ties) at n = 10³ and b/n ∈ {1, 4, 10, 50}, once ball by ball
//! (`simulate_ball_by_ball`) and once as the bin engine runs it (`auto`: a batch at a time
//! from b = 4n, `ballast_core::weighted`).
//!
//! `cargo bench -p ballast-benches` (a few minutes on 2 cores; one group:
//! `cargo bench -p ballast-benches -- bin_engine`). ns per ball = the time per iteration
//! divided by the balls of the case; criterion prints the throughput `thrpt` in elements/s,
//! so ns/ball = 1e9 / thrpt.

use std::hint::black_box;
use std::time::Duration;

use ballast_benches::{engine_cases, Case};
use ballast_core::{
    sim_rng, simulate_ball_by_ball, simulate_seeded, Engine, ProcessSpec, RunSpec, TieBreak,
    Weights,
};
use criterion::{criterion_main, Criterion, SamplingMode, Throughput};

/// A group for long iterations (10–500 ms): flat sampling, few samples.
fn long_iterations<'a>(
    c: &'a mut Criterion,
    name: &str,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    group
}

/// Times every case in one group.
fn group(c: &mut Criterion, name: &str, cases: Vec<Case>) {
    let mut group = long_iterations(c, name);
    for case in cases {
        group.throughput(Throughput::Elements(case.spec.m));
        let mut seed = 0u64;
        group.bench_function(case.id.as_str(), |b| {
            b.iter(|| {
                seed += 1;
                let out = simulate_seeded(black_box(&case.spec), seed).expect("valid spec");
                black_box(out.final_gap)
            });
        });
    }
    group.finish();
}

fn bin_engine(c: &mut Criterion) {
    group(c, "bin_engine", engine_cases(Engine::Bins));
}

fn level_engine(c: &mut Criterion) {
    group(c, "level_engine", engine_cases(Engine::Levels));
}

fn weighted_batches(c: &mut Criterion) {
    let mut group = long_iterations(c, "weighted_batches");
    let n = 1000;
    for (name, d, tie) in [("two", 2, TieBreak::Random), ("three_position", 3, TieBreak::Position)]
    {
        for k in [1u64, 4, 10, 50] {
            // 200 batches' worth of n·k balls would be long at k = 50: m = 200n balls.
            let spec = RunSpec::new(ProcessSpec::DChoice { d }, n, 200 * n)
                .batched(k * n)
                .tie_break(tie)
                .weights(Weights::Exp { mean: 1.0 });
            group.throughput(Throughput::Elements(spec.m));
            for by_ball in [true, false] {
                let method = if by_ball { "ball_by_ball" } else { "auto" };
                let mut seed = 0u64;
                group.bench_function(format!("{name}/b={k}n/{method}"), |b| {
                    b.iter(|| {
                        seed += 1;
                        let mut rng = sim_rng(seed);
                        let out = if by_ball {
                            simulate_ball_by_ball(black_box(&spec), &mut rng, &mut ())
                        } else {
                            ballast_core::simulate(black_box(&spec), &mut rng)
                        };
                        black_box(out.expect("valid spec").final_gap)
                    });
                });
            }
        }
    }
    group.finish();
}

// `criterion_group!` generates an undocumented public function.
#[allow(missing_docs)]
mod groups {
    criterion::criterion_group!(
        benches,
        super::bin_engine,
        super::level_engine,
        super::weighted_batches
    );
}
use groups::benches;

criterion_main!(benches);
