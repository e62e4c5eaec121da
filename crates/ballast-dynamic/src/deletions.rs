//! Insertions and deletions one step at a time (`docs/processes.md#deletions`): each step of
//! a [`Workload`] inserts a ball by an [`Insertion`] rule or deletes one by a
//! [`DeletionLaw`] (nothing happens when a deletion finds the system empty).
//!
//! - **Random deletions** (Berenbrink, Friedetzky, Kling, Nagel, "Balls and Bins and the
//!   Infinite Process with Random Deletions", arXiv 2510.14798): step `t` inserts with
//!   probability `β(t)` by Greedy\[2\], else deletes a ball from a non-empty bin chosen
//!   uniformly at random (the law the abstract states); the system starts empty.
//! - **Insert/delete workloads** (after Bansal & Kuszmaul, FOCS'22, arXiv 2205.06558): a
//!   fixed pattern or a schedule file decides the steps; the deleted ball is a uniform ball,
//!   one from a uniform non-empty bin, or the oldest ball; with **reinsertion**, an insertion
//!   brings back the earliest deleted ball not yet back, with its own original choices.
//!
//! A ball's choices are kept as a pair (one-choice balls repeat their bin), so reinsertion
//! takes rules of at most two choices. The loads live in a [`LevelLoads`] (exact max and empty
//! count under arbitrary deletions); the non-empty bins in a list with positions (uniform
//! non-empty bin: one index); the balls, when their identity matters, in a bag (uniform
//! ball: swap-remove), a queue (oldest) or per-bin lists (a uniform bin with reinsertion).
//! Every step is O(1) (O(d) for Greedy\[d\]).

use std::collections::VecDeque;

use ballast_core::process::Ctx;
use ballast_core::rng::below;
use rand::Rng;

use crate::error::check_n;
use crate::greedy::greedy;
use crate::workload::{Cursor, Workload};
use crate::{Error, LevelLoads, RoundMetrics, RoundProcess};

/// Which ball a deletion removes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeletionLaw {
    /// One ball of a non-empty bin chosen uniformly among the non-empty bins.
    UniformBin,
    /// A ball chosen uniformly among all balls (bin `i` with probability `x_i / m`).
    UniformBall,
    /// The ball that has been in the system longest.
    Oldest,
}

impl DeletionLaw {
    /// The names in configs, in the order of [`DeletionLaw::ALL`].
    pub const NAMES: &'static [&'static str] = &["uniform_bin", "uniform_ball", "oldest"];
    /// Every law.
    pub const ALL: [Self; 3] = [Self::UniformBin, Self::UniformBall, Self::Oldest];

    /// The law called `name` (one of [`DeletionLaw::NAMES`]).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::NAMES.iter().position(|&x| x == name).map(|i| Self::ALL[i])
    }

    /// Its name in configs.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// How an inserted ball chooses its bin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Insertion {
    /// Greedy\[d\]: `d` uniform samples, a least loaded one, ties uniformly (`d = 1`:
    /// One-Choice).
    Greedy(u32),
    /// (1+β): two samples (least loaded, random ties) with probability β, else one.
    OnePlusBeta(f64),
}

/// Parameters of a deletion model.
#[derive(Clone, Debug, PartialEq)]
pub struct DeletionConfig {
    /// Number of bins.
    pub n: usize,
    /// The insertion rule.
    pub insertion: Insertion,
    /// The deletion law.
    pub deletion: DeletionLaw,
    /// Whether an insertion brings back the earliest deleted ball not yet back, with its own
    /// choices (a fresh ball when none is out).
    pub reinsert: bool,
    /// Which steps insert.
    pub workload: Workload,
    /// Steps per observed round (default `n`).
    pub steps_per_round: u64,
    /// The loads before the first step (`None`: empty bins).
    pub start: Option<ballast_core::Start>,
    /// Run on the level engine ([`crate::LevelDeletions`]: bin counts per load only); refused
    /// for oldest-first deletion and reinsertion.
    pub levels: bool,
}

impl DeletionConfig {
    /// `n` empty bins, Greedy\[2\] insertions, deletions from a uniform non-empty bin, `n`
    /// steps per round, no reinsertion.
    pub fn new(n: usize, workload: Workload) -> Self {
        Self {
            n,
            insertion: Insertion::Greedy(2),
            deletion: DeletionLaw::UniformBin,
            reinsert: false,
            workload,
            steps_per_round: n as u64,
            start: None,
            levels: false,
        }
    }

    /// The same configuration from another start state.
    pub fn with_start(mut self, start: Option<ballast_core::Start>) -> Self {
        self.start = start;
        self
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), Error> {
        check_n(self.n)?;
        match self.insertion {
            Insertion::Greedy(d) => crate::error::check_d(d)?,
            Insertion::OnePlusBeta(b) if !(0.0..=1.0).contains(&b) => {
                return Err(Error::invalid("beta", b, "a probability in [0, 1]"));
            }
            Insertion::OnePlusBeta(_) => {}
        }
        if self.reinsert && matches!(self.insertion, Insertion::Greedy(d) if d > 2) {
            return Err(Error::invalid(
                "d",
                "d > 2 with reinsert = true",
                "at most 2 choices with reinsertion (a ball keeps its pair of choices)",
            ));
        }
        if self.steps_per_round == 0 {
            return Err(Error::invalid("steps_per_round", 0, "at least 1"));
        }
        if let Workload::Phases { phase: 0, .. } = self.workload {
            return Err(Error::invalid("phase", 0, "at least 1"));
        }
        if let Some(s) = &self.start {
            crate::start::check_start(s, self.n, None)?;
        }
        if let Some(why) = level_refusal(self).filter(|_| self.levels) {
            return Err(Error::invalid("engine", "levels", why));
        }
        Ok(())
    }
}

/// Why a configuration cannot run on the level engine, or `None`.
pub fn level_refusal(cfg: &DeletionConfig) -> Option<&'static str> {
    if cfg.reinsert {
        return Some(
            "reinsertion brings back a ball with its own choices, which the level histogram \
             does not keep: use engine = \"bins\"",
        );
    }
    if cfg.deletion == DeletionLaw::Oldest {
        return Some(
            "oldest-first deletion needs each ball's age and bin, which the level histogram \
             does not keep: use engine = \"bins\"",
        );
    }
    None
}

/// A ball's choices: two bins (equal for a one-choice ball).
type Pair = (u32, u32);

/// A ball in the system: its bin and its choices.
#[derive(Clone, Copy, Debug)]
struct Ball {
    bin: u32,
    pair: Pair,
}

/// The balls, kept as the deletion law and reinsertion need them.
#[derive(Clone, Debug)]
enum Balls {
    /// Only loads (a uniform bin without reinsertion).
    Anonymous,
    /// A bag (uniform ball).
    Bag(Vec<Ball>),
    /// Oldest first.
    Queue(VecDeque<Ball>),
    /// The choices of each bin's balls (a uniform bin with reinsertion).
    PerBin(Vec<Vec<Pair>>),
}

/// A deletion model in its current state.
#[derive(Clone, Debug)]
pub struct Deletions {
    cfg: DeletionConfig,
    loads: LevelLoads,
    /// The non-empty bins (first `len` entries meaningful) and each bin's position in it.
    nonempty: Vec<u32>,
    pos: Vec<u32>,
    balls: Balls,
    /// Deleted balls waiting to come back (reinsertion), earliest first.
    out: VecDeque<Pair>,
    cursor: Cursor,
    t: u64,
    peak_total: u64,
    ctx: Ctx<'static>,
    stack: Vec<f64>,
}

impl Deletions {
    /// The configuration's start (empty bins without one; the configuration is validated).
    pub fn new(cfg: &DeletionConfig) -> Result<Self, Error> {
        Self::starting(cfg, &mut crate::start::NoDraws)
    }

    /// The configuration's start, drawn from `rng` for a `random` start only. The balls of a
    /// start are one-choice balls in their bins, older in lower bins.
    pub fn starting<R: Rng + ?Sized>(cfg: &DeletionConfig, rng: &mut R) -> Result<Self, Error> {
        cfg.validate()?;
        let n = cfg.n;
        let start = crate::start::initial_loads(cfg.start.as_ref(), n, rng, || vec![0; cfg.n]);
        let balls = match (cfg.deletion, cfg.reinsert) {
            (DeletionLaw::UniformBin, false) => Balls::Anonymous,
            (DeletionLaw::UniformBin, true) => Balls::PerBin(vec![Vec::new(); n]),
            (DeletionLaw::UniformBall, _) => Balls::Bag(Vec::new()),
            (DeletionLaw::Oldest, _) => Balls::Queue(VecDeque::new()),
        };
        let mut s = Self {
            cfg: cfg.clone(),
            loads: LevelLoads::from_loads(vec![0; n]),
            nonempty: vec![0; n],
            pos: vec![0; n],
            balls,
            out: VecDeque::new(),
            cursor: Cursor::new(&cfg.workload),
            t: 0,
            peak_total: 0,
            ctx: Ctx::new(n),
            stack: Vec::new(),
        };
        for (i, &x) in start.iter().enumerate() {
            for _ in 0..x {
                s.place(Ball { bin: i as u32, pair: (i as u32, i as u32) });
            }
        }
        s.peak_total = s.loads.total();
        Ok(s)
    }

    /// The load state.
    pub fn state(&self) -> &LevelLoads {
        &self.loads
    }

    /// Steps taken so far.
    pub fn steps(&self) -> u64 {
        self.t
    }

    /// Deleted balls waiting to come back (reinsertion).
    pub fn waiting(&self) -> usize {
        self.out.len()
    }

    /// One step of the workload.
    #[inline]
    pub fn step<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        let insert = self.cursor.inserts(
            &self.cfg.workload,
            self.t,
            self.cfg.n,
            || rng.random::<f64>(),
            &mut self.stack,
        );
        self.t += 1;
        if insert {
            self.insert(rng);
        } else if self.loads.total() > 0 {
            self.delete(rng);
        }
    }

    /// Inserts a ball: the earliest deleted one with its choices (reinsertion), else a new one.
    fn insert<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        let back = if self.cfg.reinsert { self.out.pop_front() } else { None };
        let ball = match back {
            Some(pair) => Ball { bin: self.pick(pair, rng), pair },
            None => self.fresh(rng),
        };
        self.place(ball);
        self.peak_total = self.peak_total.max(self.loads.total());
    }

    /// A new ball: its choices and the bin the rule picks.
    fn fresh<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Ball {
        let two = match self.cfg.insertion {
            Insertion::Greedy(1) => false,
            Insertion::Greedy(2) => true,
            Insertion::Greedy(d) => {
                let bin = greedy(self.loads.loads(), d, rng, &mut self.ctx) as u32;
                return Ball { bin, pair: (bin, bin) };
            }
            Insertion::OnePlusBeta(beta) => rng.random::<f64>() < beta,
        };
        let i = self.ctx.sample(rng) as u32;
        let j = if two { self.ctx.sample(rng) as u32 } else { i };
        Ball { bin: self.pick((i, j), rng), pair: (i, j) }
    }

    /// The less loaded bin of a pair, ties by a fair coin (a one-choice pair: its bin).
    #[inline]
    fn pick<R: Rng + ?Sized>(&mut self, (i, j): Pair, rng: &mut R) -> u32 {
        if i == j {
            return i;
        }
        let loads = self.loads.loads();
        let (li, lj) = (loads[i as usize], loads[j as usize]);
        if lj < li || (lj == li && self.ctx.coin(rng)) {
            j
        } else {
            i
        }
    }

    /// Puts `ball` into its bin.
    fn place(&mut self, ball: Ball) {
        let b = ball.bin as usize;
        if self.loads.loads()[b] == 0 {
            let len = self.nonempty_len();
            self.nonempty[len] = ball.bin;
            self.pos[b] = len as u32;
        }
        self.loads.add(b);
        match &mut self.balls {
            Balls::Anonymous => {}
            Balls::Bag(v) => v.push(ball),
            Balls::Queue(q) => q.push_back(ball),
            Balls::PerBin(v) => v[b].push(ball.pair),
        }
    }

    /// Number of non-empty bins.
    #[inline]
    fn nonempty_len(&self) -> usize {
        self.cfg.n - self.loads.empty() as usize
    }

    /// Deletes one ball by the law (the system is not empty).
    fn delete<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        let ball = match &mut self.balls {
            Balls::Anonymous => {
                let k = below(rng, self.nonempty_len() as u64) as usize;
                let bin = self.nonempty[k];
                Ball { bin, pair: (bin, bin) }
            }
            Balls::Bag(v) => v.swap_remove(below(rng, v.len() as u64) as usize),
            Balls::Queue(q) => q.pop_front().expect("a ball in a non-empty system"),
            Balls::PerBin(v) => {
                let k = below(rng, (self.cfg.n - self.loads.empty() as usize) as u64) as usize;
                let bin = self.nonempty[k];
                let own = &mut v[bin as usize];
                let pair = own.swap_remove(below(rng, own.len() as u64) as usize);
                Ball { bin, pair }
            }
        };
        let b = ball.bin as usize;
        self.loads.remove(b);
        if self.loads.loads()[b] == 0 {
            // Bin b leaves the list: the last listed bin takes its place.
            let len = self.nonempty_len();
            let p = self.pos[b] as usize;
            let last = self.nonempty[len];
            self.nonempty[p] = last;
            self.pos[last as usize] = p as u32;
        }
        if self.cfg.reinsert {
            self.out.push_back(ball.pair);
        }
    }
}

impl RoundProcess for Deletions {
    fn loads(&self) -> &[u32] {
        self.loads.loads()
    }

    fn check_state(&self) -> Result<(), String> {
        self.loads.check()?;
        let len = self.nonempty_len();
        for (k, &b) in self.nonempty[..len].iter().enumerate() {
            if self.loads.loads()[b as usize] == 0 || self.pos[b as usize] as usize != k {
                return Err(format!("non-empty list entry {k} (bin {b}) is wrong"));
            }
        }
        let mut counts = vec![0u32; self.cfg.n];
        match &self.balls {
            Balls::Anonymous => return Ok(()),
            Balls::Bag(v) => v.iter().for_each(|b| counts[b.bin as usize] += 1),
            Balls::Queue(q) => q.iter().for_each(|b| counts[b.bin as usize] += 1),
            Balls::PerBin(v) => {
                v.iter().enumerate().for_each(|(i, own)| counts[i] = own.len() as u32)
            }
        }
        if counts != self.loads.loads() {
            return Err("the balls do not match the loads".into());
        }
        Ok(())
    }

    #[inline]
    fn round<R: Rng + ?Sized>(&mut self, rng: &mut R) -> RoundMetrics {
        for _ in 0..self.cfg.steps_per_round {
            self.step(rng);
        }
        RoundMetrics {
            max_load: self.loads.max(),
            total_load: self.loads.total(),
            empty_bins: self.loads.empty(),
            moved: self.cfg.steps_per_round,
            peak_total: self.peak_total,
        }
    }
}
