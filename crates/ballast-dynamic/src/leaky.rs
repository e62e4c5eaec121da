//! Leaky bins (Berenbrink, Friedetzky, Kling, Mallmann-Trenn, Nagel, Wastell, PODC 2016):
//! a batch of arrivals allocated by Greedy\[d\] on the loads of the round start, then one
//! departure from every non-empty bin.

use ballast_core::process::Ctx;
use rand::Rng;
use rand_distr::{Binomial, Distribution, Poisson};

use crate::error::{check_d, check_n};
use crate::greedy::greedy;
use crate::{DynLoads, Error, RoundMetrics, RoundProcess};

/// How many balls arrive in a round.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arrivals {
    /// `Binomial(n, λ)`: each of `n` sources emits a ball with probability `λ` (the paper's).
    #[default]
    Binomial,
    /// `Poisson(λn)`.
    Poisson,
    /// Exactly `⌊λn⌋`.
    Fixed,
}

impl Arrivals {
    /// The snake_case name used in configs and CSV files.
    pub fn name(self) -> &'static str {
        match self {
            Self::Binomial => "binomial",
            Self::Poisson => "poisson",
            Self::Fixed => "fixed",
        }
    }
}

/// Parameters of a leaky-bins run.
#[derive(Clone, Debug, PartialEq)]
pub struct LeakyConfig {
    /// Number of bins.
    pub n: usize,
    /// Arrival rate per bin and round, `0 <= λ < 1`.
    pub lambda: f64,
    /// Greedy\[d\] samples per ball (`d = 1` is One-Choice).
    pub d: u32,
    /// Law of the number of arrivals per round.
    pub arrivals: Arrivals,
    /// The loads before the first round (`None`: every bin empty).
    pub start: Option<ballast_core::Start>,
}

impl LeakyConfig {
    /// `n` bins, rate `lambda`, Greedy\[`d`\], Binomial arrivals.
    pub fn new(n: usize, lambda: f64, d: u32) -> Self {
        Self { n, lambda, d, arrivals: Arrivals::Binomial, start: None }
    }

    /// The same configuration with another arrival law.
    pub fn with_arrivals(mut self, arrivals: Arrivals) -> Self {
        self.arrivals = arrivals;
        self
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
        if !(0.0..1.0).contains(&self.lambda) {
            return Err(Error::invalid("lambda", self.lambda, "0 <= lambda < 1"));
        }
        if let Some(s) = &self.start {
            crate::start::check_start(s, self.n, None)?;
        }
        Ok(())
    }
}

/// The sampler of the number of arrivals.
#[derive(Clone, Debug)]
enum ArrivalSampler {
    Binomial(Binomial),
    Poisson(Poisson<f64>),
    Fixed(u64),
}

impl ArrivalSampler {
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        match self {
            Self::Binomial(b) => b.sample(rng),
            Self::Poisson(p) => p.sample(rng) as u64,
            Self::Fixed(a) => *a,
        }
    }
}

/// A leaky-bins system. Each [`RoundProcess::round`]: draw the arrivals `A`; choose each
/// ball's bin by Greedy\[d\] on the loads at the round start (all decisions first, then all
/// allocations: a batch); then every non-empty bin deletes one ball. Starts empty.
///
/// Cost per round: O(A·d + non-empty bins + max load).
#[derive(Clone, Debug)]
pub struct LeakyBins {
    state: DynLoads,
    d: u32,
    sampler: ArrivalSampler,
    ctx: Ctx<'static>,
    targets: Vec<u32>,
}

impl LeakyBins {
    /// An empty system, or the configuration's start state if it draws nothing (the
    /// configuration is validated; a `random` start needs [`LeakyBins::starting`]).
    pub fn new(cfg: &LeakyConfig) -> Result<Self, Error> {
        Self::starting(cfg, &mut crate::start::NoDraws)
    }

    /// The configuration's start state (empty bins without one), drawn from `rng` for a
    /// `random` start only (the configuration is validated).
    pub fn starting<R: Rng + ?Sized>(cfg: &LeakyConfig, rng: &mut R) -> Result<Self, Error> {
        cfg.validate()?;
        let start = crate::start::initial_loads(cfg.start.as_ref(), cfg.n, rng, || vec![0; cfg.n]);
        let n = cfg.n;
        let sampler = if cfg.lambda == 0.0 {
            ArrivalSampler::Fixed(0)
        } else {
            match cfg.arrivals {
                Arrivals::Binomial => ArrivalSampler::Binomial(
                    Binomial::new(n as u64, cfg.lambda)
                        .map_err(|_| Error::invalid("lambda", cfg.lambda, "0 <= lambda < 1"))?,
                ),
                Arrivals::Poisson => ArrivalSampler::Poisson(
                    Poisson::new(cfg.lambda * n as f64)
                        .map_err(|_| Error::invalid("lambda", cfg.lambda, "0 <= lambda < 1"))?,
                ),
                Arrivals::Fixed => ArrivalSampler::Fixed((cfg.lambda * n as f64).floor() as u64),
            }
        };
        Ok(Self {
            state: DynLoads::from_loads(start),
            d: cfg.d,
            sampler,
            ctx: Ctx::new(n),
            targets: Vec::new(),
        })
    }
}

impl RoundProcess for LeakyBins {
    fn loads(&self) -> &[u32] {
        self.state.loads()
    }

    fn check_state(&self) -> Result<(), String> {
        self.state.check()
    }

    #[inline]
    fn round<R: Rng + ?Sized>(&mut self, rng: &mut R) -> RoundMetrics {
        let a = self.sampler.sample(rng);
        if self.d == 1 {
            // One-Choice reads no loads, so placing each ball at once equals the batch.
            for _ in 0..a {
                let i = self.ctx.sample(rng);
                self.state.add(i);
            }
        } else {
            self.targets.clear();
            for _ in 0..a {
                let i = greedy(self.state.loads(), self.d, rng, &mut self.ctx);
                self.targets.push(i as u32);
            }
            for &i in &self.targets {
                self.state.add(i as usize);
            }
        }
        self.state.release_all();
        RoundMetrics {
            max_load: self.state.max(),
            total_load: self.state.total(),
            empty_bins: self.state.empty(),
            moved: a,
        }
    }
}
