//! Graphical allocation processes as [`ballast_core::process::Rule`]s, run by the core bin
//! engine (so the sequential and batched settings, unit and exponential weights, and
//! observers all come for free), and the `simulate_graph` entry points.
//!
//! | `ProcessSpec` | on a graph |
//! |---|---|
//! | `OneChoice`, `DChoice { d: 1 }` | One-Choice on vertices: a uniform vertex ([`VertexOneChoice`]) |
//! | `DChoice { d: 2 }` | Two-Choice on edges: a uniform edge, the ball to the lighter endpoint ([`EdgeTwoChoice`]) |
//! | `OnePlusBeta { beta }` | with probability β a Two-Choice-on-edges step, else a One-Choice step ([`EdgeOnePlusBeta`]; which One-Choice step is [`OneStep`]) |
//!
//! Ties between the endpoints follow the core [`TieBreak`]: `random` (a fair coin), `first`
//! (the first endpoint of the sampled orientation: same law as `random`, since the
//! orientation is a fair coin), `lowest_index`, `position` (the higher index, as in the core).
//! Samples per ball: 2 for an edge step, 1 for a vertex step.
//!
//! Relation to the core processes. Core Two-Choice draws two bins independently *with
//! replacement*, i.e. a uniform ordered pair of `V × V`. Two-Choice on the complete graph
//! `K_n` draws a uniform pair of *distinct* vertices, so it equals core Two-Choice
//! conditioned on the two samples differing (a step of core Two-Choice is a One-Choice step
//! with probability 1/n). Core Two-Choice itself is Two-Choice on the multigraph `2K_n + loops`
//! (every pair joined twice, one loop per vertex): its `n²` edges are in bijection with the
//! ordered pairs. The tests check both identities.

use ballast_core::engine::{run_rule_observed, Observer};
use ballast_core::loads::{LoadState, UnitLoads, WeightedLoads};
use ballast_core::process::{Ctx, Placement, Ranks, Rule};
use ballast_core::rng::bernoulli;
use ballast_core::{Engine, ProcessSpec, RunOutcome, RunSpec, Setting, TieBreak, Weights};
use rand::RngCore;

use crate::graph::SampleEdge;
use crate::Error;

/// The lighter endpoint of `(u, v)`, ties by `tie`.
#[inline(always)]
fn lighter<S: LoadState, R: RngCore + ?Sized>(
    s: &S,
    (u, v): (usize, usize),
    tie: TieBreak,
    rng: &mut R,
    ctx: &mut Ctx,
) -> usize {
    let (lu, lv) = (s.load(u), s.load(v));
    if tie == TieBreak::Random {
        // Branch-free (load comparisons are unpredictable): a tie consumes one coin and the
        // second endpoint wins on heads, exactly as the branching form would.
        let take_v = (lv < lu) | ctx.coin_if(lv == lu, rng);
        return if take_v { v } else { u };
    }
    if lv < lu {
        v
    } else if lu < lv {
        u
    } else {
        match tie {
            TieBreak::LowestIndex => u.min(v),
            TieBreak::Position => u.max(v),
            TieBreak::First | TieBreak::Random => u,
        }
    }
}

/// One-Choice on the vertices of a graph: a uniform vertex (the graph only fixes `n`).
#[derive(Clone, Copy, Debug, Default)]
pub struct VertexOneChoice;

impl Rule for VertexOneChoice {
    #[inline]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        _s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        Placement::one(ctx.sample(rng))
    }
}

/// Two-Choice on edges: a uniform edge; the ball goes to the lighter endpoint.
#[derive(Debug)]
pub struct EdgeTwoChoice<'g, G: ?Sized> {
    /// The graph whose edges are sampled.
    pub graph: &'g G,
    /// Tie rule between equally loaded endpoints.
    pub tie: TieBreak,
}

impl<G: SampleEdge + ?Sized> Rule for EdgeTwoChoice<'_, G> {
    #[inline]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        ctx.samples += 2;
        let e = self.graph.sample_edge(rng);
        Placement::one(lighter(s, e, self.tie, rng, ctx))
    }
}

/// The One-Choice step of graphical (1+β).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OneStep {
    /// A uniform vertex, i.e. a step of [`VertexOneChoice`] (the default). On the complete
    /// graph this is exactly the One-Choice step of core (1+β).
    #[default]
    UniformVertex,
    /// A uniformly random endpoint of a uniform edge (a vertex drawn proportionally to its
    /// degree). The same as `UniformVertex` on regular graphs.
    EdgeEndpoint,
}

/// (1+β) on edges: with probability β a Two-Choice-on-edges step, else a One-Choice step as
/// [`OneStep`] says.
#[derive(Debug)]
pub struct EdgeOnePlusBeta<'g, G: ?Sized> {
    /// The graph whose edges are sampled.
    pub graph: &'g G,
    /// Probability of an edge (two-choice) step.
    pub beta: f64,
    /// Tie rule of the two-choice steps.
    pub tie: TieBreak,
    /// What a One-Choice step samples.
    pub one_step: OneStep,
}

impl<G: SampleEdge + ?Sized> Rule for EdgeOnePlusBeta<'_, G> {
    #[inline]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        if bernoulli(rng, self.beta) {
            ctx.samples += 2;
            let e = self.graph.sample_edge(rng);
            return Placement::one(lighter(s, e, self.tie, rng, ctx));
        }
        match self.one_step {
            OneStep::UniformVertex => Placement::one(ctx.sample(rng)),
            OneStep::EdgeEndpoint => {
                ctx.samples += 1;
                Placement::one(self.graph.sample_edge(rng).0)
            }
        }
    }
}

/// Options of graphical runs beyond the [`RunSpec`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GraphOptions {
    /// The One-Choice step of graphical (1+β).
    pub one_step: OneStep,
}

/// What a graphical run needs of its spec, before any graph is built: a valid spec, a process
/// with a graphical version (see the module table), the sequential or batched setting, the bin engine (`bins` or `auto`) and, with unit weights, at
/// most 2^32 − 1 balls. The front ends call it at validation.
pub fn check_graph_spec(spec: &RunSpec) -> Result<(), Error> {
    spec.validate()?;
    if !matches!(
        spec.process,
        ProcessSpec::OneChoice
            | ProcessSpec::DChoice { d: 1 | 2 }
            | ProcessSpec::OnePlusBeta { .. }
    ) {
        return Err(unsupported(&spec.process));
    }
    if matches!(spec.setting, Setting::Delay { .. }) {
        return Err(Error::Unsupported(
            "the delay setting (graphical processes run sequential or batched)".into(),
        ));
    }
    if spec.engine == Engine::Levels {
        return Err(Error::Unsupported(
            "engine `levels`: graphical processes are not exchangeable over bins; they run \
             on the bin engine (`bins` or `auto`)"
                .into(),
        ));
    }
    // The bin engine's unit loads are 32-bit (core may accept more balls for engines that
    // graphs cannot use).
    if spec.weights == Weights::Unit && spec.m > u64::from(u32::MAX) {
        return Err(Error::invalid("m", spec.m, "at most 4294967295 balls for unit weights"));
    }
    Ok(())
}

/// The refusal of a process without a graphical version.
fn unsupported(p: &ProcessSpec) -> Error {
    Error::Unsupported(format!(
        "process `{}`{} (graphical processes: one_choice, two_choice = d_choice with d = 2, \
         one_plus_beta)",
        p.kind(),
        match p {
            ProcessSpec::DChoice { d } => format!(" with d = {d}"),
            _ => String::new(),
        }
    ))
}

/// Runs `spec` on `graph` (see the module table for the processes), with randomness from
/// `rng`.
///
/// Errors if the spec is invalid, if `spec.n` differs from the number of vertices, if an
/// edge process meets a graph without edges, if the process has no graphical version, or if
/// the spec asks for the delay setting or the level engine (graphical runs are sequential or
/// batched, on the bin engine; `engine = auto` is accepted and means the bin engine).
pub fn simulate_graph<G: SampleEdge + ?Sized, R: RngCore + ?Sized>(
    spec: &RunSpec,
    graph: &G,
    rng: &mut R,
) -> Result<RunOutcome, Error> {
    simulate_graph_observed(spec, graph, &GraphOptions::default(), rng, &mut ())
}

/// [`simulate_graph`] with options and an [`Observer`] (potentials, trajectories, …).
pub fn simulate_graph_observed<G, R, O>(
    spec: &RunSpec,
    graph: &G,
    opts: &GraphOptions,
    rng: &mut R,
    observer: &mut O,
) -> Result<RunOutcome, Error>
where
    G: SampleEdge + ?Sized,
    R: RngCore + ?Sized,
    O: Observer,
{
    check_graph_spec(spec)?;
    let n = graph.n_vertices();
    if spec.n != n as u64 {
        return Err(Error::Mismatch(format!(
            "the run has n = {} bins but the graph has {n} vertices",
            spec.n
        )));
    }
    let uses_edges = match spec.process {
        ProcessSpec::OneChoice | ProcessSpec::DChoice { d: 1 } => false,
        ProcessSpec::DChoice { d: 2 } => true,
        ProcessSpec::OnePlusBeta { beta } => beta > 0.0 || opts.one_step == OneStep::EdgeEndpoint,
        ref other => return Err(unsupported(other)),
    };
    if uses_edges && graph.n_edges() == 0 {
        return Err(Error::Mismatch("the process samples edges but the graph has none".into()));
    }
    Ok(match spec.weights {
        Weights::Unit => dispatch(spec, graph, opts, UnitLoads::new(n, false), rng, observer),
        w => {
            let state = WeightedLoads::of_law(n, w)
                .ok_or_else(|| Error::Mismatch(format!("weights {w:?} are not a valid law")))?;
            dispatch(spec, graph, opts, state, rng, observer)
        }
    })
}

fn dispatch<G, S, R, O>(
    spec: &RunSpec,
    graph: &G,
    opts: &GraphOptions,
    state: S,
    rng: &mut R,
    observer: &mut O,
) -> RunOutcome
where
    G: SampleEdge + ?Sized,
    S: LoadState,
    R: RngCore + ?Sized,
    O: Observer,
{
    let tie = spec.tie_break;
    match spec.process {
        ProcessSpec::DChoice { d: 2 } => {
            run_rule_observed(spec, state, EdgeTwoChoice { graph, tie }, rng, observer)
        }
        ProcessSpec::OnePlusBeta { beta } => run_rule_observed(
            spec,
            state,
            EdgeOnePlusBeta { graph, beta, tie, one_step: opts.one_step },
            rng,
            observer,
        ),
        // Validated by the caller: One-Choice.
        _ => run_rule_observed(spec, state, VertexOneChoice, rng, observer),
    }
}
