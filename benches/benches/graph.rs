//! Criterion group `graph`: graphical Two-Choice on edges (cycle, 2-dimensional torus,
//! hypercube, random 3-regular; n ≈ 10⁴ and 10⁶, m = 10 n, throughput in balls) and the
//! wall time of the exact off-line optimum (m = n, d = 2; n = 10⁵ and 10⁶, throughput in
//! balls).
//!
//! `cargo bench -p ballast-benches --bench graph` (about two minutes on 2 cores). ns per
//! ball = 1e9 / `thrpt`. Graphs and choices are built once, outside the timed loop; an
//! iteration is a whole run (allocating its load array) or one `offline_optimum` call.
//! The hypercube sizes are the nearest powers of two (2¹³ and 2²⁰).

use std::hint::black_box;
use std::time::Duration;

use ballast_core::{derive_seed, sim_rng, ProcessSpec, RunSpec};
use ballast_graph::offline::{offline_optimum, Choices};
use ballast_graph::{GraphKind, Topology};
use criterion::{criterion_main, Criterion, SamplingMode, Throughput};

fn topology(kind: &str, n: usize) -> Topology {
    let kind: GraphKind = kind.parse().expect("known kind");
    kind.build(Some(n), &mut sim_rng(derive_seed(1, &[n as u64]))).expect("valid graph")
}

fn graph(c: &mut Criterion) {
    let mut group = c.benchmark_group("graph");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    let cases: [(&str, &str, [usize; 2]); 4] = [
        ("cycle", "cycle", [10_000, 1_000_000]),
        ("torus2", "torus:2", [10_000, 1_000_000]),
        ("hypercube", "hypercube", [1 << 13, 1 << 20]),
        ("regular3", "regular:3", [10_000, 1_000_000]),
    ];
    for (name, kind, sizes) in cases {
        for n in sizes {
            let g = topology(kind, n);
            let m = 10 * n as u64;
            let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, n as u64, m);
            group.throughput(Throughput::Elements(m));
            let mut seed = 0u64;
            group.bench_function(format!("two_choice/{name}/n={n}"), |b| {
                b.iter(|| {
                    seed += 1;
                    let out = g.simulate(black_box(&spec), &mut sim_rng(seed)).expect("valid");
                    black_box(out.final_gap)
                });
            });
        }
    }
    for n in [100_000usize, 1_000_000] {
        let choices = Choices::sample(n, n, 2, &mut sim_rng(n as u64)).expect("valid");
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(format!("offline/d=2/m=n={n}"), |b| {
            b.iter(|| black_box(offline_optimum(black_box(&choices)).max_load));
        });
    }
    group.finish();
}

// `criterion_group!` generates an undocumented public function.
#[allow(missing_docs)]
mod benches {
    criterion::criterion_group!(benches, super::graph);
}
use benches::benches;
criterion_main!(benches);
