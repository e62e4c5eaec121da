//! Leaky bins (Berenbrink, Friedetzky, Kling, Mallmann-Trenn, Nagel, Wastell, PODC 2016):
//! a batch of arrivals allocated by Greedy\[d\] on the loads of the round start, then one
//! departure from every non-empty bin.

use ballast_core::process::Ctx;
use rand::Rng;
use rand_distr::{Binomial, Distribution, Poisson};

use crate::error::{check_d, check_n};
use crate::greedy::{greedy, greedy_for};
use crate::{DenseLoads, DynLoads, Error, RoundMetrics, RoundProcess};

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

/// Rates from which [`LeakyBins::new`] keeps a plain load vector ([`DenseLoads`]): a fraction
/// λ of the bins is non-empty in stationarity (departures balance arrivals), so from λ = 1/4
/// one vectorised pass over all `n` loads costs less than walking the non-empty list, whose
/// every entry is a random access.
pub const DENSE_LAMBDA: f64 = 0.25;

/// A leaky-bins system. Each [`RoundProcess::round`]: draw the arrivals `A`; choose each
/// ball's bin by Greedy\[d\] on the loads at the round start (all decisions first, then all
/// allocations: a batch); then every non-empty bin deletes one ball. Starts empty, or from
/// the configuration's start state.
///
/// Two representations follow the same draws to the same loads and metrics
/// (`tests/round_loops.rs`): for λ >= [`DENSE_LAMBDA`] a plain load vector, whose release,
/// max load and empty count are one vectorised pass per round
/// ([`DenseLoads::release_and_recount`]), One-Choice arrivals drawn in bulk
/// ([`Ctx::sample_each`]); below it the list of non-empty bins ([`DynLoads`]), cost per
/// round O(A·d + non-empty bins). [`LeakyBins::reference`] is the straightforward loop on
/// the list (one [`Ctx::sample`] per One-Choice ball), kept to test the others against.
#[derive(Clone, Debug)]
pub struct LeakyBins {
    loads: Loads,
    d: u32,
    sampler: ArrivalSampler,
    ctx: Ctx<'static>,
    targets: Vec<u32>,
    straightforward: bool,
}

/// The two representations of the loads.
#[derive(Clone, Debug)]
enum Loads {
    List(DynLoads),
    Dense(DenseLoads),
}

impl LeakyBins {
    /// An empty system, or the configuration's start state if it draws nothing (the
    /// configuration is validated; a `random` start needs [`LeakyBins::starting`]), on the
    /// representation that suits λ.
    pub fn new(cfg: &LeakyConfig) -> Result<Self, Error> {
        Self::starting(cfg, &mut crate::start::NoDraws)
    }

    /// The configuration's start state (empty bins without one), drawn from `rng` for a
    /// `random` start only (the configuration is validated), on the representation that
    /// suits λ.
    pub fn starting<R: Rng + ?Sized>(cfg: &LeakyConfig, rng: &mut R) -> Result<Self, Error> {
        let mut p = Self::reference_starting(cfg, rng)?;
        p.straightforward = false;
        if cfg.lambda >= DENSE_LAMBDA {
            if let Loads::List(s) = &p.loads {
                p.loads = Loads::Dense(DenseLoads::from_loads(s.loads().to_vec()));
            }
        }
        Ok(p)
    }

    /// The straightforward loop: the non-empty list, one sample per One-Choice ball. Same
    /// draws, loads and metrics as [`LeakyBins::new`], slower; for tests and benchmarks.
    pub fn reference(cfg: &LeakyConfig) -> Result<Self, Error> {
        Self::reference_starting(cfg, &mut crate::start::NoDraws)
    }

    /// [`LeakyBins::reference`] from the configuration's start state.
    fn reference_starting<R: Rng + ?Sized>(cfg: &LeakyConfig, rng: &mut R) -> Result<Self, Error> {
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
            loads: Loads::List(DynLoads::from_loads(start)),
            d: cfg.d,
            sampler,
            ctx: Ctx::new(n),
            targets: Vec::new(),
            straightforward: true,
        })
    }

    /// Whether the run keeps a plain load vector (λ >= [`DENSE_LAMBDA`]).
    pub fn is_dense(&self) -> bool {
        matches!(self.loads, Loads::Dense(_))
    }
}

impl RoundProcess for LeakyBins {
    fn loads(&self) -> &[u32] {
        match &self.loads {
            Loads::Dense(s) => s.loads(),
            Loads::List(s) => s.loads(),
        }
    }

    fn check_state(&self) -> Result<(), String> {
        match &self.loads {
            Loads::Dense(s) => s.check(),
            Loads::List(s) => s.check(),
        }
    }

    #[inline]
    fn round<R: Rng + ?Sized>(&mut self, rng: &mut R) -> RoundMetrics {
        let a = self.sampler.sample(rng);
        match &mut self.loads {
            Loads::Dense(s) => {
                if self.d == 1 {
                    // One-Choice reads no loads: placing each ball at once equals the
                    // batch, and `throw` draws the bins of `a` calls of `sample`.
                    s.throw(&mut self.ctx, rng, a);
                } else {
                    self.targets.clear();
                    for _ in 0..a {
                        let i = greedy(s.loads(), self.d, rng, &mut self.ctx);
                        self.targets.push(i as u32);
                    }
                    for &i in &self.targets {
                        s.add(i as usize);
                    }
                }
                s.release_and_recount();
                RoundMetrics {
                    max_load: s.max(),
                    total_load: s.total(),
                    empty_bins: s.empty(),
                    moved: a,
                    peak_total: 0,
                }
            }
            Loads::List(s) => {
                if self.d == 1 {
                    if self.straightforward {
                        for _ in 0..a {
                            let i = self.ctx.sample(rng);
                            s.add(i);
                        }
                    } else {
                        self.ctx.sample_each(rng, a, |i| s.add(i));
                    }
                } else {
                    self.targets.clear();
                    for _ in 0..a {
                        let i =
                            greedy_for(self.straightforward, s.loads(), self.d, rng, &mut self.ctx);
                        self.targets.push(i as u32);
                    }
                    for &i in &self.targets {
                        s.add(i as usize);
                    }
                }
                s.release_all();
                RoundMetrics {
                    max_load: s.max(),
                    total_load: s.total(),
                    empty_bins: s.empty(),
                    moved: a,
                    peak_total: 0,
                }
            }
        }
    }
}
