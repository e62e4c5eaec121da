//! The hand-off from a process kind ([`crate::kind::Kind::bins`]) to a loop: a [`WithRule`]
//! receives the monomorphised rule of the run and runs it. The bin engine's loop is one such
//! loop; the churn and dispatcher loops and the level engine's generic loops are others, so
//! every loop gets the same rule for the same process from the kind's one file.

use crate::process::Rule;

/// A loop that runs one rule: called once per run with the rule of the spec's process.
pub(crate) trait WithRule {
    /// What the loop returns.
    type Out;
    /// Runs the loop with `rule`.
    fn run<P: Rule>(self, rule: P) -> Self::Out;
}
