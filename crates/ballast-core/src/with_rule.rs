//! The hand-off from the router's one match over the process (`engine::dispatch_to`) to a
//! loop: a [`WithRule`] receives the monomorphised rule of the run and runs it. The bin
//! engine's loop is one such loop; the churn and dispatcher loops are others, so every loop
//! gets the same rule for the same process without a second copy of the match.
//! [`without_replacement`] is the same hand-off for the processes that draw distinct bins
//! (on the bin engine and on the level engine's generic sequential loop).

use crate::k_threshold::KThreshold;
use crate::process::distinct::{Distinct, DistinctPair, OnePlusBetaDistinct};
use crate::process::{Noisy, Rule};
use crate::spec::{ProcessSpec, TieBreak};

/// A loop that runs one rule: called once per run with the rule of the spec's process.
pub(crate) trait WithRule {
    /// What the loop returns.
    type Out;
    /// Runs the loop with `rule`.
    fn run<P: Rule>(self, rule: P) -> Self::Out;
}

/// Hands the rule of `process` drawing distinct bins to `runner`: the one place that knows
/// each kind's rule without replacement ([`ProcessSpec::WithoutReplacement`] is validated to
/// hold one of the kinds that [take the option](ProcessSpec::takes_replacement)).
pub(crate) fn without_replacement<X: WithRule>(
    process: &ProcessSpec,
    tie: TieBreak,
    runner: X,
) -> X::Out {
    match *process {
        ProcessSpec::DChoice { d } => runner.run(Distinct::new(d, false, tie)),
        ProcessSpec::UnfairDChoice { d } => runner.run(Distinct::new(d, true, tie)),
        ProcessSpec::KThreshold { ref f } => runner.run(DistinctPair(KThreshold { f })),
        ProcessSpec::OnePlusBeta { beta } => runner.run(OnePlusBetaDistinct { beta, tie }),
        ProcessSpec::GBounded { g } => runner.run(DistinctPair(Noisy::GBounded { g })),
        ProcessSpec::GMyopic { g } => runner.run(DistinctPair(Noisy::GMyopic { g })),
        ProcessSpec::SigmaNoisyLoad { sigma, truncate } => {
            runner.run(DistinctPair(Noisy::SigmaNoisyLoad { sigma, truncate }))
        }
        _ => unreachable!("validated: `{}` takes no replacement option", process.kind()),
    }
}
