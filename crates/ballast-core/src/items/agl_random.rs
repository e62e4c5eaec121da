//! Always-Go-Left with random tie-breaking (`always_go_left` with `ties = "random"`,
//! `docs/processes.md#always_go_left`), built as a process item ([`crate::item`]): the
//! ablation of Vöcking's asymmetry. The groups and samples are those of `always_go_left`
//! (`d` contiguous groups, one uniform sample in each); the ball goes to a least loaded
//! sample, ties broken uniformly at random among the tied samples instead of to the left.
//!
//! `ties = "left"` (the default) builds the catalogue's own rule
//! ([`crate::ProcessSpec::AlwaysGoLeft`]); this item is what `ties = "random"` builds, under
//! the same registry entry and kind name. A tie is settled by a reservoir draw: the c-th
//! sample tied with the best so far replaces it with probability 1/c, so random numbers are
//! drawn only at ties and, between ties, the samples are the built-in's.
//!
//! The rule reads bin identities (the groups), so only the bin engine runs it.

use rand::Rng;

use crate::item::{CustomRule, Decision, ProcessItem};
use crate::params::Args;

/// The process item behind `always_go_left` with `ties = "random"`.
#[derive(Debug)]
pub struct AlwaysGoLeftRandomTies;

/// The item.
pub static ITEM: AlwaysGoLeftRandomTies = AlwaysGoLeftRandomTies;

impl ProcessItem for AlwaysGoLeftRandomTies {
    fn name(&self) -> &'static str {
        "always_go_left"
    }

    fn rule(&self, args: &Args) -> Box<dyn CustomRule> {
        Box::new(RandomTies { d: args.int("d") as usize })
    }

    fn check_run(&self, args: &Args, n: u64, _m: u64) -> Result<(), String> {
        let d = args.int("d");
        if u64::from(d) > n {
            return Err(format!("d = {d} groups need d <= n = {n} bins (one sample per group)"));
        }
        Ok(())
    }

    fn levels(&self) -> Result<(), String> {
        Err("process `always_go_left` samples in groups of bin indices".to_owned())
    }
}

/// The rule: one sample per group, a least loaded one, ties uniform.
struct RandomTies {
    d: usize,
}

impl CustomRule for RandomTies {
    fn place(&mut self, at: &mut dyn Decision) -> usize {
        let n = at.n();
        let (mut best, mut best_load, mut tied) = (0, f64::INFINITY, 0u32);
        for g in 0..self.d {
            let (lo, hi) = (g * n / self.d, (g + 1) * n / self.d);
            let i = at.sample_in(lo, hi);
            let x = at.load(i);
            if x < best_load {
                (best, best_load, tied) = (i, x, 1);
            } else if x == best_load {
                tied += 1;
                if at.rng().random_range(0..tied) == 0 {
                    best = i;
                }
            }
        }
        best
    }
}
