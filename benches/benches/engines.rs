//! Criterion group `bin_engine`: whole runs of the bin engine, throughput in balls.
//!
//! `cargo bench -p ballast-benches` (a few minutes on 2 cores). ns per ball = the reported
//! time per iteration divided by the balls of the case (criterion prints it as
//! `thrpt` in elements/s: ns/ball = 1e9 / thrpt).

use std::hint::black_box;
use std::time::Duration;

use ballast_benches::bin_engine_cases;
use ballast_core::simulate_seeded;
use criterion::{criterion_main, Criterion, SamplingMode, Throughput};

fn bin_engine(c: &mut Criterion) {
    let mut group = c.benchmark_group("bin_engine");
    // Iterations are long (10–500 ms): flat sampling, few samples.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    for case in bin_engine_cases() {
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

// `criterion_group!` generates an undocumented public function.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::bin_engine);
}
use group::benches;
criterion_main!(benches);
