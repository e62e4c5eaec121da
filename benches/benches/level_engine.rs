//! Criterion group `level_scale`: the level engine at scale (Two-Choice, n = 10⁴, 10⁶, 10⁸;
//! sequential, and batched with b = n, b = 10n (n ≤ 10⁶) and b = 50n), with bin-engine cases
//! where the bin engine finishes in reasonable time. Throughput is in balls.
//!
//! `cargo bench -p ballast-benches --bench level_engine` (about a minute on 2 cores).
//! ns per ball = 1e9 / thrpt (criterion prints elements/s); ns per batch = ns per ball × b.
//! The engines' own groups (`bin_engine`, `level_engine` in `engines.rs`) time the smaller
//! shared cases; this group shows what only the level engine can do: memory and per-batch
//! cost independent of n, so n = 10⁸ with m = 100n runs in milliseconds. The sequential
//! level cases at n = 10⁶ and 10⁸ go in chunks (`level/chunked.rs`, from n = 2¹⁷ on); the
//! ball loop against chunks is timed in `level_chunked.rs`.

use std::hint::black_box;
use std::time::Duration;

use ballast_core::{simulate_seeded, Engine, ProcessSpec, RunSpec};
use criterion::{criterion_main, Criterion, SamplingMode, Throughput};

/// `10^e` as a label.
fn pow10(e: u32) -> u64 {
    10u64.pow(e)
}

/// (id, spec) pairs of the group.
fn cases() -> Vec<(String, RunSpec)> {
    let two = ProcessSpec::DChoice { d: 2 };
    let mut v = Vec::new();
    for e in [4u32, 6, 8] {
        let n = pow10(e);
        // Sequential: 10⁷ balls whatever n (the cost per ball is what is measured).
        let seq = RunSpec::new(two.clone(), n, 10_000_000).engine(Engine::Levels);
        v.push((format!("levels/two_choice/n=1e{e}/seq"), seq));
        // Batched: b = n with m = 100n; b = 50n with 20 batches (m = 1000n).
        let b1 = RunSpec::new(two.clone(), n, 100 * n).batched(n).engine(Engine::Levels);
        v.push((format!("levels/two_choice/n=1e{e}/batch=n"), b1));
        if e < 8 {
            // b = 10n with 20 batches, for the per-batch cost against b (n, 10n, 50n).
            let b10 = RunSpec::new(two.clone(), n, 200 * n).batched(10 * n).engine(Engine::Levels);
            v.push((format!("levels/two_choice/n=1e{e}/batch=10n"), b10));
        }
        let b50 = RunSpec::new(two.clone(), n, 1000 * n).batched(50 * n).engine(Engine::Levels);
        v.push((format!("levels/two_choice/n=1e{e}/batch=50n"), b50));
    }
    // The bin engine on the cases it can do in well under a second per iteration.
    for e in [4u32, 6] {
        let n = pow10(e);
        let seq = RunSpec::new(two.clone(), n, 10_000_000).engine(Engine::Bins);
        v.push((format!("bins/two_choice/n=1e{e}/seq"), seq));
        let b1 = RunSpec::new(two.clone(), n, 10_000_000).batched(n).engine(Engine::Bins);
        v.push((format!("bins/two_choice/n=1e{e}/batch=n"), b1));
    }
    let n = pow10(4);
    let b50 = RunSpec::new(two, n, 1000 * n).batched(50 * n).engine(Engine::Bins);
    v.push(("bins/two_choice/n=1e4/batch=50n".to_string(), b50));
    v
}

fn level_scale(c: &mut Criterion) {
    let mut group = c.benchmark_group("level_scale");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    for (id, spec) in cases() {
        group.throughput(Throughput::Elements(spec.m));
        let mut seed = 0u64;
        group.bench_function(id.as_str(), |b| {
            b.iter(|| {
                seed += 1;
                let out = simulate_seeded(black_box(&spec), seed).expect("valid spec");
                black_box(out.final_gap)
            });
        });
    }
    group.finish();
}

// `criterion_group!` generates an undocumented public function.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::level_scale);
}
use group::benches;
criterion_main!(benches);
