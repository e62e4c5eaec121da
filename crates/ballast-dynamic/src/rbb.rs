//! Repeated balls-into-bins (RBB): every non-empty bin releases one ball per round and the
//! released balls are re-thrown, by One-Choice (the model of Becchetti et al. 2015 and of
//! Los & Sauerwald 2023) or, as an option, by Greedy\[d\].

use ballast_core::process::Ctx;
use rand::Rng;

use crate::error::{check_d, check_n};
use crate::greedy::{greedy, greedy_for};
use crate::{DenseLoads, DynLoads, Error, RoundMetrics, RoundProcess};

/// Which loads the re-thrown balls of Greedy\[d\] RBB (`d >= 2`) compare. One-Choice reads no
/// loads, so for `d = 1` both give the same process (the paper's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RethrowView {
    /// The loads after this round's releases, updated as each re-thrown ball lands (the
    /// balls are re-thrown one at a time, each seeing the ones before it). The default: the
    /// natural sequential reading of "each released ball is re-thrown with d choices".
    #[default]
    AfterReleases,
    /// The loads at the start of the round, before the releases, frozen for the whole round
    /// (a batch, like the arrivals of leaky bins).
    RoundStart,
}

impl RethrowView {
    /// The snake_case name used in configs and CSV files.
    pub fn name(self) -> &'static str {
        match self {
            Self::AfterReleases => "after_releases",
            Self::RoundStart => "round_start",
        }
    }
}

/// Parameters of an RBB run.
#[derive(Clone, Debug, PartialEq)]
pub struct RbbConfig {
    /// Number of bins.
    pub n: usize,
    /// Number of balls (`m <= 2^32 − 1`, and at most `2^32 − 1` per bin).
    pub m: u64,
    /// Greedy\[d\] samples per re-thrown ball (`d = 1`: One-Choice, the paper's).
    pub d: u32,
    /// Which loads the re-throws compare when `d >= 2`.
    pub view: RethrowView,
    /// The loads before the first round (`None`: the uniform load vector); it must hold
    /// exactly `m` balls.
    pub start: Option<ballast_core::Start>,
}

impl RbbConfig {
    /// One-Choice RBB with `n` bins and `m` balls.
    pub fn one_choice(n: usize, m: u64) -> Self {
        Self { n, m, d: 1, view: RethrowView::AfterReleases, start: None }
    }

    /// Greedy\[d\] RBB with the given view.
    pub fn d_choice(n: usize, m: u64, d: u32, view: RethrowView) -> Self {
        Self { n, m, d, view, start: None }
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
        if self.m > u64::from(u32::MAX) {
            return Err(Error::invalid("m", self.m, "m <= 2^32 - 1"));
        }
        if let Some(s) = &self.start {
            crate::start::check_start(s, self.n, Some(self.m))?;
        }
        Ok(())
    }
}

/// An RBB system, started from the uniform load vector (`m mod n` bins hold one extra ball).
///
/// Each [`RoundProcess::round`]: every non-empty bin releases one ball, then every released
/// ball is re-thrown (see [`RethrowView`] for Greedy\[d\]). With `2m >= n` (every item of the
/// papers) the loads are a plain vector ([`DenseLoads`]): a vectorised release pass over `n`
/// per round, one increment per re-thrown ball (One-Choice draws them in bulk,
/// [`Ctx::sample_each`]) and one vectorised pass for the max load and empty count. RBB with
/// `m = k·n` has a fraction `1 − (sqrt(k² + 1) − k)` of non-empty bins in stationarity (over
/// 0.58 for `k >= 1`), so these passes cost about as much as walking a list would, and the
/// re-throws keep no list and no running max. With fewer balls the loads are the list of
/// non-empty bins ([`DynLoads`]), cost per round O(non-empty bins · d + max load).
/// [`Rbb::reference`] is the straightforward loop on the list (one [`Ctx::sample`] per
/// One-Choice ball), kept to test the others against (`tests/round_loops.rs`: the same
/// draws, loads and metrics).
#[derive(Clone, Debug)]
pub struct Rbb {
    loads: Loads,
    d: u32,
    view: RethrowView,
    ctx: Ctx<'static>,
    targets: Vec<u32>,
    straightforward: bool,
}

/// The two representations of the loads; both follow the same draws to the same loads.
#[derive(Clone, Debug)]
enum Loads {
    /// The list of non-empty bins: few balls, and the reference loop.
    List(DynLoads),
    /// A plain load vector: `2m >= n`.
    Dense(DenseLoads),
}

impl Rbb {
    /// The uniform start (the configuration is validated; its `start`, if any, must not be
    /// `random`, which draws: use [`Rbb::starting`]).
    pub fn new(cfg: &RbbConfig) -> Result<Self, Error> {
        let mut no_draws = crate::start::NoDraws;
        Self::starting(cfg, &mut no_draws)
    }

    /// The configuration's start state (the uniform load vector without one), drawn from
    /// `rng` for a `random` start only (the configuration is validated).
    pub fn starting<R: Rng + ?Sized>(cfg: &RbbConfig, rng: &mut R) -> Result<Self, Error> {
        cfg.validate()?;
        let start = crate::start::initial_loads(cfg.start.as_ref(), cfg.n, rng, || {
            crate::state::uniform_loads(cfg.n, cfg.m)
        });
        let loads = if 2 * cfg.m >= cfg.n as u64 {
            Loads::Dense(DenseLoads::from_loads(start))
        } else {
            Loads::List(DynLoads::from_loads(start))
        };
        Ok(Self::with_loads(loads, cfg.n, cfg.d, cfg.view))
    }

    /// The straightforward loop from the uniform start: the non-empty list, one sample per
    /// One-Choice ball. Same draws, loads and metrics as [`Rbb::new`], slower; for tests and
    /// benchmarks.
    pub fn reference(cfg: &RbbConfig) -> Result<Self, Error> {
        cfg.validate()?;
        let mut p = Self::from_state(DynLoads::uniform(cfg.n, cfg.m), cfg.d, cfg.view);
        p.straightforward = true;
        Ok(p)
    }

    /// RBB from an arbitrary state, kept as the list of non-empty bins ([`DynLoads`]).
    pub fn from_state(state: DynLoads, d: u32, view: RethrowView) -> Self {
        let n = state.n();
        Self::with_loads(Loads::List(state), n, d, view)
    }

    fn with_loads(loads: Loads, n: usize, d: u32, view: RethrowView) -> Self {
        Self { loads, d, view, ctx: Ctx::new(n), targets: Vec::new(), straightforward: false }
    }

    /// Whether the run keeps a plain load vector (`2m >= n`).
    pub fn is_dense(&self) -> bool {
        matches!(self.loads, Loads::Dense(_))
    }
}

impl RoundProcess for Rbb {
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
        let state = match &mut self.loads {
            Loads::Dense(s) => {
                return dense_round(s, self.d, self.view, &mut self.targets, &mut self.ctx, rng)
            }
            Loads::List(s) => s,
        };
        let moved = if self.d == 1 {
            let r = state.release_all();
            if self.straightforward {
                for _ in 0..r {
                    let i = self.ctx.sample(rng);
                    state.add(i);
                }
            } else {
                self.ctx.sample_each(rng, r, |i| state.add(i));
            }
            r
        } else {
            match self.view {
                RethrowView::AfterReleases => {
                    let r = state.release_all();
                    for _ in 0..r {
                        let i = greedy_for(
                            self.straightforward,
                            state.loads(),
                            self.d,
                            rng,
                            &mut self.ctx,
                        );
                        state.add(i);
                    }
                    r
                }
                RethrowView::RoundStart => {
                    self.targets.clear();
                    for _ in 0..state.nonempty_count() {
                        let i = greedy_for(
                            self.straightforward,
                            state.loads(),
                            self.d,
                            rng,
                            &mut self.ctx,
                        );
                        self.targets.push(i as u32);
                    }
                    let r = state.release_all();
                    for &i in &self.targets {
                        state.add(i as usize);
                    }
                    r
                }
            }
        };
        RoundMetrics {
            max_load: state.max(),
            total_load: state.total(),
            empty_bins: state.empty(),
            moved,
            peak_total: 0,
        }
    }
}

/// One round of RBB on the dense load vector ([`Loads::Dense`]): the same draws, in the same
/// order, as the list path of `Rbb::round`.
#[inline(always)]
fn dense_round<R: Rng + ?Sized>(
    s: &mut DenseLoads,
    d: u32,
    view: RethrowView,
    targets: &mut Vec<u32>,
    ctx: &mut Ctx<'static>,
    rng: &mut R,
) -> RoundMetrics {
    let moved = if d == 1 {
        let r = s.release_all();
        s.throw(ctx, rng, r);
        r
    } else {
        match view {
            RethrowView::AfterReleases => {
                let r = s.release_all();
                for _ in 0..r {
                    let i = greedy(s.loads(), d, rng, ctx);
                    s.add(i);
                }
                r
            }
            RethrowView::RoundStart => {
                // The empty count is that of the round start (the last recount).
                let nonempty = s.n() as u64 - s.empty();
                targets.clear();
                for _ in 0..nonempty {
                    let i = greedy(s.loads(), d, rng, ctx);
                    targets.push(i as u32);
                }
                let r = s.release_all();
                for &i in targets.iter() {
                    s.add(i as usize);
                }
                r
            }
        }
    };
    s.recount();
    RoundMetrics {
        max_load: s.max(),
        total_load: s.total(),
        empty_bins: s.empty(),
        moved,
        peak_total: 0,
    }
}
