//! The deletion models on the level engine: only the number of bins at each load (`c_ℓ`), no
//! per-bin loads, for the laws whose decisions read loads alone. Bins are exchangeable there,
//! so each step is an occupancy step on the histogram:
//!
//! - an insertion by Greedy\[d\] (random ties) moves one bin of level `ℓ` to `ℓ + 1`, where
//!   `ℓ` is the least of `d` levels drawn with probability `c_ℓ / n` each (a uniform bin's
//!   level); (1+β) draws two with probability β, else one; One-Choice one;
//! - a deletion from a uniform non-empty bin moves a bin of level `ℓ ≥ 1` down, `ℓ` drawn with
//!   probability `c_ℓ / (n − c_0)`; a deletion of a uniform ball draws `ℓ` with probability
//!   `ℓ·c_ℓ / W` (`W` balls).
//!
//! Oldest-first deletion and reinsertion depend on which ball is where: they are refused
//! ([`LevelDeletions::new`] says why). A level is drawn by a uniform integer and a walk over
//! the occupied levels (from the least to the largest load), so a step costs O(d·spread),
//! the spread being the number of occupied levels: small for Greedy\[2\], and independent of n
//! in memory.

use ballast_core::rng::below;
use rand::Rng;

use crate::deletions::{level_refusal, DeletionConfig, DeletionLaw, Insertion};
use crate::workload::Cursor;
use crate::{Error, RoundMetrics, RoundProcess};

/// A deletion model on the level histogram.
#[derive(Clone, Debug)]
pub struct LevelDeletions {
    cfg: DeletionConfig,
    /// `counts[ℓ]`: bins with load `ℓ`; `lo..=hi` spans every occupied level.
    counts: Vec<u64>,
    lo: usize,
    hi: usize,
    total: u64,
    peak_total: u64,
    cursor: Cursor,
    t: u64,
    stack: Vec<f64>,
}

impl LevelDeletions {
    /// The configuration's start (empty bins without one), on levels; refused with the reason
    /// for oldest-first deletion and reinsertion.
    pub fn starting<R: Rng + ?Sized>(cfg: &DeletionConfig, rng: &mut R) -> Result<Self, Error> {
        cfg.validate()?;
        if let Some(why) = level_refusal(cfg) {
            return Err(Error::invalid("engine", "levels", why));
        }
        let loads = crate::start::initial_loads(cfg.start.as_ref(), cfg.n, rng, || vec![0; cfg.n]);
        let hi = loads.iter().copied().max().unwrap_or(0) as usize;
        let mut counts = vec![0u64; hi + 2];
        let mut total = 0;
        for &x in &loads {
            counts[x as usize] += 1;
            total += u64::from(x);
        }
        let lo = loads.iter().copied().min().unwrap_or(0) as usize;
        Ok(Self {
            cfg: cfg.clone(),
            counts,
            lo,
            hi,
            total,
            peak_total: total,
            cursor: Cursor::new(&cfg.workload),
            t: 0,
            stack: Vec::new(),
        })
    }

    /// Bins at load `l`.
    pub fn level_count(&self, l: usize) -> u64 {
        self.counts.get(l).copied().unwrap_or(0)
    }

    /// The loads in increasing order (O(n): for tests).
    pub fn sorted_loads(&self) -> Vec<u32> {
        let mut v = Vec::with_capacity(self.cfg.n);
        for (l, &c) in self.counts.iter().enumerate() {
            v.extend(std::iter::repeat_n(l as u32, c as usize));
        }
        v
    }

    /// Total balls.
    pub fn total(&self) -> u64 {
        self.total
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
            let d = match self.cfg.insertion {
                Insertion::Greedy(d) => d,
                Insertion::OnePlusBeta(beta) => 1 + u32::from(rng.random::<f64>() < beta),
            };
            let mut l = self.uniform_bin_level(rng);
            for _ in 1..d {
                l = l.min(self.uniform_bin_level(rng));
            }
            self.up(l);
        } else if self.total > 0 {
            let l = match self.cfg.deletion {
                DeletionLaw::UniformBall => self.uniform_ball_level(rng),
                _ => self.nonempty_bin_level(rng),
            };
            self.down(l);
        }
    }

    /// The level of a uniform bin (probability `c_ℓ / n`).
    #[inline]
    fn uniform_bin_level<R: Rng + ?Sized>(&self, rng: &mut R) -> usize {
        self.walk(self.lo, below(rng, self.cfg.n as u64), |_, c| c)
    }

    /// The level of a uniform non-empty bin (probability `c_ℓ / (n − c_0)`).
    fn nonempty_bin_level<R: Rng + ?Sized>(&self, rng: &mut R) -> usize {
        let nonempty = self.cfg.n as u64 - self.counts[0];
        self.walk(self.lo.max(1), below(rng, nonempty), |_, c| c)
    }

    /// The level of a uniform ball's bin (probability `ℓ·c_ℓ / W`).
    fn uniform_ball_level<R: Rng + ?Sized>(&self, rng: &mut R) -> usize {
        self.walk(self.lo.max(1), below(rng, self.total), |l, c| l as u64 * c)
    }

    /// The level where the cumulative `weight(ℓ, c_ℓ)` from `from` first exceeds `u`.
    #[inline]
    fn walk(&self, from: usize, mut u: u64, weight: impl Fn(usize, u64) -> u64) -> usize {
        for l in from..=self.hi {
            let w = weight(l, self.counts[l]);
            if u < w {
                return l;
            }
            u -= w;
        }
        unreachable!("the weights sum to more than the draw")
    }

    /// One bin of level `l` gains a ball.
    fn up(&mut self, l: usize) {
        self.counts[l] -= 1;
        if l + 1 == self.counts.len() - 1 {
            self.counts.push(0);
        }
        self.counts[l + 1] += 1;
        self.hi = self.hi.max(l + 1);
        while self.counts[self.lo] == 0 {
            self.lo += 1;
        }
        self.total += 1;
        self.peak_total = self.peak_total.max(self.total);
    }

    /// One bin of level `l >= 1` loses a ball.
    fn down(&mut self, l: usize) {
        self.counts[l] -= 1;
        self.counts[l - 1] += 1;
        self.lo = self.lo.min(l - 1);
        while self.counts[self.hi] == 0 {
            self.hi -= 1;
        }
        self.total -= 1;
    }
}

impl RoundProcess for LevelDeletions {
    /// The level engine keeps no per-bin loads: always empty (see
    /// [`LevelDeletions::sorted_loads`]).
    fn loads(&self) -> &[u32] {
        &[]
    }

    fn check_state(&self) -> Result<(), String> {
        let bins: u64 = self.counts.iter().sum();
        let balls: u64 = self.counts.iter().enumerate().map(|(l, &c)| l as u64 * c).sum();
        let occupied: Vec<usize> = (0..self.counts.len()).filter(|&l| self.counts[l] > 0).collect();
        let (lo, hi) = (occupied[0], *occupied.last().unwrap_or(&0));
        if bins != self.cfg.n as u64 || balls != self.total || (lo, hi) != (self.lo, self.hi) {
            return Err(format!(
                "histogram: {bins} bins, {balls} balls, levels {lo}..={hi}; recorded {} \
                 balls, levels {}..={}",
                self.total, self.lo, self.hi
            ));
        }
        Ok(())
    }

    #[inline]
    fn round<R: Rng + ?Sized>(&mut self, rng: &mut R) -> RoundMetrics {
        for _ in 0..self.cfg.steps_per_round {
            self.step(rng);
        }
        RoundMetrics {
            max_load: self.hi as u32,
            total_load: self.total,
            empty_bins: self.counts[0],
            moved: self.cfg.steps_per_round,
            peak_total: self.peak_total,
        }
    }
}
