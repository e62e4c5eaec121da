//! The `kd_choice` process (`docs/processes.md#kd_choice`), built as a process item
//! ([`crate::item`]): the (k, d)-choice process (Park, arXiv 1201.3310). Each step samples
//! `d` bins and places `k` balls, one into each of the `k` least loaded samples, ties broken
//! uniformly at random. Its registry entry (parameters, settings) is `kd_choice` in
//! [`crate::registry::PROCESSES`]; everything else is here.
//!
//! Sampling: `d` distinct bins by default (Park's process; drawn by the run's sampling law,
//! a repeated bin drawn again, every draw counted as a sample), or `d` independent draws with
//! `replacement = true` (a bin drawn twice is two candidates and may get two balls). `k = 1`
//! is d-Choice.
//!
//! A step is a round of `k` balls, all decided on the loads at its start and then placed one
//! call at a time ([`crate::item::CustomRule::in_round`]): the run's stop rule cuts the last
//! round at `m` (`truncate`) or completes it (`finish`); in the batched setting a round
//! decided in one batch may place its last balls in the next. The level engine does not run
//! it: the round's bins are kept between balls, and positions in the sorted view of the
//! loads do not stay attached to bins once a ball moves one.

use rand::Rng;

use crate::item::{CustomRule, Decision, ProcessItem};
use crate::params::Args;

/// The most samples per step.
pub const MAX_D: u32 = 1024;

/// The process item `kd_choice`.
#[derive(Debug)]
pub struct KdChoice;

/// The item behind the registry entry `kd_choice`.
pub static ITEM: KdChoice = KdChoice;

/// The name of the sampling parameter (the other processes' `replacement`).
const REPLACEMENT: &str = crate::process::distinct::OPTION;

impl ProcessItem for KdChoice {
    fn name(&self) -> &'static str {
        "kd_choice"
    }

    fn rule(&self, args: &Args) -> Box<dyn CustomRule> {
        Box::new(KdRule {
            k: args.int("k") as usize,
            d: args.int("d") as usize,
            distinct: !args.flag(REPLACEMENT),
            draws: Vec::new(),
            pending: Vec::new(),
        })
    }

    fn check(&self, args: &Args) -> Result<(), String> {
        let (k, d) = (args.int("k"), args.int("d"));
        if k > d {
            return Err(format!("k = {k} balls need k <= d samples (d = {d})"));
        }
        Ok(())
    }

    fn check_run(&self, args: &Args, n: u64, _m: u64) -> Result<(), String> {
        let d = args.int("d");
        if !args.flag(REPLACEMENT) && u64::from(d) > n {
            return Err(format!(
                "d = {d} distinct samples need d <= n = {n} bins (or replacement = true)"
            ));
        }
        Ok(())
    }

    fn multi_ball(&self) -> bool {
        true
    }

    fn levels(&self) -> Result<(), String> {
        Err("process `kd_choice` keeps the k bins of a step between its balls, which the \
             sorted view of the loads does not keep apart"
            .to_owned())
    }
}

/// The rule of one run: the round's bins still to fill, and scratch space.
struct KdRule {
    k: usize,
    d: usize,
    distinct: bool,
    /// The step's draws: (bin, load).
    draws: Vec<(usize, f64)>,
    /// The bins of the current round still to receive a ball (the next one last).
    pending: Vec<usize>,
}

impl KdRule {
    /// Starts a round: `d` draws, the `k` least loaded kept, a tie at the cut broken by a
    /// uniform choice among the tied draws.
    fn start(&mut self, at: &mut dyn Decision) {
        self.draws.clear();
        let n = at.n();
        assert!(!self.distinct || self.d <= n, "{} distinct samples of {n} bins", self.d);
        while self.draws.len() < self.d {
            let i = at.sample();
            if self.distinct && self.draws.iter().any(|&(b, _)| b == i) {
                continue;
            }
            let x = at.load(i);
            self.draws.push((i, x));
        }
        // Stable: draws of one load stay in draw order; randomness only at a tie at the cut.
        self.draws.sort_by(|a, b| a.1.total_cmp(&b.1));
        let k = self.k;
        if k < self.d && self.draws[k].1 == self.draws[k - 1].1 {
            let cut = self.draws[k - 1].1;
            let lo = self.draws.partition_point(|e| e.1 < cut);
            let hi = self.draws.partition_point(|e| e.1 <= cut);
            // A uniform (k − lo)-subset of the tied draws lo..hi: partial Fisher–Yates.
            let rng = at.rng();
            for p in lo..k {
                let q = rng.random_range(p..hi);
                self.draws.swap(p, q);
            }
        }
        self.pending.extend(self.draws[..k].iter().rev().map(|e| e.0));
    }
}

impl CustomRule for KdRule {
    fn place(&mut self, at: &mut dyn Decision) -> usize {
        if self.pending.is_empty() {
            self.start(at);
        }
        self.pending.pop().expect("a round places k >= 1 balls")
    }

    fn in_round(&self) -> bool {
        !self.pending.is_empty()
    }
}
