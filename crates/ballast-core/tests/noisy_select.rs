//! The noisy two-sample rules (g-Bounded, g-Myopic, σ-Noisy-Load) decide with selects instead
//! of branches. This test runs them beside a straightforward branching copy of the rules (as
//! they were written before) on the same seeds and requires the same bin for every ball, so
//! the law and every value are unchanged, sequential and batched, unit and Exp(1) weights.

mod common;

use ballast_core::loads::LoadState;
use ballast_core::process::{Ctx, Placement, Ranks, Rule};
use ballast_core::{Engine, ProcessSpec, RunSpec, Weights};
use common::engine_and_rule_traces;
use rand::RngCore;
use rand_distr::{Distribution, StandardNormal};

/// The rules with `if`/`else`, as first written.
enum Reference {
    GBounded(f64),
    GMyopic(f64),
    Sigma(f64, bool),
}

impl Rule for Reference {
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        let i1 = ctx.sample(rng);
        let i2 = ctx.sample(rng);
        let (x1, x2): (f64, f64) = (s.load(i1).into(), s.load(i2).into());
        let bin = match *self {
            Reference::GBounded(g) => {
                if (x1 - x2).abs() > g {
                    if x1 < x2 {
                        i1
                    } else {
                        i2
                    }
                } else if x1 > x2 {
                    i1
                } else {
                    i2
                }
            }
            Reference::GMyopic(g) => {
                if (x1 - x2).abs() <= g {
                    if ctx.coin(rng) {
                        i1
                    } else {
                        i2
                    }
                } else if x1 < x2 {
                    i1
                } else {
                    i2
                }
            }
            Reference::Sigma(sigma, truncate) => {
                let z1: f64 = StandardNormal.sample(rng);
                let z2: f64 = StandardNormal.sample(rng);
                let (mut e1, mut e2) = (x1 + sigma * z1, x2 + sigma * z2);
                if truncate {
                    e1 = e1.trunc();
                    e2 = e2.trunc();
                }
                if e1 <= e2 {
                    i1
                } else {
                    i2
                }
            }
        };
        Placement::one(bin)
    }
}

fn reference_of(p: &ProcessSpec) -> Reference {
    match *p {
        ProcessSpec::GBounded { g } => Reference::GBounded(g),
        ProcessSpec::GMyopic { g } => Reference::GMyopic(g),
        ProcessSpec::SigmaNoisyLoad { sigma, truncate } => Reference::Sigma(sigma, truncate),
        _ => unreachable!("not a noisy process"),
    }
}

#[test]
fn select_form_makes_the_same_choices_as_the_branching_form() {
    let processes = [
        ProcessSpec::GBounded { g: 0.0 },
        ProcessSpec::GBounded { g: 3.0 },
        ProcessSpec::GMyopic { g: 0.0 },
        ProcessSpec::GMyopic { g: 2.0 },
        ProcessSpec::SigmaNoisyLoad { sigma: 1.5, truncate: false },
        ProcessSpec::SigmaNoisyLoad { sigma: 4.0, truncate: true },
    ];
    let settings =
        [(5u64, 2_000u64, None, false), (64, 30_000, None, false), (64, 30_000, Some(100), false)];
    let weighted = [(64u64, 20_000u64, None, true)];
    for process in &processes {
        for &(n, m, batch, exp) in settings.iter().chain(&weighted) {
            for seed in 0..4u64 {
                let mut spec = RunSpec::new(process.clone(), n, m).engine(Engine::Bins);
                if let Some(b) = batch {
                    spec = spec.batched(b);
                }
                if exp {
                    spec.weights = Weights::Exp { mean: 1.0 };
                }
                let (fast, slow) = engine_and_rule_traces(&spec, reference_of(process), seed);
                assert_eq!(fast.len() as u64, m);
                let what =
                    format!("{} n={n} batch={batch:?} exp={exp} seed={seed}", process.kind());
                assert!(fast == slow, "{what}");
            }
        }
    }
}
