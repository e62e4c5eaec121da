//! The `filling_rule` process (`docs/processes.md#filling_rule`): a Filling rule written as
//! a formula, built as a process item ([`crate::item`]). Each step samples one bin (by the
//! run's sampling law) and places in it the number of balls the formula gives; steps repeat
//! until `m` balls are placed (the run's stop rule says what happens to a step that would pass
//! `m`). Its declaration (parameters, settings) is [`DEF`], listed by
//! the registry; everything else is here too.
//!
//! The variables ([`VARS`]): `x`, the sampled bin's load; `avg`, the average load W/n the
//! step sees; `t`, the balls placed before the step (batched: before the batch); `n`; and
//! `u`, a uniform number in [0, 1) drawn after the sample (53 bits of one word), only when
//! the formula reads it. Twinning is `if(x < avg, 2, 1)`; Packing with offset 1 is
//! `if(x < avg, ceil(avg) + 1 - x, 1)`.
//!
//! The formula is compiled once per run (to closures, [`Formula::compiled`]) and evaluated
//! once per step. A value that is not an integer in 1..=[`MAX_BALLS`] is refused at
//! validation where a probe of the formula's range finds it ([`check_probes`]); one that only
//! a run finds stops the run with the values that gave it (a panic: the rule cannot place that
//! step), as for the `rule` process. The rule reads loads and samples only, so the level
//! engine runs it on the sorted loads.

use crate::def::{ProcessDef, BATCHED, NO_TIES};
use crate::formula::{Compiled, Formula};
use crate::item::{CustomRule, CustomSpec, Decision, ProcessItem};
use crate::params::{Args, ParamDef, ParamDefault, ParamType};
use crate::spec::ProcessSpec;

/// The variables of a filling formula, in evaluation order.
pub const VARS: &[&str] = &["x", "avg", "t", "n", "u"];

/// The most balls one step places.
pub const MAX_BALLS: u32 = 1_000_000;

const X: usize = 0;
const AVG: usize = 1;
const T: usize = 2;
const N: usize = 3;
const U: usize = 4;

/// Reads a filling formula (the decision grammar in [`VARS`]).
pub fn parse(src: &str) -> Result<Formula, String> {
    Formula::parse_decision(src, VARS)
}

/// Refuses a formula whose value is not an integer in 1..=[`MAX_BALLS`] at a probe of its
/// range: the sampled load `x` in 0..=8 and `avg` in {0, x − 1, x − ½, x, x + ½, x + 1}
/// (where not negative), `t` at the first and last ball of a run of `m` balls into `n` bins,
/// and `u` in {0, 0.5, 0.999}. The error names the probe.
pub fn check_probes(f: &Formula, n: u64, m: u64) -> Result<(), String> {
    let mut stack = Vec::new();
    for x in 0..=8u32 {
        let x = f64::from(x);
        let avgs = [0.0, x - 1.0, x - 0.5, x, x + 0.5, x + 1.0];
        for avg in avgs.into_iter().filter(|a| *a >= 0.0) {
            for t in [0.0, m.saturating_sub(1) as f64] {
                for u in [0.0, 0.5, 0.999] {
                    let values = [x, avg, t, n as f64, u];
                    let v = f.eval(&values, &mut stack);
                    if balls(v).is_none() {
                        return Err(format!(
                            "filling formula \"{}\" gives {v} at {}: expected an integer in \
                             1..={MAX_BALLS} (the balls to place in the sampled bin)",
                            f.source(),
                            describe(&values)
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

fn describe(values: &[f64; VARS.len()]) -> String {
    format!(
        "x = {}, avg = {}, t = {}, n = {}, u = {}",
        values[X], values[AVG], values[T], values[N], values[U]
    )
}

/// The balls of a formula value, if it is an integer in 1..=[`MAX_BALLS`].
#[inline(always)]
fn balls(v: f64) -> Option<u32> {
    (v.fract() == 0.0 && v >= 1.0 && v <= f64::from(MAX_BALLS)).then_some(v as u32)
}

/// The declaration of `filling_rule`, listed in [`crate::registry::PROCESSES`].
pub const DEF: ProcessDef = ProcessDef {
    name: "filling_rule",
    doc: "one sample; a formula gives the balls to place in it (a Filling rule), e.g. \
          if(x < avg, 2, 1) for Twinning",
    params: &[ParamDef {
        name: "balls",
        ty: ParamType::Decision(VARS),
        default: ParamDefault::Required,
        doc: "balls for the sampled bin (an integer in 1..=1000000), in x (its load), avg \
              (W/n), t (balls before this step), n and u (a uniform in [0, 1), drawn only \
              when read); with if, comparisons, &&, ||, !",
    }],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: true,
    example: "",
    build: |a| {
        ITEM.check(a).map_err(|why| a.refuse("balls", why))?;
        Ok(ProcessSpec::Custom(CustomSpec::new(&ITEM, a.clone())))
    },
};

/// The process item `filling_rule`.
#[derive(Debug)]
pub struct FillingRule;

/// The item behind the registry entry `filling_rule`.
pub static ITEM: FillingRule = FillingRule;

/// The formula of checked parameters (the registry entry declares `balls`, required).
fn formula(args: &Args) -> Result<Formula, String> {
    let src = args.formula("balls").ok_or_else(|| "`balls` is required".to_owned())?;
    parse(&src).map_err(|why| format!("`balls`: {why}"))
}

impl ProcessItem for FillingRule {
    fn name(&self) -> &'static str {
        "filling_rule"
    }

    fn rule(&self, args: &Args) -> Box<dyn CustomRule> {
        let f = formula(args).expect("checked by ProcessItem::check");
        let (reads_avg, reads_u) = (f.uses("avg"), f.uses("u"));
        let compiled = f.compiled();
        Box::new(FillFormula { f, compiled, reads_avg, reads_u, values: [0.0; VARS.len()] })
    }

    fn check(&self, args: &Args) -> Result<(), String> {
        formula(args).map(|_| ())
    }

    fn check_run(&self, args: &Args, n: u64, m: u64) -> Result<(), String> {
        check_probes(&formula(args)?, n, m)
    }

    fn levels(&self) -> Result<(), String> {
        Ok(()) // one uniform sample, its load, W/n, t, n and u
    }

    fn multi_ball(&self) -> bool {
        true
    }
}

/// The rule of one run: the formula and its values.
struct FillFormula {
    f: Formula,
    /// `f` compiled ([`Formula::compiled`]: the same values, faster).
    compiled: Compiled,
    reads_avg: bool,
    reads_u: bool,
    values: [f64; VARS.len()],
}

impl CustomRule for FillFormula {
    fn place(&mut self, at: &mut dyn Decision) -> usize {
        at.sample()
    }

    fn balls(&mut self, bin: usize, at: &mut dyn Decision) -> u32 {
        self.values[X] = at.load(bin);
        if self.reads_avg {
            self.values[AVG] = at.average();
        }
        self.values[T] = at.balls() as f64;
        self.values[N] = at.n() as f64;
        if self.reads_u {
            self.values[U] = (at.rng().next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        }
        let v = self.compiled.eval(&self.values);
        match balls(v) {
            Some(balls) => balls,
            None => panic!(
                "filling formula \"{}\" gives {v} at {}: expected an integer in 1..={MAX_BALLS}",
                self.f.source(),
                describe(&self.values)
            ),
        }
    }
}
