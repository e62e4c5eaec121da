//! Graphical processes in the core bin engine: equalities in distribution with the core
//! processes (two-sample chi-square on max-load histograms at `common::ALPHA`), exact
//! identities, tie rules, settings, errors, and pinned values.
//!
//! The right comparison for Two-Choice on the complete graph: core Two-Choice samples two bins
//! *with replacement* (a uniform ordered pair of V × V), while `K_n` has no loops, so an edge
//! sample is a uniform pair of *distinct* vertices. Hence
//! (a) Two-Choice on `K_n` = core Two-Choice conditioned on distinct samples (checked against
//!     a reference rule that redraws the second sample until it differs), and
//! (b) core Two-Choice = Two-Choice on the multigraph `2K_n + loops` (each pair joined twice,
//!     one loop per vertex: n² edges in bijection with the ordered pairs).
//! For small n the two laws differ visibly; the last test shows the chi-square detects it.

mod common;

use ballast_core::delay::DelayMode;
use ballast_core::engine::{run_rule, Observer};
use ballast_core::loads::WeightedLoads;
use ballast_core::loads::{LoadState, UnitLoads};
use ballast_core::process::{Ctx, OneChoice, Placement, Ranks, Rule};
use ballast_core::{
    derive_seed, sim_rng, simulate, Engine, ProcessSpec, RunSpec, Setting, TieBreak, Weights,
};
use ballast_graph::generate::{cycle, torus};
use ballast_graph::process::EdgeTwoChoice;
use ballast_graph::{
    simulate_graph, simulate_graph_observed, Complete, Csr, Error, Graph, GraphKind, GraphOptions,
    OneStep, SampleEdge, Store,
};
use common::{chi2_critical, chi2_two_sample, histogram};

const TWO: ProcessSpec = ProcessSpec::DChoice { d: 2 };

/// Core Two-Choice conditioned on distinct samples: the reference law of Two-Choice on K_n.
#[derive(Clone, Copy)]
struct DistinctTwoChoice;

impl Rule for DistinctTwoChoice {
    fn place<S: LoadState, R: rand::RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        let i = ctx.sample(rng);
        let j = loop {
            let j = ctx.sample(rng);
            if j != i {
                break j;
            }
        };
        let (li, lj) = (s.load(i), s.load(j));
        Placement::one(if lj < li || (lj == li && ctx.coin(rng)) { j } else { i })
    }
}

/// The multigraph 2K_n + loops.
fn doubled_complete_with_loops(n: u32) -> Csr {
    let mut edges = Vec::new();
    for u in 0..n {
        edges.push((u, u));
        for v in u + 1..n {
            edges.push((u, v));
            edges.push((v, u));
        }
    }
    Csr::from_edges(n as usize, &edges).unwrap()
}

const RUNS: u64 = 4000;

/// Max-load histogram over `RUNS` seeded runs.
fn max_loads(seed: u64, mut run: impl FnMut(u64) -> f64) -> Vec<u64> {
    let values = (0..RUNS).map(|r| run(derive_seed(seed, &[r])) as i64);
    histogram(values, 0, 64)
}

fn assert_same_law(a: &[u64], b: &[u64], what: &str) {
    let (stat, df) = chi2_two_sample(a, b);
    assert!(stat < chi2_critical(df), "{what}: chi2 = {stat:.1}, df = {df}");
}

#[test]
fn two_choice_on_complete_graph_equals_core_two_choice_with_distinct_samples() {
    let (n, m) = (8usize, 64u64);
    let spec = RunSpec::new(TWO, n as u64, m);
    let g = Complete::new(n).unwrap();
    let graph = max_loads(51, |s| simulate_graph(&spec, &g, &mut sim_rng(s)).unwrap().max_load);
    let reference = max_loads(52, |s| {
        run_rule(&spec, UnitLoads::new(n, false), DistinctTwoChoice, &mut sim_rng(s)).max_load
    });
    assert_same_law(&graph, &reference, "K_n vs distinct-sample Two-Choice");
}

#[test]
fn core_two_choice_is_two_choice_on_doubled_complete_graph_with_loops() {
    let (n, m) = (8u32, 64u64);
    let spec = RunSpec::new(TWO, u64::from(n), m);
    let g = doubled_complete_with_loops(n);
    assert_eq!(g.n_edges(), u64::from(n * n));
    let graph = max_loads(53, |s| simulate_graph(&spec, &g, &mut sim_rng(s)).unwrap().max_load);
    let core = max_loads(54, |s| simulate(&spec, &mut sim_rng(s)).unwrap().max_load);
    assert_same_law(&graph, &core, "2K_n + loops vs core Two-Choice");
    // Batched too (b = n): frozen loads within a batch.
    let spec = spec.batched(u64::from(n));
    let graph = max_loads(55, |s| simulate_graph(&spec, &g, &mut sim_rng(s)).unwrap().max_load);
    let core = max_loads(56, |s| simulate(&spec, &mut sim_rng(s)).unwrap().max_load);
    assert_same_law(&graph, &core, "batched 2K_n + loops vs core Two-Choice");
}

#[test]
fn one_plus_beta_on_doubled_complete_graph_with_loops_equals_core() {
    let (n, m) = (8u32, 64u64);
    let spec = RunSpec::new(ProcessSpec::OnePlusBeta { beta: 0.5 }, u64::from(n), m);
    let g = doubled_complete_with_loops(n);
    let graph = max_loads(57, |s| simulate_graph(&spec, &g, &mut sim_rng(s)).unwrap().max_load);
    let core = max_loads(58, |s| simulate(&spec, &mut sim_rng(s)).unwrap().max_load);
    assert_same_law(&graph, &core, "(1+β) on 2K_n + loops vs core (1+β)");
}

#[test]
fn one_step_variants_agree_on_regular_graphs() {
    let g = torus(2, 3).unwrap();
    let spec = RunSpec::new(ProcessSpec::OnePlusBeta { beta: 0.3 }, 9, 90);
    let run = |one_step, s| {
        let opts = GraphOptions { one_step };
        simulate_graph_observed(&spec, &g, &opts, &mut sim_rng(s), &mut ()).unwrap().max_load
    };
    let a = max_loads(59, |s| run(OneStep::UniformVertex, s));
    let b = max_loads(60, |s| run(OneStep::EdgeEndpoint, s));
    assert_same_law(&a, &b, "uniform vertex vs edge endpoint on a regular graph");
}

#[test]
fn the_distinction_matters_for_small_n() {
    // K_3 vs core Two-Choice on 3 bins: a third of core's steps sample one bin twice.
    let spec = RunSpec::new(TWO, 3, 30);
    let g = Complete::new(3).unwrap();
    let graph = max_loads(61, |s| simulate_graph(&spec, &g, &mut sim_rng(s)).unwrap().max_load);
    let core = max_loads(62, |s| simulate(&spec, &mut sim_rng(s)).unwrap().max_load);
    let (stat, df) = chi2_two_sample(&graph, &core);
    assert!(stat > chi2_critical(df), "chi2 = {stat:.1} should reject, df = {df}");
}

/// Against the core bin engine's One-Choice rule (core's `simulate` may pick another exact
/// engine, equal only in law).
#[test]
fn one_choice_on_vertices_is_core_one_choice_draw_for_draw() {
    let g = cycle(100).unwrap();
    for spec in [
        RunSpec::new(ProcessSpec::OneChoice, 100, 10_000),
        RunSpec::new(ProcessSpec::OneChoice, 100, 10_000).batched(300),
    ] {
        let a = simulate_graph(&spec, &g, &mut sim_rng(9)).unwrap();
        let b = run_rule(&spec, UnitLoads::new(100, false), OneChoice, &mut sim_rng(9));
        assert_eq!(a, b);
    }
    let spec =
        RunSpec::new(ProcessSpec::DChoice { d: 1 }, 100, 5_000).weights(Weights::Exp { mean: 1.0 });
    let a = simulate_graph(&spec, &g, &mut sim_rng(9)).unwrap();
    let b = run_rule(&spec, WeightedLoads::new(100, 1.0), OneChoice, &mut sim_rng(9));
    assert_eq!(a, b);
}

#[test]
fn implicit_and_materialised_topologies_run_identically() {
    let spec = RunSpec::new(TWO, 4096, 40_960).batched(1000);
    for kind in ["cycle", "torus:2", "torus:3", "hypercube"] {
        let t = kind.parse::<GraphKind>().unwrap().build(Some(4096), &mut sim_rng(1)).unwrap();
        assert!(!matches!(t.store(), Store::Csr(_)), "{kind} should be implicit");
        let csr = t.to_csr().unwrap();
        let a = t.simulate(&spec, &mut sim_rng(5)).unwrap();
        let b = simulate_graph(&spec, &csr, &mut sim_rng(5)).unwrap();
        assert_eq!(a, b, "{kind}");
    }
}

#[test]
fn batch_of_one_is_the_sequential_process() {
    let g = torus(2, 10).unwrap();
    let seq = RunSpec::new(TWO, 100, 5_000);
    let a = simulate_graph(&seq, &g, &mut sim_rng(4)).unwrap();
    let b = simulate_graph(&seq.clone().batched(1), &g, &mut sim_rng(4)).unwrap();
    assert_eq!((a.final_gap, a.max_load, a.min_load), (b.final_gap, b.max_load, b.min_load));
    assert_eq!(b.observations, 5_000);
}

#[derive(Default)]
struct Count {
    balls: u64,
    observations: u64,
}

impl Observer for Count {
    fn on_ball<S: LoadState>(&mut self, _s: &S, _bin: usize, _w: f64) {
        self.balls += 1;
    }
    fn on_observation<S: LoadState>(&mut self, _s: &S) {
        self.observations += 1;
    }
}

#[test]
fn batched_weighted_runs_report_counts() {
    let g = cycle(1000).unwrap();
    let spec = RunSpec::new(TWO, 1000, 100_000).batched(10_000).weights(Weights::Exp { mean: 1.0 });
    let mut count = Count::default();
    let out =
        simulate_graph_observed(&spec, &g, &GraphOptions::default(), &mut sim_rng(3), &mut count)
            .unwrap();
    assert_eq!((count.balls, count.observations, out.observations), (100_000, 10, 10));
    assert_eq!(out.samples, 200_000);
    assert!(out.max_gap >= out.final_gap && out.final_gap > 0.0);
    let spec = RunSpec::new(ProcessSpec::OnePlusBeta { beta: 0.0 }, 1000, 1000);
    assert_eq!(simulate_graph(&spec, &g, &mut sim_rng(3)).unwrap().samples, 1000);
}

#[test]
fn errors_name_the_problem() {
    let g = cycle(10).unwrap();
    let err = simulate_graph(&RunSpec::new(TWO, 11, 5), &g, &mut sim_rng(1)).unwrap_err();
    assert!(matches!(err, Error::Mismatch(_)) && err.to_string().contains("10 vertices"), "{err}");
    let q = RunSpec::new(ProcessSpec::Quantile { delta: 0.5 }, 10, 5);
    let err = simulate_graph(&q, &g, &mut sim_rng(1)).unwrap_err();
    assert!(err.to_string().contains("`quantile`"), "{err}");
    let d3 = RunSpec::new(ProcessSpec::DChoice { d: 3 }, 10, 5);
    let err = simulate_graph(&d3, &g, &mut sim_rng(1)).unwrap_err();
    assert!(err.to_string().contains("d = 3"), "{err}");
    let bad = RunSpec::new(ProcessSpec::OnePlusBeta { beta: 2.0 }, 10, 5);
    assert!(matches!(simulate_graph(&bad, &g, &mut sim_rng(1)), Err(Error::Core(_))));
    let edgeless = Csr::from_edges(3, &[]).unwrap();
    let err = simulate_graph(&RunSpec::new(TWO, 3, 5), &edgeless, &mut sim_rng(1)).unwrap_err();
    assert!(err.to_string().contains("has none"), "{err}");
    let one = RunSpec::new(ProcessSpec::OneChoice, 3, 5);
    assert!(simulate_graph(&one, &edgeless, &mut sim_rng(1)).is_ok());
    let levels = RunSpec::new(TWO, 10, 5).engine(Engine::Levels);
    let err = simulate_graph(&levels, &g, &mut sim_rng(1)).unwrap_err();
    assert!(err.to_string().contains("engine `levels`"), "{err}");
    let auto = RunSpec::new(TWO, 10, 5).engine(Engine::Auto);
    assert!(simulate_graph(&auto, &g, &mut sim_rng(1)).is_ok());
    let delay = RunSpec {
        setting: Setting::Delay { tau: 4, mode: DelayMode::Random },
        ..RunSpec::new(TWO, 10, 5)
    };
    let err = simulate_graph(&delay, &g, &mut sim_rng(1)).unwrap_err();
    assert!(err.to_string().contains("delay setting"), "{err}");
}

fn first_choices<G: SampleEdge>(g: &G, tie: TieBreak, k: usize, seed: u64) -> Vec<usize> {
    let state = UnitLoads::new(g.n_vertices(), false);
    let mut rule = EdgeTwoChoice { graph: g, tie };
    let mut ctx = Ctx::new(g.n_vertices());
    let mut rng = sim_rng(seed);
    (0..k).map(|_| rule.place(&state, &Ranks::Unused, &mut rng, &mut ctx).bin).collect()
}

#[test]
fn tie_rules_between_endpoints() {
    // A single edge {0, 1} with both loads 0: every step is a tie.
    let g = Csr::from_edges(2, &[(0, 1)]).unwrap();
    assert!(first_choices(&g, TieBreak::LowestIndex, 100, 1).iter().all(|&b| b == 0));
    assert!(first_choices(&g, TieBreak::Position, 100, 1).iter().all(|&b| b == 1));
    for tie in [TieBreak::Random, TieBreak::First] {
        let ones = first_choices(&g, tie, 20_000, 2).iter().filter(|&&b| b == 1).count();
        // Binomial(20000, 1/2): 3.3 sd (alpha 0.001) is ±233.
        assert!((ones as i64 - 10_000).abs() < 233, "{tie:?}: {ones}");
    }
    // With unequal loads the lighter endpoint always wins.
    let mut state = UnitLoads::new(2, false);
    state.add(0, ());
    let mut rule = EdgeTwoChoice { graph: &g, tie: TieBreak::LowestIndex };
    let mut ctx = Ctx::new(2);
    let mut rng = sim_rng(3);
    assert!((0..100).all(|_| rule.place(&state, &Ranks::Unused, &mut rng, &mut ctx).bin == 1));
}

/// Value stability: the first choices from empty loads for fixed seeds. Changing them is a
/// value-breaking change (CHANGELOG).
#[test]
fn first_choices_are_pinned() {
    let torus = torus(2, 5).unwrap();
    assert_eq!(first_choices(&torus, TieBreak::Random, 8, 7), PINNED_TORUS);
    let complete = Complete::new(10).unwrap();
    assert_eq!(first_choices(&complete, TieBreak::Random, 8, 7), PINNED_COMPLETE);
    let star = ballast_graph::generate::star(10).unwrap();
    assert_eq!(first_choices(&star, TieBreak::Random, 8, 7), PINNED_STAR);
}

const PINNED_TORUS: [usize; 8] = [3, 13, 4, 7, 14, 10, 7, 20];
const PINNED_COMPLETE: [usize; 8] = [7, 9, 7, 6, 8, 2, 7, 8];
const PINNED_STAR: [usize; 8] = [4, 4, 4, 5, 0, 6, 0, 0];
