//! Processes declared outside the built-in catalogue: the [`ProcessItem`] trait a process
//! implements (its name, its rule for one run, its checks and whether the level engine may
//! run it), the [`Decision`] its rule sees at every ball, and [`CustomSpec`], the
//! [`crate::ProcessSpec::Custom`] payload that carries an item and its checked parameters
//! through the engines.
//!
//! An item is registered with [`crate::registry::register`] beside a
//! [`crate::registry::ProcessDef`] (its parameters, settings and documentation); from then on
//! configs, `ballast simulate`, `ballast list`, the runner and Python reach it exactly as a
//! built-in. The bin engine runs its rule on every setting the declaration allows; the level
//! engine runs the same rule on the sorted view of the loads when the item says its rule
//! reads only loads ([`ProcessItem::levels`]), batches decision by decision on the frozen
//! view unless [`ProcessItem::level_batches`] refuses them.
//!
//! The rule is called through a trait object, one call per ball, with the loads and the
//! random numbers behind trait objects too: a few nanoseconds per ball more than a built-in
//! rule, which the engines monomorphise.
//!
//! ```
//! use ballast_core::item::{Decision, ProcessItem, CustomRule};
//! use ballast_core::registry::Args;
//!
//! /// The heavier of two uniform samples (the second on a tie).
//! #[derive(Debug)]
//! struct Heavier;
//!
//! struct HeavierRule;
//!
//! impl CustomRule for HeavierRule {
//!     fn place(&mut self, at: &mut dyn Decision) -> usize {
//!         let (a, b) = (at.sample(), at.sample());
//!         if at.load(a) > at.load(b) { a } else { b }
//!     }
//! }
//!
//! impl ProcessItem for Heavier {
//!     fn name(&self) -> &'static str {
//!         "heavier_of_two"
//!     }
//!     fn rule(&self, _args: &Args) -> Box<dyn CustomRule> {
//!         Box::new(HeavierRule)
//!     }
//!     fn levels(&self) -> Result<(), String> {
//!         Ok(()) // reads only loads, through uniform samples
//!     }
//! }
//! # let _ = Heavier;
//! ```

use std::fmt;

use rand::RngCore;

use crate::params::Args;

/// What a rule sees and draws at one decision: the loads as the setting shows them (frozen
/// at the batch start in the batched setting), uniform (or, under a biased law, biased)
/// samples, and the run's random numbers.
pub trait Decision {
    /// Number of bins.
    fn n(&self) -> usize;
    /// The load of bin `bin` (`0 <= bin < n`). On the level engine bins are positions in
    /// the sorted view, so only loads and samples are meaningful, not bin identities.
    fn load(&mut self, bin: usize) -> f64;
    /// The average load `W/n`.
    fn average(&mut self) -> f64;
    /// Balls placed before this decision (batched: before the batch).
    fn balls(&self) -> u64;
    /// A random bin drawn by the run's sampling law (uniform by default), counted as one
    /// sample in the run's outcome.
    fn sample(&mut self) -> usize;
    /// A sample drawn ahead of need: the bin [`Decision::sample`] would give, not counted.
    /// A rule that draws two samples together (as two-thinning does, two bins from one
    /// random word) counts each with [`Decision::count_sample`] when it looks at it.
    fn sample_ahead(&mut self) -> usize;
    /// Counts one sample drawn with [`Decision::sample_ahead`] in the run's outcome.
    fn count_sample(&mut self);
    /// A uniform bin in `lo..hi` (`lo < hi <= n`), whatever the run's sampling law, counted
    /// as one sample: for rules that sample inside a group of bins (Always-Go-Left), whose
    /// declaration then refuses biased sampling.
    fn sample_in(&mut self, lo: usize, hi: usize) -> usize;
    /// The run's random numbers, for the rule's own coins.
    fn rng(&mut self) -> &mut dyn RngCore;
    /// Whether bins are positions in the sorted view of the loads, sorted again after every
    /// ball (the sequential level engine): a position then names a bin only until the next
    /// ball lands. A rule that decides several balls at once keeps the loads of its bins
    /// and places each ball into *a* bin at the right load ([`Decision::bin_at_load`]);
    /// bins of one load are exchangeable there. False on the bin engine, and in batches on
    /// the level engine (positions of the frozen view stay put within a batch).
    fn relabelled(&self) -> bool {
        false
    }
    /// A bin whose load is `load`, if any: on the level engine the first position of that
    /// load's level (O(1)); on bins the first such bin (O(n)).
    fn bin_at_load(&mut self, load: f64) -> Option<usize> {
        (0..self.n()).find(|&i| self.load(i) == load)
    }
}

/// The rule of one run: called once per ball, it returns the bin the ball goes to. It may
/// keep state between balls (a cache); a fresh one is made for every run.
pub trait CustomRule: Send {
    /// The bin of the next ball.
    fn place(&mut self, at: &mut dyn Decision) -> usize;
    /// How many balls this step places in `bin`, the bin [`CustomRule::place`] just chose
    /// (at least 1): 1 unless the process places several balls per step, as the Filling
    /// processes do (then its item says [`ProcessItem::multi_ball`]). A step that would pass
    /// `m` is cut or completed by the run's stop rule.
    fn balls(&mut self, _bin: usize, _at: &mut dyn Decision) -> u32 {
        1
    }
    /// Whether the step this rule is in is unfinished: a step that places its balls into
    /// several bins, one [`CustomRule::place`] call per ball (decided at the step's start,
    /// as `kd_choice` does). The engines then count one step for the whole round, and the
    /// stop rule `finish` completes it; false by default (every call starts a step).
    fn in_round(&self) -> bool {
        false
    }
}

/// A process kind declared as one item: everything the engines need of it. Its parameters,
/// settings and documentation are declared beside it in a
/// [`crate::registry::ProcessDef`]; ranges are checked from that declaration before
/// [`ProcessItem::check`] sees them.
pub trait ProcessItem: Sync + fmt::Debug {
    /// The kind name (`kind = "…"` in configs); the same as its `ProcessDef`'s.
    fn name(&self) -> &'static str;
    /// A fresh rule for one run, from the checked parameters.
    fn rule(&self, args: &Args) -> Box<dyn CustomRule>;
    /// Checks across parameters (single ranges come from the declaration); the message
    /// says what is wrong and what would be right.
    fn check(&self, _args: &Args) -> Result<(), String> {
        Ok(())
    }
    /// Checks that need the run's size, `n` bins and `m` balls (a formula probed over the
    /// values a run can give it); run at validation, after [`ProcessItem::check`].
    fn check_run(&self, _args: &Args, _n: u64, _m: u64) -> Result<(), String> {
        Ok(())
    }
    /// Whether a step may place several balls ([`CustomRule::balls`]): the run's stop rule
    /// then applies to its last step.
    fn multi_ball(&self) -> bool {
        false
    }
    /// `Ok` if the level engine may run the rule on the sorted loads: the rule reads only
    /// loads and samples (never a bin's identity), so bins of one level are exchangeable.
    /// Otherwise the reason, which the engine choice shows for `engine = "levels"` (followed
    /// by the advice to use the bin engine).
    fn levels(&self) -> Result<(), String> {
        Err(format!(
            "process `{}` declares no level law (its rule may read bin identities)",
            self.name()
        ))
    }
    /// `Ok` if the level engine may also run the rule in the batched setting (every
    /// decision on the frozen sorted view, `level/frozen.rs`), asked only when
    /// [`ProcessItem::levels`] is `Ok`; otherwise the reason.
    fn level_batches(&self) -> Result<(), String> {
        Ok(())
    }
    /// The smallest `n` from which `engine = "auto"` runs the rule on the level engine in
    /// the sequential setting (when [`ProcessItem::levels`] is `Ok`): a crossover measured
    /// against the bin engine, `Some(u64::MAX)` to stay on bins. `None` (the default): the
    /// crossover of the rules that run through the level engine's generic loop
    /// (`AUTO_SEQUENTIAL_MIN_N`, 2²⁰).
    fn auto_levels_min_n(&self) -> Option<u64> {
        None
    }
    /// The value version of the last change to the rule's random draws (0, the default:
    /// none since process items exist), which the checkpoint keys of its runs name so that
    /// stored runs of older draws are not reused. `d_thinning`: 11, its samples in pairs
    /// ([`crate::process::THINNING_PAIRS_VERSION`]).
    fn values_version(&self) -> u32 {
        0
    }
}

/// A process item with its checked parameters: the payload of
/// [`crate::ProcessSpec::Custom`]. Two specs are equal when they name the same kind with
/// the same parameters.
#[derive(Clone)]
pub struct CustomSpec {
    item: &'static dyn ProcessItem,
    args: std::sync::Arc<Args>,
    /// Its declaration's `unit_weights_only` (set when the registry builds the spec).
    unit_weights_only: bool,
}

impl CustomSpec {
    /// The item `item` with the parameters `args` (checked by its declaration).
    pub fn new(item: &'static dyn ProcessItem, args: Args) -> Self {
        Self { item, args: std::sync::Arc::new(args), unit_weights_only: false }
    }

    /// Whether its declaration admits unit balls only
    /// ([`crate::registry::ProcessDef::unit_weights_only`]; false for a spec made by hand).
    pub fn unit_weights_only(&self) -> bool {
        self.unit_weights_only
    }

    /// Records its declaration's `unit_weights_only` (done by
    /// [`crate::registry::ProcessDef::build`]).
    pub fn set_unit_weights_only(&mut self, unit_only: bool) {
        self.unit_weights_only = unit_only;
    }

    /// The item.
    pub fn item(&self) -> &'static dyn ProcessItem {
        self.item
    }

    /// The checked parameters.
    pub fn args(&self) -> &Args {
        &self.args
    }

    /// A fresh rule for one run.
    pub fn rule(&self) -> Box<dyn CustomRule> {
        self.item.rule(&self.args)
    }
}

impl fmt::Debug for CustomSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Custom({} {:?})", self.item.name(), self.args.values())
    }
}

impl PartialEq for CustomSpec {
    fn eq(&self, other: &Self) -> bool {
        self.item.name() == other.item.name() && self.args.values() == other.args.values()
    }
}
