//! Bins that join and leave during a run ([`Churn`]) and several dispatchers deciding on
//! stale views of the loads ([`Dispatchers`]): plain data, their parameter declarations
//! ([`CHURN`], [`DISPATCHERS`]: what every front end reads, so configs, `ballast simulate`
//! and `ballast list` agree) and the checks of a run spec that uses them
//! ([`check_dynamic_bins`]). The loops are `crate::churn` and `crate::dispatchers`;
//! `docs/churn.md#churn` and `docs/churn.md#dispatchers` say what they mean.

use crate::params::{Args, ParamDef, ParamDefault, ParamError, ParamList, ParamType, ParamValue};
use crate::{Engine, Error, ProcessSpec, RunSpec, Setting, Weights};

/// The load of a joining bin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinAt {
    /// Load 0.
    Empty,
    /// `⌈W/n⌉` of the bins present after the event's leaves.
    Average,
}

/// Which bin leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaving {
    /// A uniformly random present bin.
    Random,
    /// A most loaded bin (ties uniformly at random).
    Heaviest,
    /// A least loaded bin (ties uniformly at random).
    Lightest,
}

/// What happens to the balls of a leaving bin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeftBalls {
    /// They leave with it (the total drops).
    Lost,
    /// They are placed again, one at a time by the run's process, after the event's joins.
    Rethrown,
}

/// How balls are spread over the dispatchers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Assign {
    /// Step `t` (a ball, or a multi-ball step) goes to dispatcher `t mod k`.
    RoundRobin,
    /// Each ball to a uniformly random dispatcher (independent of everything else).
    Random,
}

/// A periodic churn schedule: after `first`, `first + every`, `first + 2·every`, … balls
/// (`events` times at most, and only before the last ball), `leave` bins leave and then
/// `join` bins join. Decisions sample among the bins present; the gap and every statistic are
/// over the bins present.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Churn {
    /// Balls between two events, at least 1.
    pub every: u64,
    /// Balls before the first event (0: before the first ball).
    pub first: u64,
    /// Number of events (`None`: until the run ends).
    pub events: Option<u64>,
    /// Bins leaving at each event.
    pub leave: u32,
    /// Bins joining at each event.
    pub join: u32,
    /// The load a joining bin starts with.
    pub join_at: JoinAt,
    /// Which bins leave.
    pub leaving: Leaving,
    /// What happens to a leaving bin's balls.
    pub balls: LeftBalls,
}

/// `k` dispatchers, each deciding on its own view of the loads, refreshed to the true loads
/// before its first ball and then after every `tau` of its own balls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dispatchers {
    /// Number of dispatchers, at least 1.
    pub k: u32,
    /// Own balls between two refreshes of a dispatcher's view, at least 1.
    pub tau: u64,
    /// How balls are spread over the dispatchers.
    pub assign: Assign,
    /// Whether a dispatcher's view counts its own balls at once (as a load balancer counts
    /// the requests it sent); `false`: a view changes only at refreshes.
    pub own: bool,
}

/// The churn parameters, as every front end reads them.
pub const CHURN: ParamList = ParamList {
    what: "setting",
    name: "churn",
    params: &[
        ParamDef::new(
            "every",
            ParamType::Int { lo: 1, hi: u32::MAX },
            ParamDefault::Required,
            "balls between two churn events",
        ),
        ParamDef::new(
            "first",
            ParamType::Int { lo: 0, hi: u32::MAX },
            ParamDefault::Unset,
            "balls before the first event (default: every)",
        ),
        ParamDef::new(
            "events",
            ParamType::Int { lo: 1, hi: u32::MAX },
            ParamDefault::Unset,
            "number of events (default: until the run ends)",
        ),
        ParamDef::new(
            "leave",
            ParamType::Int { lo: 0, hi: u32::MAX },
            ParamDefault::Num(1.0),
            "bins leaving at each event (first)",
        ),
        ParamDef::new(
            "join",
            ParamType::Int { lo: 0, hi: u32::MAX },
            ParamDefault::Num(1.0),
            "bins joining at each event (after the leaves)",
        ),
        ParamDef::new(
            "join_at",
            ParamType::Choice(&["empty", "average"]),
            ParamDefault::Text("empty"),
            "load of a joining bin: 0, or the ceiling of the average of the bins present",
        ),
        ParamDef::new(
            "leaving",
            ParamType::Choice(&["random", "heaviest", "lightest"]),
            ParamDefault::Text("random"),
            "which bin leaves (ties uniformly at random)",
        ),
        ParamDef::new(
            "balls",
            ParamType::Choice(&["lost", "rethrown"]),
            ParamDefault::Text("lost"),
            "a leaving bin's balls: gone, or placed again by the process after the joins",
        ),
    ],
};

/// The dispatcher parameters, as every front end reads them.
pub const DISPATCHERS: ParamList = ParamList {
    what: "setting",
    name: "dispatchers",
    params: &[
        ParamDef::new(
            "k",
            ParamType::Int { lo: 1, hi: 4096 },
            ParamDefault::Required,
            "number of dispatchers, each with its own view of the loads",
        ),
        ParamDef::new(
            "tau",
            ParamType::Int { lo: 1, hi: u32::MAX },
            ParamDefault::Num(1.0),
            "a dispatcher's view is refreshed after every tau of its own balls",
        ),
        ParamDef::new(
            "assign",
            ParamType::Choice(&["round_robin", "random"]),
            ParamDefault::Text("round_robin"),
            "which dispatcher takes a ball",
        ),
        ParamDef::new(
            "own",
            ParamType::Bool,
            ParamDefault::Bool(true),
            "a view counts the dispatcher's own balls at once (else only at refreshes)",
        ),
    ],
};

fn count(args: &Args, name: &str) -> u64 {
    args.num(name) as u64
}

impl Churn {
    /// The schedule of checked parameters ([`CHURN`]).
    pub fn from_args(args: &Args) -> Self {
        let every = count(args, "every");
        Self {
            every,
            first: args.opt_num("first").map_or(every, |x| x as u64),
            events: args.opt_num("events").map(|x| x as u64),
            leave: args.int("leave"),
            join: args.int("join"),
            join_at: match args.text("join_at") {
                Some("average") => JoinAt::Average,
                _ => JoinAt::Empty,
            },
            leaving: match args.text("leaving") {
                Some("heaviest") => Leaving::Heaviest,
                Some("lightest") => Leaving::Lightest,
                _ => Leaving::Random,
            },
            balls: match args.text("balls") {
                Some("rethrown") => LeftBalls::Rethrown,
                _ => LeftBalls::Lost,
            },
        }
    }

    /// Checks `given` against [`CHURN`] and builds the schedule.
    pub fn build(given: &[(&str, ParamValue)]) -> Result<Self, ParamError> {
        Ok(Self::from_args(&CHURN.args(given)?))
    }

    /// The number of events of a run of `m` balls (events happen before ball `m`).
    pub fn events_before(&self, m: u64) -> u64 {
        if self.first >= m {
            return 0;
        }
        let fit = (m - 1 - self.first) / self.every + 1;
        self.events.map_or(fit, |e| e.min(fit))
    }

    /// The fewest and the most bins present during a run of `n` bins and `m` balls.
    pub fn bins_range(&self, n: u64, m: u64) -> (i128, i128) {
        let e = i128::from(self.events_before(m));
        let (leave, join) = (i128::from(self.leave), i128::from(self.join));
        let n = i128::from(n);
        // Within an event the leaves come first; after it the count moves by join − leave.
        let low_at = |j: i128| n + j * (join - leave) - leave;
        let low = if e == 0 { n } else { n.min(low_at(0)).min(low_at(e - 1)) };
        let high = n.max(n + e * (join - leave));
        (low, high)
    }

    /// The parameters as `key=value` words (the `ballast simulate --churn` text).
    pub fn describe(&self) -> String {
        let mut words = vec![format!("every={}", self.every)];
        if self.first != self.every {
            words.push(format!("first={}", self.first));
        }
        if let Some(e) = self.events {
            words.push(format!("events={e}"));
        }
        words.push(format!("leave={}", self.leave));
        words.push(format!("join={}", self.join));
        let join_at = if self.join_at == JoinAt::Average { "average" } else { "empty" };
        words.push(format!("join_at={join_at}"));
        let leaving = match self.leaving {
            Leaving::Random => "random",
            Leaving::Heaviest => "heaviest",
            Leaving::Lightest => "lightest",
        };
        words.push(format!("leaving={leaving}"));
        let balls = if self.balls == LeftBalls::Rethrown { "rethrown" } else { "lost" };
        words.push(format!("balls={balls}"));
        words.join(",")
    }
}

impl Dispatchers {
    /// The dispatchers of checked parameters ([`DISPATCHERS`]).
    pub fn from_args(args: &Args) -> Self {
        Self {
            k: args.int("k"),
            tau: count(args, "tau"),
            assign: match args.text("assign") {
                Some("random") => Assign::Random,
                _ => Assign::RoundRobin,
            },
            own: args.flag("own"),
        }
    }

    /// Checks `given` against [`DISPATCHERS`] and builds the dispatchers.
    pub fn build(given: &[(&str, ParamValue)]) -> Result<Self, ParamError> {
        Ok(Self::from_args(&DISPATCHERS.args(given)?))
    }

    /// The parameters as `key=value` words (the `ballast simulate --dispatchers` text).
    pub fn describe(&self) -> String {
        let assign = if self.assign == Assign::Random { "random" } else { "round_robin" };
        format!("k={},tau={},assign={assign},own={}", self.k, self.tau, self.own)
    }
}

/// The memory churn or dispatchers add to a run (part of
/// [`crate::registry::run_memory_bytes`]): with churn, the bins that join beyond `n` and the
/// copy of the loads an event makes (8 bytes per bin each); with dispatchers, one view of 8
/// bytes per bin per dispatcher and the log of placements since the stalest refresh (8
/// bytes per ball, about `k·tau` balls with round robin, at most `m`).
pub fn dynamic_bins_bytes(spec: &RunSpec) -> u128 {
    let (n, m) = (u128::from(spec.n), u128::from(spec.m));
    let churn = spec.churn.map_or(0, |c| {
        let high = c.bins_range(spec.n, spec.m).1.max(0) as u128;
        (high.saturating_sub(n) + high) * 8
    });
    let dispatchers = spec.dispatchers.map_or(0, |d| {
        let k = u128::from(d.k);
        k * n * 8 + (k * u128::from(d.tau)).min(m) * 8
    });
    churn + dispatchers
}

/// Whether churn runs `process` on the level engine: the processes whose rule reads only
/// the loads of uniform samples and which keep no bin between balls, so that the rule on the
/// sorted view and the events as histogram moves are the same law (`engine = "levels"`;
/// `auto` keeps the bin engine).
pub fn churn_on_levels(process: &ProcessSpec) -> bool {
    matches!(
        process,
        ProcessSpec::OneChoice
            | ProcessSpec::DChoice { .. }
            | ProcessSpec::OnePlusBeta { .. }
            | ProcessSpec::Threshold { .. }
            | ProcessSpec::RelativeThreshold { .. }
            | ProcessSpec::MeanThinning { .. }
    )
}

/// Why churn or dispatchers do not apply to `process`, if they do not: the rules that keep
/// a bin between balls (a cache, a round, a probe budget of the whole run) or read ranks
/// that the loops do not maintain.
fn process_refusal(process: &ProcessSpec) -> Option<&'static str> {
    match process {
        ProcessSpec::Memory { .. } | ProcessSpec::Caching { .. } => {
            Some("its cache keeps a bin between balls")
        }
        ProcessSpec::TightPacking { .. } => Some("its rounds keep a bin between balls"),
        ProcessSpec::Adaptive { .. } => Some("its probe thresholds are planned for the whole run"),
        ProcessSpec::Equalize { .. } | ProcessSpec::EqualizeMoves { .. } => {
            Some("it moves balls between bins")
        }
        ProcessSpec::Quantile { .. } | ProcessSpec::MixedQuantile { .. } => {
            Some("it reads ranks, which these loops do not maintain")
        }
        ProcessSpec::Custom(_) => Some("a process item's rule may keep a bin between balls"),
        _ => None,
    }
}

/// The checks of a spec with churn or dispatchers (part of [`RunSpec::validate`]): one of
/// the two, the sequential setting, unit weights, uniform samples, the bin engine for
/// dispatchers (churn on the level engine: `churn_on_levels`, checked by the engine choice),
/// a process without state between balls, and at least one bin present at every moment.
pub fn check_dynamic_bins(spec: &RunSpec) -> Result<(), Error> {
    let what = match (&spec.churn, &spec.dispatchers) {
        (None, None) => return Ok(()),
        (Some(_), Some(_)) => {
            return Err(Error::Unsupported(
                "churn and dispatchers cannot be combined in one run".into(),
            ))
        }
        (Some(_), None) => "churn",
        (None, Some(_)) => "dispatchers",
    };
    let refuse = |why: String| Err(Error::Unsupported(format!("{what}: {why}")));
    if spec.setting != Setting::Sequential {
        return refuse(
            "needs the sequential setting (dispatchers are themselves the setting of stale \
             views; k = 1 with own = false is the batched setting)"
                .into(),
        );
    }
    if spec.weights != Weights::Unit {
        return refuse("unit weights only".into());
    }
    if !spec.sampling.is_uniform() {
        return refuse("uniform samples only (a sampling law is per bin, and bins change)".into());
    }
    if spec.engine == Engine::Levels && spec.dispatchers.is_some() {
        return refuse(
            "runs on the bin engine only (each dispatcher's view is a load per bin); use \
             engine = \"bins\" or \"auto\""
                .into(),
        );
    }
    if let Some(why) = process_refusal(&spec.process) {
        return refuse(format!("does not apply to process `{}`: {why}", spec.process.kind()));
    }
    if let Some(c) = spec.churn {
        let (low, high) = c.bins_range(spec.n, spec.m);
        if low < 1 {
            return refuse(format!(
                "the schedule leaves no bin present (n = {}, {} events of {} leaves and {} \
                 joins before ball m = {})",
                spec.n,
                c.events_before(spec.m),
                c.leave,
                c.join,
                spec.m
            ));
        }
        if high > i128::from(u32::MAX) {
            return refuse(format!("the schedule makes more than {} bins", u32::MAX));
        }
    }
    Ok(())
}
