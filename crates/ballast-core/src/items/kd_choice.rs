//! The `kd_choice` process (`docs/processes.md#kd_choice`), built as a process item
//! ([`crate::item`]): the (k, d)-choice process (Park, arXiv 1201.3310). Each step samples
//! `d` bins and places `k` balls, one into each of the `k` least loaded samples, ties broken
//! uniformly at random. Its declaration (parameters, settings) is [`DEF`],
//! listed by the registry; everything else is here too.
//!
//! Sampling: `d` distinct bins by default (Park's process; drawn by the run's sampling law,
//! a repeated bin drawn again, every draw counted as a sample), or `d` independent draws with
//! `replacement = true` (a bin drawn twice is two candidates and may get two balls). `k = 1`
//! is d-Choice.
//!
//! A step is a round of `k` balls, all decided on the loads at its start and then placed one
//! call at a time ([`crate::item::CustomRule::in_round`]): the run's stop rule cuts the last
//! round at `m` (`truncate`) or completes it (`finish`); in the batched setting a round
//! decided in one batch may place its last balls in the next.
//!
//! Level engine, sequential setting: the round is drawn and decided exactly as on bins
//! (positions of the sorted view at the round's start are bins), and then kept as the
//! *loads* its balls go to, not as positions (which the sorted view relabels after every
//! ball): the chosen bins' loads `ℓ_1 <= … <= ℓ_k`, a bin chosen twice (with
//! replacement) one level higher for its second ball. Each ball goes to a bin now at its
//! load ([`Decision::bin_at_load`]): that is the bin the bin engine would fill, or one of
//! the same load, so the histogram after every ball has the bin engine's law. Batches stay
//! on the bin engine: a round cut at a batch end would continue on the next batch's view,
//! whose positions no longer name the round's bins.

use rand::Rng;

use crate::def::{ProcessDef, BATCHED, NO_TIES};
use crate::item::{CustomRule, CustomSpec, Decision, ProcessItem};
use crate::params::{Args, ParamDef, ParamDefault, ParamType};
use crate::spec::ProcessSpec;

/// The most samples per step.
pub const MAX_D: u32 = 1024;

/// The declaration of `kd_choice`, listed in [`crate::registry::PROCESSES`].
pub const DEF: ProcessDef = ProcessDef {
    name: "kd_choice",
    doc: "Park's (k, d)-choice: d samples; k balls, one into each of the k least loaded \
          (ties at random)",
    params: &[
        ParamDef {
            name: "k",
            ty: ParamType::Int { lo: 1, hi: MAX_D },
            default: ParamDefault::Required,
            doc: "balls per step (k <= d)",
        },
        ParamDef {
            name: "d",
            ty: ParamType::Int { lo: 1, hi: MAX_D },
            default: ParamDefault::Required,
            doc: "samples per step",
        },
        ParamDef {
            name: crate::process::distinct::OPTION,
            ty: ParamType::Bool,
            default: ParamDefault::Bool(false),
            doc: "sample with replacement (default false: d distinct bins, Park's, d <= n)",
        },
    ],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: false,
    example: "",
    build: |a| {
        let item = &ITEM;
        item.check(a).map_err(|why| a.refuse("k", why))?;
        Ok(ProcessSpec::Custom(CustomSpec::new(item, a.clone())))
    },
};

/// The process item `kd_choice`.
#[derive(Debug)]
pub struct KdChoice {
    /// Test of the tests: a deliberate error on the level engine.
    flaw: Option<LevelFlaw>,
}

/// The item behind the registry entry `kd_choice`.
pub static ITEM: KdChoice = KdChoice { flaw: None };

/// Deliberately wrong level-engine variants, for the power of the law tests.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LevelFlaw {
    /// The round's balls go to the positions drawn at its start, as on bins, though the
    /// sorted view moves a bin between positions with every ball. (Exact in law with
    /// replacement, by symmetry; wrong for distinct samples.)
    KeepPositions,
    /// A bin chosen twice gets its second ball at the load it had at the round's start,
    /// into another bin of that load if there is one (else into itself).
    SameLevel,
}

/// [`LevelFlaw::KeepPositions`].
#[doc(hidden)]
pub static KEEP_POSITIONS: KdChoice = KdChoice { flaw: Some(LevelFlaw::KeepPositions) };

/// [`LevelFlaw::SameLevel`].
#[doc(hidden)]
pub static SAME_LEVEL: KdChoice = KdChoice { flaw: Some(LevelFlaw::SameLevel) };

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
            flaw: self.flaw,
            draws: Vec::new(),
            pending: Vec::new(),
            loads: Vec::new(),
            repeats: Vec::new(),
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
        Ok(())
    }

    /// Never: the level engine is slower here. `ballast simulate --process kd_choice
    /// --param k=2 --param d=3 [--param replacement=true] --n N --m 1000N --engine E
    /// --json`, `ns_per_ball`, best of 3, 2 cores shared (load average 5): distinct, bins
    /// 29.0 / levels 45.1 at N = 10⁴, 31.3 / 51.8 at 10⁵; with replacement 28.7 / 50.9 and
    /// 30.0 / 60.0. (A round's draws, its loads and each ball's bin go through the item's
    /// trait objects, and each ball looks up its level twice.)
    fn auto_levels_min_n(&self) -> Option<u64> {
        Some(u64::MAX)
    }

    fn level_batches(&self) -> Result<(), String> {
        Err("the level engine simulates kd_choice sequentially only (a round cut at a batch \
             end goes on in the next batch, whose sorted view no longer names the round's \
             bins)"
            .to_owned())
    }
}

/// The rule of one run: the round's bins (or loads) still to fill, and scratch space.
struct KdRule {
    k: usize,
    d: usize,
    distinct: bool,
    flaw: Option<LevelFlaw>,
    /// The step's draws: (bin, load).
    draws: Vec<(usize, f64)>,
    /// The bins of the current round still to receive a ball (the next one last).
    pending: Vec<usize>,
    /// On the sorted view: the loads of the bins of the current round still to receive a
    /// ball, each as it will be when its ball lands (the next one last).
    loads: Vec<f64>,
    /// Scratch: (bin, rank in the round) of the round's balls, to count repeated bins.
    repeats: Vec<(usize, usize)>,
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
        if at.relabelled() && self.flaw != Some(LevelFlaw::KeepPositions) {
            self.keep_loads();
        } else {
            self.pending.extend(self.draws[..k].iter().rev().map(|e| e.0));
        }
    }

    /// The round's balls as loads (the sorted view): `draws[..k]` in the order of the
    /// balls, a bin's load raised by the balls it gets earlier in the round (a bin drawn
    /// several times, with replacement).
    fn keep_loads(&mut self) {
        let k = self.k;
        self.loads.clear();
        self.loads.extend(self.draws[..k].iter().rev().map(|e| e.1));
        if self.distinct || self.flaw == Some(LevelFlaw::SameLevel) {
            return;
        }
        self.repeats.clear();
        self.repeats.extend(self.draws[..k].iter().enumerate().map(|(r, e)| (e.0, r)));
        // By bin, then by the order of the balls.
        self.repeats.sort_unstable();
        let mut earlier = 0.0;
        for g in 0..k {
            let (bin, r) = self.repeats[g];
            // Earlier balls of the round into the same bin.
            earlier = if g > 0 && self.repeats[g - 1].0 == bin { earlier + 1.0 } else { 0.0 };
            // Ball r of the round is entry k − 1 − r of `loads` (the next one last).
            self.loads[k - 1 - r] += earlier;
        }
    }
}

impl CustomRule for KdRule {
    fn place(&mut self, at: &mut dyn Decision) -> usize {
        if !self.in_round() {
            self.start(at);
        }
        if let Some(x) = self.loads.pop() {
            let bin = match self.flaw {
                Some(LevelFlaw::SameLevel) => at.bin_at_load(x).or_else(|| at.bin_at_load(x + 1.0)),
                _ => at.bin_at_load(x),
            };
            return bin.expect("a bin of the round is at its ball's load");
        }
        self.pending.pop().expect("a round places k >= 1 balls")
    }

    fn in_round(&self) -> bool {
        !self.pending.is_empty() || !self.loads.is_empty()
    }
}
