//! Value-stability: the first choices of every process for a fixed seed, pinned as literals.
//!
//! A change to any of these arrays changes published results: it is a value-breaking change
//! and must be recorded in CHANGELOG.md ("Value-breaking changes").

use ballast_core::loads::{LoadState, UnitLoads};
use ballast_core::process::{
    Accept, Ctx, DChoice, MixedQuantile, Noisy, OneChoice, OnePlusBeta, Ranks, Rule, Thinning,
    TwoChoice,
};
use ballast_core::{sim_rng, simulate_seeded, ProcessSpec, RunSpec, TieBreak, Weights};

/// The bins of the first 12 balls of a sequential run with n = 10 and seed 2024.
fn first_choices<P: Rule>(mut rule: P) -> Vec<usize> {
    let n = 10;
    let mut s = UnitLoads::new(n, true);
    let mut rng = sim_rng(2024);
    let mut ctx = Ctx::new(n);
    let ranks = if rule.uses_ranks() {
        Ranks::Live { k: (rule.heavy_fraction() * n as f64).ceil() as u64 }
    } else {
        Ranks::Unused
    };
    (0..12)
        .map(|_| {
            let i = rule.place(&s, &ranks, &mut rng, &mut ctx).bin;
            s.add(i, ());
            i
        })
        .collect()
}

#[test]
fn first_choices_are_pinned() {
    let got = [
        first_choices(OneChoice),
        first_choices(TwoChoice { tie: TieBreak::Random }),
        first_choices(TwoChoice { tie: TieBreak::Position }),
        first_choices(DChoice { d: 3, tie: TieBreak::Random }),
        first_choices(OnePlusBeta { beta: 0.5, tie: TieBreak::Random }),
        first_choices(MixedQuantile { delta: 0.5, eta: 0.5 }),
        first_choices(Thinning { accept: Accept::AtMost(0.0) }),
        first_choices(Thinning { accept: Accept::BelowAverage { strict: true } }),
        first_choices(Noisy::GBounded { g: 1.0 }),
        first_choices(Noisy::GMyopic { g: 1.0 }),
        first_choices(Noisy::SigmaNoisyLoad { sigma: 1.0, truncate: true }),
    ];
    let pinned: Vec<Vec<usize>> = PINNED.iter().map(|a| a.to_vec()).collect();
    assert_eq!(got.to_vec(), pinned, "{got:?}");
}

const PINNED: [[usize; 12]; 11] = [
    [7, 5, 2, 3, 6, 2, 7, 7, 8, 9, 3, 1],
    [5, 6, 7, 8, 1, 4, 0, 0, 3, 2, 8, 7],
    [7, 3, 6, 7, 9, 1, 8, 0, 8, 6, 2, 8],
    [5, 2, 4, 3, 7, 0, 1, 2, 6, 3, 8, 9],
    [2, 7, 8, 4, 0, 3, 2, 0, 2, 6, 4, 3],
    [2, 3, 3, 8, 8, 7, 1, 5, 6, 4, 1, 0],
    // Two-thinning: both samples of a ball from one word since value version 11.
    [7, 2, 6, 7, 8, 3, 4, 1, 0, 3, 3, 7],
    [5, 2, 6, 7, 8, 3, 4, 1, 0, 3, 3, 8],
    [5, 3, 2, 7, 9, 3, 4, 0, 0, 6, 3, 7],
    [7, 2, 7, 9, 3, 8, 0, 8, 3, 2, 8, 5],
    [7, 7, 8, 6, 5, 2, 4, 1, 3, 4, 3, 4],
];

#[test]
fn whole_runs_are_pinned() {
    // Gaps of complete runs exercise the engines (sequential, batched, weighted).
    let specs = [
        RunSpec::new(ProcessSpec::DChoice { d: 2 }, 100, 10_000),
        RunSpec::new(ProcessSpec::DChoice { d: 3 }, 100, 10_000)
            .batched(500)
            .tie_break(TieBreak::Position),
        RunSpec::new(ProcessSpec::MixedQuantile { delta: 0.5, eta: 0.6 }, 100, 10_000).batched(300),
        RunSpec::new(ProcessSpec::OnePlusBeta { beta: 0.5 }, 100, 10_000)
            .weights(Weights::Exp { mean: 1.0 }),
        // Weighted batches of at least 4n balls: a batch at a time (`ballast_core::weighted`).
        RunSpec::new(ProcessSpec::DChoice { d: 3 }, 100, 10_000)
            .batched(500)
            .tie_break(TieBreak::Position)
            .weights(Weights::Exp { mean: 1.0 }),
        RunSpec::new(ProcessSpec::OnePlusBeta { beta: 0.5 }, 100, 10_000)
            .batched(1000)
            .weights(Weights::Exp { mean: 2.0 }),
        // The level engine (batched, b >= 2048): multinomials and occupancy counts.
        RunSpec::new(ProcessSpec::DChoice { d: 2 }, 1000, 100_000).batched(10_000),
        RunSpec::new(ProcessSpec::DChoice { d: 3 }, 1000, 100_000)
            .batched(50_000)
            .tie_break(TieBreak::Position),
    ];
    let got: Vec<String> = specs
        .iter()
        .map(|s| {
            let o = simulate_seeded(s, 99).expect("valid");
            format!("{:.6}/{:.6}/{}", o.final_gap, o.max_gap, o.samples)
        })
        .collect();
    assert_eq!(got, PINNED_RUNS, "{got:?}");
}

const PINNED_RUNS: [&str; 8] = [
    "2.000000/2.000000/20000",
    "18.000000/18.000000/30000",
    "12.000000/12.000000/12975",
    "10.269553/10.269553/14922",
    "17.115872/27.687519/30000",
    "25.509176/27.476533/14955",
    "17.000000/18.000000/200000",
    "78.000000/121.000000/300000",
];

/// The final load histogram (lowest load, then bins per level) from the `LoadState` view.
#[derive(Default)]
struct Histogram(String);

impl ballast_core::Observer for Histogram {
    const PER_BALL: bool = false;
    fn on_observation<S: LoadState>(&mut self, s: &S) {
        let loads: Vec<u64> = (0..s.n()).map(|i| s.load(i).into() as u64).collect();
        let lo = *loads.iter().min().expect("bins");
        let hi = *loads.iter().max().expect("bins");
        let mut counts = vec![0u64; (hi - lo + 1) as usize];
        for x in loads {
            counts[(x - lo) as usize] += 1;
        }
        self.0 = format!("{lo}:{counts:?}");
    }
}

#[test]
fn chunked_level_runs_are_pinned() {
    // Sequential runs on the level engine at the chunk thresholds (`level::chunked`): the
    // final histograms depend on every draw of the chunk step, so any change to it shows here.
    use ballast_core::level::chunked::{
        CHUNK_MIN_N, CHUNK_MIN_N_MANY, CHUNK_MIN_N_ONE_PLUS_BETA, CHUNK_MIN_N_QUANTILE,
    };
    use ballast_core::{simulate_observed, Engine};
    let specs = [
        RunSpec::new(ProcessSpec::DChoice { d: 2 }, CHUNK_MIN_N, 8 * CHUNK_MIN_N),
        RunSpec::new(ProcessSpec::DChoice { d: 3 }, CHUNK_MIN_N_MANY, 10 * CHUNK_MIN_N_MANY),
        RunSpec::new(ProcessSpec::OnePlusBeta { beta: 0.5 }, CHUNK_MIN_N_ONE_PLUS_BETA, 1 << 20),
        RunSpec::new(
            ProcessSpec::MixedQuantile { delta: 0.5, eta: 0.6 },
            CHUNK_MIN_N_QUANTILE,
            1 << 20,
        ),
        // Below the thresholds: the ball loop of `level/sequential.rs` (value version 5).
        RunSpec::new(ProcessSpec::OnePlusBeta { beta: 0.5 }, 1000, 100_000),
        RunSpec::new(ProcessSpec::Quantile { delta: 0.5 }, 1000, 100_000),
        RunSpec::new(ProcessSpec::MixedQuantile { delta: 0.5, eta: 0.6 }, 1000, 100_000),
    ];
    let got: Vec<String> = specs
        .iter()
        .map(|s| {
            let mut h = Histogram::default();
            let spec = s.clone().engine(Engine::Levels);
            let o = simulate_observed(&spec, &mut sim_rng(99), &mut h).expect("valid");
            format!("{}/{}", h.0, o.samples)
        })
        .collect();
    assert_eq!(got, PINNED_CHUNKED, "{got:?}");
}

const PINNED_CHUNKED: [&str; 7] = [
    "2:[1, 40, 254, 1340, 6267, 25510, 57660, 36724, 3266, 10]/2097152",
    "7:[12, 104, 1353, 5130, 1589, 4]/245760",
    "0:[2, 17, 101, 462, 1828, 5348, 13390, 25816, 34815, 28521, 14194, 4851, 1273, 314, 108, \
     26, 5, 1]/1572254",
    "0:[1586, 8959, 26051, 53548, 83750, 54309, 22230, 8124, 2565, 751, 201, 52, 17, 1]/1363297",
    "89:[1, 1, 0, 0, 6, 6, 5, 32, 38, 86, 163, 260, 216, 106, 58, 13, 7, 2]/150241",
    "92:[1, 1, 2, 4, 12, 37, 63, 170, 350, 261, 68, 22, 6, 3]/149649",
    "86:[1, 1, 0, 0, 4, 4, 4, 5, 11, 22, 27, 44, 67, 134, 258, 223, 83, 50, 31, 14, 5, 8, 2, 1, \
     1]/130036",
];
