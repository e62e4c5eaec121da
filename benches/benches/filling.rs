//! Criterion group `filling`: ns per ball of every Filling and memory process at n = 10⁴
//! (sequential, bin engine), with Two-Choice for comparison ([`filling_cases`]).
//!
//! `cargo bench -p ballast-benches --bench filling` (about a minute on 2 cores), or
//! `cargo xtask bench --filling`. Throughput is in balls: ns/ball = 1e9 / thrpt (criterion
//! prints `thrpt` in elements/s), i.e. 1000 / (Melem/s).

use std::hint::black_box;
use std::time::Duration;

use ballast_benches::filling_cases;
use ballast_core::simulate_seeded;
use criterion::{criterion_main, Criterion, SamplingMode, Throughput};

fn filling(c: &mut Criterion) {
    let mut group = c.benchmark_group("filling");
    // Iterations are long (30–300 ms): flat sampling, few samples.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    for case in filling_cases() {
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
mod groups {
    criterion::criterion_group!(benches, super::filling);
}
use groups::benches;

criterion_main!(benches);
