//! `own-process`: the `ballast` program plus one process of this crate, `lighter_by`: two
//! uniform samples; the ball goes to the first unless the second is lighter by at least `k`.
//! Every `ballast` subcommand works for it: `own-process simulate --process lighter_by
//! --param k=2 --n 1000 --m 100000`, `own-process run configs/sweep.toml --out out`,
//! `own-process list`, `own-process plot`.

use ballast_core::item::{CustomRule, CustomSpec, Decision, ProcessItem};
use ballast_core::registry::{Args, ParamDef, ParamDefault, ParamType, ProcessDef, Settings};
use ballast_core::ProcessSpec;

/// The process as one item.
#[derive(Debug)]
struct LighterBy;

/// The rule of one run.
struct Rule {
    k: f64,
}

impl CustomRule for Rule {
    fn place(&mut self, at: &mut dyn Decision) -> usize {
        let (first, second) = (at.sample(), at.sample());
        if at.load(second) <= at.load(first) - self.k {
            second
        } else {
            first
        }
    }
}

impl ProcessItem for LighterBy {
    fn name(&self) -> &'static str {
        "lighter_by"
    }
    fn rule(&self, args: &Args) -> Box<dyn CustomRule> {
        Box::new(Rule { k: args.num("k") })
    }
    fn levels(&self) -> Result<(), String> {
        // It reads the loads of uniform samples only: the level engine may run it.
        Ok(())
    }
}

static ITEM: LighterBy = LighterBy;

/// Its registry entry: the parameter's range and default are declared here, once.
static LIGHTER_BY: ProcessDef = ProcessDef {
    name: "lighter_by",
    doc: "two samples: the first, unless the second is lighter by at least k",
    params: &[ParamDef::new(
        "k",
        ParamType::NonNeg,
        ParamDefault::Num(2.0),
        "how much lighter the second sample must be",
    )],
    ties: &[],
    settings: Settings { batched: true, delay: false, biased: true },
    unit_weights_only: false,
    build: |a| Ok(ProcessSpec::Custom(CustomSpec::new(&ITEM, a.clone()))),
    example: "",
};

fn main() {
    ballast_cli::main_with(&[&LIGHTER_BY])
}
