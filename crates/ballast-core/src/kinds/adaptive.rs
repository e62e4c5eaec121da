//! Adaptive probing (`adaptive`, Czumaj–Stemann): probe uniform bins until one is below the
//! threshold τ of the probe count (or the cap is reached). Its decisions read the loads of
//! uniform bins and W/n only, so the level engine runs it sequentially (`level/adaptive.rs`,
//! with the bin engine's probe histogram); no batch law for a probe count that varies.

use crate::crossover::{
    AUTO_SEQUENTIAL_MIN_N_ADAPTIVE, AUTO_SEQUENTIAL_MIN_N_MANY_CHOICE,
    AUTO_SEQUENTIAL_MIN_N_TWO_CHOICE,
};
use crate::czumaj::Adaptive;
use crate::error::Error;
use crate::kind::{sequential_only, Kind, LevelSteps};
use crate::spec::{check_tau_probes, greedy_d, ProcessSpec, RunSpec, Tau};
use crate::with_rule::WithRule;

/// The kind [`ProcessSpec::Adaptive`].
pub(super) struct Item;

/// The thresholds and the probe cap.
fn parts(p: &ProcessSpec) -> (&Tau, Option<u32>) {
    let ProcessSpec::Adaptive { tau, cap } = p else { unreachable!("listed for Adaptive") };
    (tau, *cap)
}

impl Kind for Item {
    fn check(p: &ProcessSpec) -> Result<(), Error> {
        let (tau, cap) = parts(p);
        tau.validate()?;
        match cap {
            Some(c) if !(1..=1_000_000).contains(&c) => {
                Err(Error::invalid("cap", c, "an integer in 1..=1000000"))
            }
            None if tau.formula.is_some() => Err(Error::invalid(
                "cap",
                "none",
                "a probe cap (1..=1000000): required with tau.formula",
            )),
            // From `until` on τ is −∞ and only a cap ends the probes.
            None if tau.per_probe <= 0.0 || tau.until.is_some() => Err(Error::invalid(
                "cap",
                "none",
                "a probe cap, unless tau grows with the probe count (per_probe > 0) and has no \
                 `until`",
            )),
            _ => Ok(()),
        }
    }
    /// The threshold formula probed over the run's values, after the parameters' checks.
    fn check_run(spec: &RunSpec) -> Result<(), Error> {
        Self::check(&spec.process)?;
        match parts(&spec.process) {
            (Tau { formula: Some(f), .. }, Some(cap)) => {
                check_tau_probes(f, spec.n, spec.m, spec.weights.mean(), cap)
            }
            _ => Ok(()),
        }
    }
    fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
        let (tau, cap) = parts(&spec.process);
        runner.run(Adaptive::new(tau.clone(), cap, spec.m))
    }
    fn levels(_spec: &RunSpec, batched: bool) -> Result<(), Error> {
        sequential_only(
            batched,
            "the level engine simulates adaptive probing sequentially only (no batch law for a \
             probe count that varies)"
                .to_string(),
        )
    }
    fn level_steps<V: LevelSteps>(spec: &RunSpec, v: V) -> V::Out {
        let (tau, cap) = parts(&spec.process);
        v.adaptive(tau.clone(), cap)
    }
    /// Greedy\[d\] runs as d-Choice on levels and takes d-Choice's crossover.
    fn auto_levels_min_n(spec: &RunSpec) -> u64 {
        let (tau, cap) = parts(&spec.process);
        match greedy_d(tau, cap) {
            Some(2) => AUTO_SEQUENTIAL_MIN_N_TWO_CHOICE,
            Some(_) => AUTO_SEQUENTIAL_MIN_N_MANY_CHOICE,
            None => AUTO_SEQUENTIAL_MIN_N_ADAPTIVE,
        }
    }
}
