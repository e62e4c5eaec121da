//! Adaptive probing (`adaptive`, Czumaj–Stemann): probe uniform bins until one is below the
//! threshold τ of the probe count (or the cap is reached). Its decisions read the loads of
//! uniform bins and W/n only, so the level engine runs it sequentially (`level/adaptive.rs`,
//! with the bin engine's probe histogram); no batch law for a probe count that varies.

use crate::crossover::{AUTO_SEQUENTIAL_MIN_N_ADAPTIVE, AUTO_SEQUENTIAL_MIN_N_GREEDY};
use crate::czumaj::Adaptive;
use crate::def::{ProcessDef, BATCHED, NO_TIES};
use crate::error::Error;
use crate::kind::{sequential_only, Kind, LevelSteps};
use crate::params::{Args, ParamDef, ParamDefault, ParamError, ParamType};
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
    const LEVEL_CHUNKS: bool = true;
    const RECORDS_PROBES: bool = true;
    fn check(p: &ProcessSpec) -> Result<(), Error> {
        let (tau, cap) = parts(p);
        tau.validate()?;
        match cap {
            Some(c) => super::declared(&ADAPTIVE, "cap", f64::from(c)),
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
    /// The threshold formula probed over the run's values.
    fn check_run(spec: &RunSpec) -> Result<(), Error> {
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
    /// Greedy\[d\] runs as d-Choice's level loop there, faster at every n than the bin
    /// engine's probe loop.
    fn auto_levels_min_n(spec: &RunSpec) -> u64 {
        let (tau, cap) = parts(&spec.process);
        match greedy_d(tau, cap) {
            Some(_) => AUTO_SEQUENTIAL_MIN_N_GREEDY,
            None => AUTO_SEQUENTIAL_MIN_N_ADAPTIVE,
        }
    }
}

/// The registry entry of `adaptive` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const ADAPTIVE: ProcessDef = ProcessDef {
    name: "adaptive",
    doc: "Czumaj-Stemann adaptive probing: probe until the least loaded probed bin is \
          below tau_k, or cap probes",
    params: &[
        ParamDef {
            name: "preset",
            ty: ParamType::Choice(&["greedy", "threshold_first", "probe_count"]),
            default: ParamDefault::Unset,
            doc: "greedy (needs d), threshold_first (needs d, c), probe_count; or give tau",
        },
        ParamDef {
            name: "d",
            ty: ParamType::Int { lo: 1, hi: 1024 },
            default: ParamDefault::Unset,
            doc: "presets greedy and threshold_first: probe cap",
        },
        ParamDef {
            name: "c",
            ty: ParamType::Real,
            default: ParamDefault::Unset,
            doc: "preset threshold_first: accept the first probe with load below c",
        },
        ParamDef {
            name: "relative",
            ty: ParamType::Bool,
            default: ParamDefault::Bool(false),
            doc: "presets: thresholds measured from the average load (tau_k + W/n)",
        },
        ParamDef {
            name: "tau.base",
            ty: ParamType::RealOrMinusInf,
            default: ParamDefault::Unset,
            doc: "open form: tau_k = base + per_probe k + per_average W/n",
        },
        ParamDef {
            name: "tau.per_probe",
            ty: ParamType::Real,
            default: ParamDefault::Unset,
            doc: "open form: coefficient of the probe count k",
        },
        ParamDef {
            name: "tau.per_average",
            ty: ParamType::Real,
            default: ParamDefault::Unset,
            doc: "open form: coefficient of the average load W/n",
        },
        ParamDef {
            name: "tau.until",
            ty: ParamType::Int { lo: 0, hi: u32::MAX },
            default: ParamDefault::Unset,
            doc: "open form: tau_k = -inf from this probe count on",
        },
        ParamDef {
            name: "tau.formula",
            ty: ParamType::Decision(crate::spec::TAU_VARS),
            default: ParamDefault::Unset,
            doc: "open form: tau_k as a formula in k (probes so far), n, m, t (balls \
                  placed), avg (W/n), with if and comparisons, e.g. \"k + avg - t/n\"; \
                  needs cap",
        },
        ParamDef {
            name: "cap",
            ty: ParamType::Int { lo: 1, hi: 1_000_000 },
            default: ParamDefault::Unset,
            doc: "open form: probe cap (optional when tau grows with k; required with \
                  tau.formula)",
        },
    ],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: false,
    build: build_adaptive,
    example: "preset=greedy d=2",
};

/// `adaptive`: a preset or the open form `tau.*` with `cap` (either, not both).
fn build_adaptive(a: &Args) -> Result<ProcessSpec, ParamError> {
    const OPEN: [&str; 6] =
        ["tau.base", "tau.per_probe", "tau.per_average", "tau.until", "tau.formula", "cap"];
    let refuse_all = |names: &[&str], why: &str| -> Result<(), ParamError> {
        match names.iter().find(|n| a.given(n)) {
            Some(n) => Err(a.refuse(n, format!("`{n}` {why}"))),
            None => Ok(()),
        }
    };
    let Some(preset) = a.text("preset") else {
        if !OPEN[..5].iter().any(|n| a.given(n)) {
            return Err(ParamError {
                param: None,
                message: "process `adaptive` needs `preset` (greedy, threshold_first, \
                          probe_count) or the open form `tau = { base, per_probe, per_average, \
                          until }` or `tau = { formula }`, with `cap`"
                    .to_owned(),
            });
        }
        refuse_all(&["d", "c"], "belongs to a preset; the open form uses tau and cap")?;
        if a.flag("relative") {
            return Err(a.refuse("relative", "`relative` is for presets; use tau.per_average"));
        }
        if let Some(src) = a.formula("tau.formula") {
            refuse_all(&OPEN[..4], "belongs to the affine form; tau.formula replaces it")?;
            let f = crate::formula::Formula::parse_decision(&src, crate::spec::TAU_VARS)
                .map_err(|why| a.refuse("tau.formula", format!("`tau.formula`: {why}")))?;
            return Ok(ProcessSpec::Adaptive { tau: Tau::formula(f), cap: a.opt_int("cap") });
        }
        let tau = Tau {
            formula: None,
            base: a.opt_num("tau.base").unwrap_or(0.0),
            per_probe: a.opt_num("tau.per_probe").unwrap_or(0.0),
            per_average: a.opt_num("tau.per_average").unwrap_or(0.0),
            until: a.opt_int("tau.until"),
        };
        return Ok(ProcessSpec::Adaptive { tau, cap: a.opt_int("cap") });
    };
    refuse_all(&OPEN, "belongs to the open form: give either `preset` or `tau`/`cap`")?;
    let rel = |mut t: Tau| {
        if a.flag("relative") {
            t.per_average = 1.0;
        }
        t
    };
    let need_d = || {
        a.opt_int("d").ok_or_else(|| ParamError {
            param: None,
            message: format!("process `adaptive`: preset \"{preset}\" needs `d`"),
        })
    };
    match preset {
        "greedy" => {
            refuse_all(&["c"], "is not used by preset \"greedy\"")?;
            Ok(ProcessSpec::Adaptive { tau: Tau::NEVER, cap: Some(need_d()?) })
        }
        "threshold_first" => {
            let d = need_d()?;
            let c = a.opt_num("c").ok_or_else(|| ParamError {
                param: None,
                message: "process `adaptive`: preset \"threshold_first\" needs `c`".to_owned(),
            })?;
            Ok(ProcessSpec::Adaptive { tau: rel(Tau::constant_until(c, d)), cap: Some(d) })
        }
        _ => {
            refuse_all(&["d", "c"], "is not used by preset \"probe_count\"")?;
            Ok(ProcessSpec::Adaptive { tau: rel(Tau::PROBE_COUNT), cap: None })
        }
    }
}
