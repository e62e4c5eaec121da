//! Running a process over a [`Horizon`]: the plain-data [`DynamicSpec`] (matched once per
//! run), and [`simulate`] / [`simulate_observed`] driving any [`RoundProcess`].

use rand::Rng;

use crate::{
    AzarConfig, DeletionConfig, Deletions, Error, Horizon, InfiniteAzar, LeakyBins, LeakyConfig,
    Rbb, RbbConfig, RoundMetrics, RoundProcess, RunSummary, Tracker,
};

/// Which process to run: the boundary between configuration and the simulation loops.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum DynamicSpec {
    /// Leaky bins.
    Leaky(LeakyConfig),
    /// Repeated balls-into-bins.
    Rbb(RbbConfig),
    /// The infinite Azar process.
    Azar(AzarConfig),
    /// Insertions and deletions step by step (random deletions, insert/delete workloads).
    Deletions(DeletionConfig),
}

impl DynamicSpec {
    /// The snake_case kind name used in configs.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Leaky(_) => "leaky_bins",
            Self::Rbb(_) => "rbb",
            Self::Azar(_) => "infinite_azar",
            Self::Deletions(c) => match c.workload {
                crate::Workload::Random(_) => "random_deletions",
                _ => "insert_delete",
            },
        }
    }

    /// Number of bins.
    pub fn n(&self) -> usize {
        match self {
            Self::Leaky(c) => c.n,
            Self::Rbb(c) => c.n,
            Self::Azar(c) => c.n,
            Self::Deletions(c) => c.n,
        }
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), Error> {
        match self {
            Self::Leaky(c) => c.validate(),
            Self::Rbb(c) => c.validate(),
            Self::Azar(c) => c.validate(),
            Self::Deletions(c) => c.validate(),
        }
    }

    /// The start state (`None`: the model's own start, see [`crate::registry::ModelDef`]).
    pub fn start(&self) -> Option<&ballast_core::Start> {
        match self {
            Self::Leaky(c) => c.start.as_ref(),
            Self::Rbb(c) => c.start.as_ref(),
            Self::Azar(c) => c.start.as_ref(),
            Self::Deletions(c) => c.start.as_ref(),
        }
    }

    /// The same model from another start state (checked by [`DynamicSpec::validate`]).
    pub fn with_start(self, start: Option<ballast_core::Start>) -> Self {
        match self {
            Self::Leaky(c) => Self::Leaky(c.with_start(start)),
            Self::Rbb(c) => Self::Rbb(c.with_start(start)),
            Self::Azar(c) => Self::Azar(c.with_start(start)),
            Self::Deletions(c) => Self::Deletions(c.with_start(start)),
        }
    }
}

/// Runs `spec` over `horizon` and summarises the measured rounds.
pub fn simulate<R: Rng + ?Sized>(
    spec: &DynamicSpec,
    horizon: &Horizon,
    rng: &mut R,
) -> Result<RunSummary, Error> {
    simulate_observed(spec, horizon, rng, |_, _| {})
}

/// As [`simulate`], also calling `observe(round, metrics)` after every round (burn-in
/// included; rounds count from 0).
pub fn simulate_observed<R, F>(
    spec: &DynamicSpec,
    horizon: &Horizon,
    rng: &mut R,
    observe: F,
) -> Result<RunSummary, Error>
where
    R: Rng + ?Sized,
    F: FnMut(u64, &RoundMetrics),
{
    let tracker = Tracker::new(spec.n(), horizon)?;
    Ok(match spec {
        DynamicSpec::Leaky(c) => drive(&mut LeakyBins::starting(c, rng)?, tracker, rng, observe),
        DynamicSpec::Rbb(c) => drive(&mut Rbb::starting(c, rng)?, tracker, rng, observe),
        DynamicSpec::Azar(c) => drive(&mut InfiniteAzar::starting(c, rng)?, tracker, rng, observe),
        DynamicSpec::Deletions(c) if c.levels => {
            drive(&mut crate::LevelDeletions::starting(c, rng)?, tracker, rng, observe)
        }
        DynamicSpec::Deletions(c) => {
            drive(&mut Deletions::starting(c, rng)?, tracker, rng, observe)
        }
    })
}

/// Runs `p` (in whatever state it is) over `horizon` and summarises the measured rounds: the
/// loop of [`simulate`] on a process the caller built, for example a warmed-up clone (the
/// floor benchmark times it this way).
pub fn simulate_process<P, R>(
    p: &mut P,
    horizon: &Horizon,
    rng: &mut R,
) -> Result<RunSummary, Error>
where
    P: RoundProcess,
    R: Rng + ?Sized,
{
    let tracker = Tracker::new(p.loads().len(), horizon)?;
    Ok(drive(p, tracker, rng, |_, _| {}))
}

/// The monomorphised loop.
fn drive<P, R, F>(p: &mut P, mut tracker: Tracker, rng: &mut R, mut observe: F) -> RunSummary
where
    P: RoundProcess,
    R: Rng + ?Sized,
    F: FnMut(u64, &RoundMetrics),
{
    let total = tracker.total_rounds();
    for t in 0..total {
        let m = p.round(rng);
        observe(t, &m);
        tracker.observe(&m);
    }
    tracker.finish()
}
