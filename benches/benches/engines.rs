//! Criterion groups `bin_engine` and `level_engine`: whole runs, throughput in balls.
//!
//! `cargo bench -p ballast-benches` (a few minutes on 2 cores; one group:
//! `cargo bench -p ballast-benches -- bin_engine`). ns per ball = the time per iteration
//! divided by the balls of the case; criterion prints the throughput `thrpt` in elements/s,
//! so ns/ball = 1e9 / thrpt.

use std::hint::black_box;
use std::time::Duration;

use ballast_benches::{engine_cases, Case};
use ballast_core::{simulate_seeded, Engine};
use criterion::{criterion_main, Criterion, SamplingMode, Throughput};

/// Times every case in one group.
fn group(c: &mut Criterion, name: &str, cases: Vec<Case>) {
    let mut group = c.benchmark_group(name);
    // Iterations are long (10–500 ms): flat sampling, few samples.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
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

// `criterion_group!` generates an undocumented public function.
#[allow(missing_docs)]
mod groups {
    criterion::criterion_group!(benches, super::bin_engine, super::level_engine);
}
use groups::benches;

criterion_main!(benches);
