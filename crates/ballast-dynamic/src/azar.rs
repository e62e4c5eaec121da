//! The infinite Azar process: each step deletes a ball chosen uniformly among all balls, then
//! inserts one ball by Greedy\[d\] on the current loads.

use ballast_core::process::Ctx;
use ballast_core::rng::below;
use rand::Rng;

use crate::error::{check_d, check_n};
use crate::greedy::greedy;
use crate::{Error, LevelLoads, RoundMetrics, RoundProcess};

/// Parameters of an infinite-Azar run.
#[derive(Clone, Debug, PartialEq)]
pub struct AzarConfig {
    /// Number of bins.
    pub n: usize,
    /// Number of balls, `1 <= m <= 2^32`.
    pub m: u64,
    /// Greedy\[d\] samples per inserted ball.
    pub d: u32,
    /// Delete-insert steps per observed round (default `n`).
    pub steps_per_round: u64,
    /// The loads before the first round (`None`: the uniform load vector); it must hold
    /// exactly `m` balls.
    pub start: Option<ballast_core::Start>,
}

impl AzarConfig {
    /// `n` bins, `m` balls (uniform start), Greedy\[`d`\], `n` steps per round.
    pub fn new(n: usize, m: u64, d: u32) -> Self {
        Self { n, m, d, steps_per_round: n as u64, start: None }
    }

    /// The same configuration from another start state.
    pub fn with_start(mut self, start: Option<ballast_core::Start>) -> Self {
        self.start = start;
        self
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), Error> {
        check_n(self.n)?;
        check_d(self.d)?;
        if !(1..=1u64 << 32).contains(&self.m) {
            return Err(Error::invalid("m", self.m, "1 <= m <= 2^32"));
        }
        if self.steps_per_round == 0 {
            return Err(Error::invalid("steps_per_round", 0, "at least 1"));
        }
        if let Some(s) = &self.start {
            crate::start::check_start(s, self.n, Some(self.m))?;
        }
        Ok(())
    }
}

/// An infinite-Azar system started from the uniform load vector.
///
/// Deleting a uniformly random *ball* hits bin `i` with probability `x_i / m`. The balls are
/// kept in a vector (entry = the ball's bin), so a deletion is one uniform index and a
/// swap-remove, and an insertion a push: O(d) per step, with no sampling structure over the
/// bins. The order of the vector changes, which does not matter: the deleted ball is uniform
/// over the balls whatever their order.
#[derive(Clone, Debug)]
pub struct InfiniteAzar {
    state: LevelLoads,
    balls: Vec<u32>,
    d: u32,
    steps_per_round: u64,
    ctx: Ctx<'static>,
}

impl InfiniteAzar {
    /// The uniform start (the configuration is validated).
    pub fn new(cfg: &AzarConfig) -> Result<Self, Error> {
        Self::starting(cfg, &mut crate::start::NoDraws)
    }

    /// The configuration's start state (the uniform load vector without one), drawn from
    /// `rng` for a `random` start only (the configuration is validated).
    pub fn starting<R: Rng + ?Sized>(cfg: &AzarConfig, rng: &mut R) -> Result<Self, Error> {
        cfg.validate()?;
        let start = crate::start::initial_loads(cfg.start.as_ref(), cfg.n, rng, || {
            crate::state::uniform_loads(cfg.n, cfg.m)
        });
        let state = LevelLoads::from_loads(start);
        let mut balls = Vec::with_capacity(cfg.m as usize);
        for (i, &x) in state.loads().iter().enumerate() {
            balls.extend(std::iter::repeat_n(i as u32, x as usize));
        }
        Ok(Self {
            state,
            balls,
            d: cfg.d,
            steps_per_round: cfg.steps_per_round,
            ctx: Ctx::new(cfg.n),
        })
    }

    /// One delete-insert step.
    #[inline]
    pub fn step<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        let j = below(rng, self.balls.len() as u64) as usize;
        let bin = self.balls.swap_remove(j);
        self.state.remove(bin as usize);
        let i = greedy(self.state.loads(), self.d, rng, &mut self.ctx);
        self.balls.push(i as u32);
        self.state.add(i);
    }

    /// The bin of every ball (its multiset equals the loads).
    pub fn balls(&self) -> &[u32] {
        &self.balls
    }

    /// The load state.
    pub fn state(&self) -> &LevelLoads {
        &self.state
    }
}

impl RoundProcess for InfiniteAzar {
    fn loads(&self) -> &[u32] {
        self.state.loads()
    }

    fn check_state(&self) -> Result<(), String> {
        self.state.check()?;
        let mut counts = vec![0u32; self.state.n()];
        for &b in &self.balls {
            counts[b as usize] += 1;
        }
        if counts != self.state.loads() {
            return Err("the ball vector does not match the loads".into());
        }
        Ok(())
    }

    #[inline]
    fn round<R: Rng + ?Sized>(&mut self, rng: &mut R) -> RoundMetrics {
        for _ in 0..self.steps_per_round {
            self.step(rng);
        }
        RoundMetrics {
            max_load: self.state.max(),
            total_load: self.state.total(),
            empty_bins: self.state.empty(),
            moved: self.steps_per_round,
            peak_total: 0,
        }
    }
}
