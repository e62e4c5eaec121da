//! The `d_thinning` process (`docs/processes.md#d_thinning`), built as a process item
//! ([`crate::item`]): d-thinning (Feldheim and Li, ECP 2020; k-thinning in other papers).
//! A ball draws up to `d` samples one after another; it stays at the j-th sample
//! (j < d) if that bin's load `x` is below the j-th threshold, else it moves on to a fresh
//! sample; the d-th sample is forced. Its declaration
//! (parameters, settings) is [`DEF`], listed by the registry; everything else is here too.
//!
//! The thresholds are given in one of two forms:
//! - `f`, a list of `d − 1` offsets above the average: accept the j-th sample if
//!   `x < W/n + f_j` (so `d = 2`, `f = [0]` is Mean-Thinning and `f = [c]` is
//!   `relative_threshold`);
//! - `threshold`, one formula in `j` (the sample's position, 1..d−1), `avg` (W/n as the
//!   decision sees it), `t` (balls placed before this one; batched: before the batch) and
//!   `n`, with the decision grammar of [`crate::formula`]: accept if `x < threshold`.
//!
//! The rule reads the loads of uniform samples (or samples of the run's sampling law) and the
//! average only, so the level engine runs it on the sorted loads.

use crate::def::{ProcessDef, BATCHED, NO_TIES};
use crate::formula::{Compiled, Formula};
use crate::item::{CustomRule, CustomSpec, Decision, ProcessItem};
use crate::params::{Args, ParamDef, ParamDefault, ParamType};
use crate::spec::ProcessSpec;

/// The variables of a threshold formula, in evaluation order.
pub const VARS: &[&str] = &["j", "avg", "t", "n"];

/// The most samples per ball.
pub const MAX_D: u32 = 1024;

/// The declaration of `d_thinning`, listed in [`crate::registry::PROCESSES`].
pub const DEF: ProcessDef = ProcessDef {
    name: "d_thinning",
    doc: "up to d samples in turn; the j-th is kept if its load is below a threshold \
          (W/n + f_j, or a formula), else the next; the d-th is forced",
    params: &[
        ParamDef {
            name: "d",
            ty: ParamType::Int { lo: 2, hi: MAX_D },
            default: ParamDefault::Num(2.0),
            doc: "samples per ball at most (the last is forced)",
        },
        ParamDef {
            name: "f",
            ty: ParamType::List,
            default: ParamDefault::Unset,
            doc: "d - 1 offsets: keep the j-th sample if x < W/n + f_j (d = 2, f = [0]: \
                  mean_thinning)",
        },
        ParamDef {
            name: "threshold",
            ty: ParamType::Decision(VARS),
            default: ParamDefault::Unset,
            doc: "instead of f: keep the j-th sample if x < the formula, in j (1..d-1), \
                  avg (W/n), t (balls before this one) and n",
        },
    ],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: false,
    example: "threshold=avg",
    build: |a| {
        let item = &ITEM;
        let param = if a.given("threshold") { "threshold" } else { "f" };
        item.check(a).map_err(|why| a.refuse(param, why))?;
        Ok(ProcessSpec::Custom(CustomSpec::new(item, a.clone())))
    },
};

/// The process item `d_thinning`.
#[derive(Debug)]
pub struct DThinning;

/// The item behind the registry entry `d_thinning`.
pub static ITEM: DThinning = DThinning;

/// The thresholds of checked parameters.
#[derive(Clone, Debug)]
enum Thresholds {
    /// Offsets above the average, one per sample but the last.
    Offsets(Vec<f64>),
    /// One formula in [`VARS`].
    Formula(Formula),
}

/// The thresholds of `args`, or why they are not usable: exactly one of `f` (length
/// `d − 1`) and `threshold` (a formula) must be given.
fn thresholds(args: &Args) -> Result<Thresholds, String> {
    let d = args.int("d");
    match (args.list("f"), args.formula("threshold")) {
        (Some(_), Some(_)) => {
            Err("give either `f` (offsets above the average) or `threshold` (a formula), \
                 not both"
                .to_owned())
        }
        (None, None) => Err(format!(
            "give `f`, {} offset(s) above the average (one per sample but the last), or \
             `threshold`, a formula in j, avg, t, n",
            d - 1
        )),
        (Some(f), None) if f.len() != (d - 1) as usize => Err(format!(
            "`f` has {} entries; d = {d} samples need d - 1 = {} (the last sample is forced)",
            f.len(),
            d - 1
        )),
        (Some(f), None) => Ok(Thresholds::Offsets(f.to_vec())),
        (None, Some(src)) => Formula::parse_decision(&src, VARS)
            .map(Thresholds::Formula)
            .map_err(|why| format!("`threshold`: {why}")),
    }
}

/// Refuses a threshold formula in [`VARS`] that is NaN at a probe: `j` in 1..=min(last, 8)
/// and `last`, `t` at the first and last ball of `m`, `avg` at 0 and t/n. Infinite values
/// are allowed. `meaning` says what the value is (for the message). Used by `d_thinning`
/// (`last` = d − 1) and by `k_threshold`'s formula form (`last` = k).
pub(crate) fn check_probes(
    f: &Formula,
    last: u32,
    n: u64,
    m: u64,
    meaning: &str,
) -> Result<(), String> {
    let mut js: Vec<u32> = (1..=last.min(8)).collect();
    js.push(last);
    let mut stack = Vec::new();
    for j in js {
        for t in [0, m.saturating_sub(1)] {
            for avg in [0.0, t as f64 / n as f64] {
                let values = [f64::from(j), avg, t as f64, n as f64];
                if f.eval(&values, &mut stack).is_nan() {
                    return Err(format!(
                        "`threshold` \"{}\" is NaN at j = {j}, avg = {avg}, t = {t}, n = {n}: \
                         expected a number ({meaning})",
                        f.source()
                    ));
                }
            }
        }
    }
    Ok(())
}

impl ProcessItem for DThinning {
    fn name(&self) -> &'static str {
        "d_thinning"
    }

    fn rule(&self, args: &Args) -> Box<dyn CustomRule> {
        let thresholds = thresholds(args).expect("checked by ProcessItem::check");
        let keep = match thresholds {
            Thresholds::Offsets(f) => Keep::Offsets(f),
            Thresholds::Formula(f) => Keep::Formula(f.compiled()),
        };
        Box::new(ThinningRule { d: args.int("d"), keep })
    }

    fn check(&self, args: &Args) -> Result<(), String> {
        thresholds(args).map(|_| ())
    }

    fn check_run(&self, args: &Args, n: u64, m: u64) -> Result<(), String> {
        match thresholds(args)? {
            Thresholds::Formula(f) => {
                let meaning = "the load below which the j-th sample is kept";
                check_probes(&f, args.int("d") - 1, n, m, meaning)
            }
            Thresholds::Offsets(_) => Ok(()),
        }
    }

    fn levels(&self) -> Result<(), String> {
        Ok(()) // loads of samples, W/n, t and n
    }

    fn values_version(&self) -> u32 {
        crate::process::THINNING_PAIRS_VERSION // samples in pairs ([`ThinningRule::place`])
    }
}

/// The rule of one run.
struct ThinningRule {
    d: u32,
    keep: Keep,
}

/// The thresholds of one run: the offsets, or the formula compiled ([`Formula::compiled`]:
/// the interpreter's values, bit for bit).
enum Keep {
    Offsets(Vec<f64>),
    Formula(Compiled),
}

impl ThinningRule {
    /// Whether the `j`-th sample, bin `i`, is kept.
    fn keeps(&self, at: &mut dyn Decision, j: u32, i: usize, avg: f64) -> bool {
        let x = at.load(i);
        match &self.keep {
            Keep::Offsets(f) => x - avg < f[j as usize - 1],
            Keep::Formula(f) => x < f.eval(&[f64::from(j), avg, at.balls() as f64, at.n() as f64]),
        }
    }
}

impl CustomRule for ThinningRule {
    /// Samples are drawn in pairs, 1–2, 3–4, … (two-thinning's two bins from one random word,
    /// so that `d = 2` draws what Mean-Thinning draws); a sample is counted when the rule
    /// looks at it. With `d` odd the forced last sample is drawn alone.
    fn place(&mut self, at: &mut dyn Decision) -> usize {
        let avg = at.average();
        let mut j = 1;
        while j < self.d {
            let (a, b) = (at.sample_ahead(), at.sample_ahead());
            at.count_sample();
            if self.keeps(at, j, a, avg) {
                return a;
            }
            at.count_sample();
            if j + 1 == self.d || self.keeps(at, j + 1, b, avg) {
                return b;
            }
            j += 2;
        }
        at.sample()
    }
}
