//! Tight-Packing with distinct bins (`tight_packing` with `distinct = true`,
//! `docs/processes.md#tight_packing`), built as a process item ([`crate::item`]): an
//! underloaded sample starts a round of `c` balls, one into each of the `c` least loaded bins
//! at the round's start (ties at the cut broken uniformly at random), instead of each ball
//! to a bin least loaded when it is placed. The sample, the underload test (`x < W/n`) and
//! the count `c` (Packing's `⌈W/n⌉ + offset − x`, or the fixed `balls`) are the built-in's.
//! The round's balls are placed least loaded first; when `c > n` they cycle through the
//! `n` bins in that order (every bin gets `⌊c/n⌋` balls, the `c mod n` least loaded one
//! more). A round cut by the stop rule has placed its first balls in that order.
//!
//! `distinct = false` (the default) builds the catalogue's own rule
//! ([`crate::ProcessSpec::TightPacking`]); this item is what `distinct = true` builds, under
//! the same registry entry and kind name. Choosing the round's bins reads every load, O(n)
//! per round on bins.
//!
//! Level engine, sequential setting: the `c` least loaded bins are the first `min(c, n)`
//! positions of the sorted view, so a round reads `min(c, n)` loads and keeps, for each of
//! its balls, the load its bin will have when the ball lands (ball `b` to position
//! `b mod n` at the start, raised by its `⌊b/n⌋` earlier balls when `c > n`), not the
//! position, which the view relabels after every ball. Each ball goes to a bin now at that
//! load ([`Decision::bin_at_load`]), the bin engine's or one of the same load, so the
//! histogram after every ball has the bin engine's law (ties at the cut do not change
//! which loads receive balls). Batches stay on the bin engine: a round cut at a batch end
//! goes on in the next batch, whose sorted view no longer names the round's bins.

use rand::seq::SliceRandom;
use rand::Rng;

use crate::item::{CustomRule, Decision, ProcessItem};
use crate::params::Args;

/// The process item behind `tight_packing` with `distinct = true`.
#[derive(Debug)]
pub struct TightPackingDistinct {
    /// Test of the tests: on the level engine, keep the round's positions instead of its
    /// loads (wrong: the sorted view relabels bins after every ball).
    keep_positions: bool,
}

/// The item.
pub static ITEM: TightPackingDistinct = TightPackingDistinct { keep_positions: false };

/// A deliberately wrong level-engine variant, for the power of the law tests: ball `b` of a
/// round goes to position `b mod n` of the sorted view as it is when the ball lands, though
/// the view has moved bins between positions after the round's first ball.
#[doc(hidden)]
pub static KEEP_POSITIONS: TightPackingDistinct = TightPackingDistinct { keep_positions: true };

impl ProcessItem for TightPackingDistinct {
    fn name(&self) -> &'static str {
        "tight_packing"
    }

    fn rule(&self, args: &Args) -> Box<dyn CustomRule> {
        Box::new(Distinct {
            offset: args.int("offset"),
            fixed: args.opt_int("balls"),
            keep_positions: self.keep_positions,
            loads: Vec::new(),
            pending: Vec::new(),
            targets: Vec::new(),
        })
    }

    fn multi_ball(&self) -> bool {
        true
    }

    fn levels(&self) -> Result<(), String> {
        Ok(())
    }

    /// From 10 bins: the bin engine reads all n loads per round, the level engine the
    /// round's own. `ballast simulate --process tight_packing --param distinct=true --n N
    /// --m M --engine E --json`, `ns_per_ball` (bins / levels, 2 cores shared, load
    /// average 5): M = 10⁷: 77 / 34 at N = 10, 114 / 34 at 30, 227 / 34 at 100; M = 1000N:
    /// 1 368 / 34 at 10³, 12 780 / 34.7 at 10⁴ (best of 3); at 10⁵ 126 213 / 34 with
    /// M = 10⁶ (M = 10⁸ would take hours on bins), levels 35.3 with M = 10⁸.
    fn auto_levels_min_n(&self) -> Option<u64> {
        Some(10)
    }

    fn level_batches(&self) -> Result<(), String> {
        Err("the level engine simulates tight_packing with distinct = true sequentially only \
             (a round cut at a batch end goes on in the next batch, whose sorted view no \
             longer names the round's bins)"
            .to_owned())
    }
}

/// The rule of one run: the round's bins still to fill, and scratch space.
struct Distinct {
    offset: u32,
    fixed: Option<u32>,
    keep_positions: bool,
    /// (load, bin) of every bin, at a round's start.
    loads: Vec<(f64, usize)>,
    /// The round's bins still to receive a ball (the next one last).
    pending: Vec<usize>,
    /// On the sorted view: the loads of the round's bins when their balls land (the next
    /// one last).
    targets: Vec<f64>,
}

impl Distinct {
    /// The bins of a round of `c` balls: ball `b` to the `b`-th least loaded bin at the
    /// round's start (ties in random order), cycling when `c > n`.
    fn start(&mut self, c: usize, at: &mut dyn Decision) {
        let n = at.n();
        if at.relabelled() {
            // The sorted view: the least loaded bins are the first positions.
            let k = c.min(n);
            if self.keep_positions {
                self.pending.extend((0..c).rev().map(|b| b % k));
                return;
            }
            self.loads.clear();
            self.loads.extend((0..k).map(|p| (at.load(p), p)));
            let loads = &self.loads;
            self.targets.extend((0..c).rev().map(|b| loads[b % k].0 + (b / k) as f64));
            return;
        }
        self.loads.clear();
        self.loads.extend((0..n).map(|i| (at.load(i), i)));
        let k = if c >= n {
            // All bins in order: a uniform shuffle, then a stable sort by load.
            self.loads.shuffle(at.rng());
            self.loads.sort_by(|a, b| a.0.total_cmp(&b.0));
            n
        } else {
            self.least(c, at)
        };
        let loads = &self.loads;
        self.pending.extend((0..c).rev().map(|b| loads[b % k].1));
    }

    /// Moves the `k` least loaded bins (`0 < k < n`, a tie at the cut broken by a uniform
    /// subset) to the front of `loads`; returns `k`.
    fn least(&mut self, k: usize, at: &mut dyn Decision) -> usize {
        let by_load = |a: &(f64, usize), b: &(f64, usize)| a.0.total_cmp(&b.0);
        self.loads.select_nth_unstable_by(k - 1, by_load);
        let cut = self.loads[k - 1].0;
        // Tied with the cut: those in front of it and those behind it.
        let (front, back) = self.loads.split_at_mut(k);
        let below = front.iter().filter(|e| e.0 < cut).count();
        front.sort_unstable_by(by_load);
        let mut tied: Vec<usize> = front[below..].iter().map(|e| e.1).collect();
        tied.extend(back.iter().filter(|e| e.0 == cut).map(|e| e.1));
        // A uniform (k − below)-subset of the tied bins: partial Fisher–Yates.
        let rng = at.rng();
        for p in 0..k - below {
            let q = rng.random_range(p..tied.len());
            tied.swap(p, q);
        }
        for (slot, &bin) in front[below..].iter_mut().zip(&tied) {
            *slot = (cut, bin);
        }
        k
    }
}

impl CustomRule for Distinct {
    fn place(&mut self, at: &mut dyn Decision) -> usize {
        if let Some(x) = self.targets.pop() {
            return at.bin_at_load(x).expect("a bin of the round is at its ball's load");
        }
        if let Some(bin) = self.pending.pop() {
            return bin;
        }
        let i = at.sample();
        let (x, avg, n) = (at.load(i), at.average(), at.n() as f64);
        if x >= avg {
            return i;
        }
        let c = match self.fixed {
            Some(b) => b.max(1) as usize,
            None => {
                // Unit balls: W = avg·n is an integer.
                let w = (avg * n).round();
                ((w / n).ceil() + f64::from(self.offset) - x) as usize
            }
        };
        self.start(c, at);
        self.place(at)
    }

    fn in_round(&self) -> bool {
        !self.pending.is_empty() || !self.targets.is_empty()
    }
}
