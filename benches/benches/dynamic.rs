//! Criterion group `dynamic`: rounds of RBB (the dense load vector of `Rbb::new`, and the
//! non-empty list as `rbb_list`) and leaky bins (ballast-dynamic) at n = 10⁴ and 10⁶, throughput in ball-rounds (one ball released and re-thrown, or one arrival with its
//! share of the departures).
//!
//! `cargo bench -p ballast-benches --bench dynamic`. Each process is warmed up for 200 rounds
//! once, then every iteration runs about 10⁶ ball-rounds; the throughput is the stationary
//! expected number of balls moved per round (RBB: `n·(1 − (√(k² + 1) − k))` released balls;
//! leaky bins: `λn` arrivals), so ns per ball-round = 1e9 / thrpt (within a few per cent:
//! the per-round count fluctuates, and RBB with k = 25 is still close to its uniform start).

use std::hint::black_box;
use std::time::Duration;

use ballast_core::{sim_rng, SimRng};
use ballast_dynamic::theory::rbb_empty_fraction;
use ballast_dynamic::{
    DynLoads, LeakyBins, LeakyConfig, Rbb, RbbConfig, RethrowView, RoundProcess,
};
use criterion::{criterion_main, Criterion, SamplingMode, Throughput};

/// Warms `p` up, then times `rounds` rounds per iteration.
fn bench_rounds<P: RoundProcess>(
    c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    id: &str,
    mut p: P,
    warm_up_rounds: u64,
    rounds: u64,
    balls_per_round: f64,
) {
    let mut rng: SimRng = sim_rng(1);
    for _ in 0..warm_up_rounds {
        p.round(&mut rng);
    }
    c.throughput(Throughput::Elements((balls_per_round * rounds as f64) as u64));
    c.bench_function(id, |b| {
        b.iter(|| {
            let mut moved = 0;
            for _ in 0..rounds {
                moved += p.round(&mut rng).moved;
            }
            black_box(moved)
        });
    });
}

fn dynamic(c: &mut Criterion) {
    let mut g = c.benchmark_group("dynamic");
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(3));
    for n in [10_000usize, 1_000_000] {
        // About 10⁶ ball-rounds per iteration.
        let rounds = (1_000_000 / n as u64).max(1);
        for k in [1u64, 25] {
            let p = Rbb::new(&RbbConfig::one_choice(n, k * n as u64)).expect("valid");
            let balls = n as f64 * (1.0 - rbb_empty_fraction(k as f64));
            bench_rounds(&mut g, &format!("rbb/n={n}/k={k}"), p, 200, rounds, balls);
            // The same process on the list of non-empty bins (what `Rbb::new` uses when
            // m < n/2): the dense load vector's gain.
            let list =
                Rbb::from_state(DynLoads::uniform(n, k * n as u64), 1, RethrowView::AfterReleases);
            bench_rounds(&mut g, &format!("rbb_list/n={n}/k={k}"), list, 200, rounds, balls);
        }
        for d in [1u32, 2] {
            let lambda = 0.9;
            let p = LeakyBins::new(&LeakyConfig::new(n, lambda, d)).expect("valid");
            let id = format!("leaky/n={n}/lambda={lambda}/d={d}");
            bench_rounds(&mut g, &id, p, 200, rounds, lambda * n as f64);
        }
    }
    g.finish();
}

// `criterion_group!` generates an undocumented public function.
#[allow(missing_docs)]
mod groups {
    criterion::criterion_group!(benches, super::dynamic);
}
use groups::benches;

criterion_main!(benches);
