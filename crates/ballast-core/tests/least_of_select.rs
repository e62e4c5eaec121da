//! d-Choice with a deterministic tie rule (`first`, `lowest_index`, `position`) decides with
//! selects instead of branches ([`ballast_core::process::least_of`]). This test runs the
//! branching form ([`least_of_branching`], the original code) as a rule of its own beside the
//! engine's, on the same seeds, and requires the same bin for every ball: sequential and
//! batched, unit and Exp(1) weights, d = 2, 3, 5. A check that the comparison has power: the
//! same runs with a different tie rule in the reference are told apart.

mod common;

use ballast_core::loads::LoadState;
use ballast_core::process::{least_of_branching, Ctx, Placement, Ranks, Rule};
use ballast_core::{Engine, ProcessSpec, RunSpec, TieBreak, Weights};
use common::engine_and_rule_traces;
use rand::RngCore;

/// d-Choice through the branching code path.
struct Branching {
    d: u32,
    tie: TieBreak,
}

impl Rule for Branching {
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        Placement::one(least_of_branching(s, self.d, self.tie, rng, ctx))
    }
}

/// The engine's trace and the branching rule's trace of one run.
fn traces(spec: &RunSpec, reference_tie: TieBreak, seed: u64) -> (Vec<usize>, Vec<usize>) {
    let ProcessSpec::DChoice { d } = spec.process else { unreachable!("d-Choice only") };
    engine_and_rule_traces(spec, Branching { d, tie: reference_tie }, seed)
}

fn spec(d: u32, tie: TieBreak, n: u64, m: u64, batch: Option<u64>, exp: bool) -> RunSpec {
    let mut spec = RunSpec::new(ProcessSpec::DChoice { d }, n, m).engine(Engine::Bins);
    if let Some(b) = batch {
        spec = spec.batched(b);
    }
    if exp {
        spec.weights = Weights::Exp { mean: 1.0 };
    }
    spec.tie_break = tie;
    spec
}

const SETTINGS: [(u64, u64, Option<u64>, bool); 5] = [
    (5, 2_000, None, false),
    (64, 30_000, None, false),
    (64, 30_000, Some(100), false),
    (64, 20_000, None, true),
    (64, 20_000, Some(64), true),
];

#[test]
fn select_form_makes_the_same_choices_as_the_branching_form() {
    for tie in [TieBreak::First, TieBreak::LowestIndex, TieBreak::Position] {
        for d in [2u32, 3, 5] {
            for &(n, m, batch, exp) in &SETTINGS {
                for seed in 0..3u64 {
                    let s = spec(d, tie, n, m, batch, exp);
                    let (fast, slow) = traces(&s, tie, seed);
                    assert_eq!(fast.len() as u64, m);
                    assert!(
                        fast == slow,
                        "{tie:?} d={d} n={n} batch={batch:?} exp={exp} seed={seed}"
                    );
                }
            }
        }
    }
}

/// Power: with unit loads ties are frequent, so a reference with another tie rule must
/// choose differently somewhere in every such run.
#[test]
fn a_different_tie_rule_is_detected() {
    for (tie, other) in [
        (TieBreak::Position, TieBreak::LowestIndex),
        (TieBreak::LowestIndex, TieBreak::First),
        (TieBreak::First, TieBreak::Position),
    ] {
        for batch in [None, Some(100)] {
            let s = spec(3, tie, 64, 30_000, batch, false);
            let (fast, slow) = traces(&s, other, 1);
            assert!(fast != slow, "{tie:?} vs {other:?}, batch {batch:?}: not told apart");
        }
    }
}
