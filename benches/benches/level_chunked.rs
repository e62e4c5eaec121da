//! Criterion groups for the chunk step of sequential d-Choice on the level engine
//! (`level/chunked.rs`, `docs/chunked.md#measurements`). Throughput is in balls:
//! ns per ball = 1e9 / thrpt (criterion prints elements/s).
//!
//! - `level_chunked`: Two-Choice and Three-Choice from empty bins at n = 10⁴ … 10⁷, m = 100n
//!   up to n = 10⁵ and m = 10n above (the histogram is in its heavily loaded shape for most
//!   balls, and a ball-by-ball iteration stays under a second), ball by
//!   ball (`simulate_ball_by_ball`, the loop of `level/sequential.rs`) against chunks of the
//!   automatic size (`chunk_size(n)`, forced also below `CHUNK_MIN_N` to find the break-even).
//! - `level_chunked_kappa`: Two-Choice, chunks of s = κ√n for κ = 0.5, 1, 2, 4, at n = 10⁵,
//!   10⁶, 10⁷ (the choice of `CHUNK_KAPPA`).
//! - `level_chunked_threshold`: ball by ball against chunks near the break-even, m = 100n:
//!   Two-Choice at n = 2¹⁶ … 2¹⁹, Three-Choice at n = 2¹¹ … 2¹⁴ (the choice of
//!   `CHUNK_MIN_N` and `CHUNK_MIN_N_MANY`).
//! - `level_chunked_mixture`: the same for (1+β) with β = 0.5 and Quantile with δ = 0.5 at
//!   n = 2¹², 2¹⁴ … 2²⁰ (the choice of `CHUNK_MIN_N_ONE_PLUS_BETA` and `CHUNK_MIN_N_QUANTILE`).
//!
//! `cargo bench -p ballast-benches --bench level_chunked` (a few minutes on 2 cores);
//! `-- level_chunked/`, `-- kappa`, `-- threshold` or `-- mixture` for one group.

use std::hint::black_box;
use std::time::Duration;

use ballast_core::level::chunked::chunk_size;
use ballast_core::level::{simulate_levels_chunked, Chunking};
use ballast_core::{sim_rng, simulate_ball_by_ball, Engine, ProcessSpec, RunSpec};
use criterion::{criterion_main, BenchmarkGroup, Criterion, SamplingMode, Throughput};

/// Balls per run for `n` bins (module docs).
fn balls(n: u64) -> u64 {
    if n <= 100_000 {
        100 * n
    } else {
        10 * n
    }
}

fn run(
    group: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    id: &str,
    spec: &RunSpec,
    chunking: Chunking,
) {
    group.throughput(Throughput::Elements(spec.m));
    let mut seed = 0u64;
    group.bench_function(id, |b| {
        b.iter(|| {
            seed += 1;
            let rng = &mut sim_rng(seed);
            let out = match chunking {
                Chunking::Off => simulate_ball_by_ball(black_box(spec), rng, &mut ()),
                c => simulate_levels_chunked(black_box(spec), rng, &mut (), c),
            }
            .expect("valid spec");
            black_box(out.max_load)
        });
    });
}

fn level_chunked(c: &mut Criterion) {
    let mut group = c.benchmark_group("level_chunked");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    for d in [2u32, 3] {
        for e in [4u32, 5, 6, 7] {
            let n = 10u64.pow(e);
            let spec = RunSpec::new(ProcessSpec::DChoice { d }, n, balls(n)).engine(Engine::Levels);
            let s = chunk_size(n);
            run(&mut group, &format!("d={d}/n=1e{e}/ball_by_ball"), &spec, Chunking::Off);
            run(
                &mut group,
                &format!("d={d}/n=1e{e}/chunked"),
                &spec,
                Chunking::Fixed { s, flaw: None },
            );
        }
    }
    group.finish();
}

fn level_chunked_kappa(c: &mut Criterion) {
    let mut group = c.benchmark_group("level_chunked_kappa");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    for e in [5u32, 6, 7] {
        let n = 10u64.pow(e);
        let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, n, balls(n)).engine(Engine::Levels);
        for kappa in [0.5f64, 1.0, 2.0, 4.0] {
            let s = (kappa * (n as f64).sqrt()).ceil() as u64;
            run(
                &mut group,
                &format!("n=1e{e}/kappa={kappa}"),
                &spec,
                Chunking::Fixed { s, flaw: None },
            );
        }
    }
    group.finish();
}

fn level_chunked_threshold(c: &mut Criterion) {
    let mut group = c.benchmark_group("level_chunked_threshold");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    for (d, exps) in [(2u32, [16u32, 17, 18, 19]), (3, [11, 12, 13, 14])] {
        for e in exps {
            let n = 1u64 << e;
            let spec = RunSpec::new(ProcessSpec::DChoice { d }, n, 100 * n).engine(Engine::Levels);
            let s = chunk_size(n);
            run(&mut group, &format!("d={d}/n=2^{e}/ball_by_ball"), &spec, Chunking::Off);
            let fixed = Chunking::Fixed { s, flaw: None };
            run(&mut group, &format!("d={d}/n=2^{e}/chunked"), &spec, fixed);
        }
    }
    group.finish();
}

fn level_chunked_mixture(c: &mut Criterion) {
    let mut group = c.benchmark_group("level_chunked_mixture");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    let processes = [
        ("one_plus_beta", ProcessSpec::OnePlusBeta { beta: 0.5 }),
        ("quantile", ProcessSpec::Quantile { delta: 0.5 }),
    ];
    for (name, p) in processes {
        for e in [12u32, 14, 15, 16, 17, 18, 19, 20] {
            let n = 1u64 << e;
            let spec = RunSpec::new(p.clone(), n, balls(n)).engine(Engine::Levels);
            let s = chunk_size(n);
            run(&mut group, &format!("{name}/n=2^{e}/ball_by_ball"), &spec, Chunking::Off);
            let fixed = Chunking::Fixed { s, flaw: None };
            run(&mut group, &format!("{name}/n=2^{e}/chunked"), &spec, fixed);
        }
    }
    group.finish();
}

// `criterion_group!` generates an undocumented public function.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(
        benches,
        super::level_chunked,
        super::level_chunked_kappa,
        super::level_chunked_threshold,
        super::level_chunked_mixture
    );
}
use group::benches;
criterion_main!(benches);
