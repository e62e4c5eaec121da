//! The statistics of every item kind (the `statistic` column of the CSVs): one enum,
//! each statistic declared once with its doc, its CSV name, the item kinds whose series may
//! name it and its axis label. A leaf: the config schema and the kinds read it.
//!
//! A new statistic is one entry of the [`statistics!`] list below (and its computation in
//! the kinds that accept it).

use serde::Serialize;

/// An item kind (`kind = "…"` at the top of a config), as far as statistics care: the
/// kinds whose series may name a statistic ([`Statistic::kinds`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Balls into bins (no `kind`, or `kind = "allocation"`).
    Allocation,
    /// Graphical processes and the off-line optimum (`kind = "graph"`).
    Graph,
    /// Round-based processes (`kind = "dynamic"`).
    Dynamic,
    /// Potential functions of a process (`kind = "potential"`).
    Potential,
}

impl Kind {
    /// Every kind, in listing order.
    pub const ALL: [Kind; 4] = [Kind::Allocation, Kind::Graph, Kind::Dynamic, Kind::Potential];

    /// The `kind = "…"` of its configs.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Allocation => "allocation",
            Kind::Graph => "graph",
            Kind::Dynamic => "dynamic",
            Kind::Potential => "potential",
        }
    }
}

/// Declares [`Statistic`]: per variant its doc (and `#[default]` once),
/// `Variant: "csv_name", [kinds], "axis label";`.
/// The CSV name is the serde name (snake_case of the variant; a test checks both agree).
macro_rules! statistics {
    ($( $(#[$meta:meta])+ $v:ident: $name:literal, [$($k:ident),+], $label:literal; )+) => {
        /// A statistic a series reports (the `statistic` column of its CSV). The declaration
        /// order is the order of every listing and of the allowed values in messages.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
        #[serde(rename_all = "snake_case")]
        pub enum Statistic {
            $( $(#[$meta])+ $v, )+
        }

        impl Statistic {
            /// Every statistic, in declaration order.
            pub const ALL: &'static [Statistic] = &[$(Self::$v),+];

            /// The snake_case name used in CSV files and configs.
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$v => $name,)+
                }
            }

            /// The item kinds whose series may name it (as the statistic or, for
            /// allocation series, in `also`).
            pub fn kinds(self) -> &'static [Kind] {
                match self {
                    $(Self::$v => &[$(Kind::$k),+],)+
                }
            }

            /// A human description for axis labels and reports.
            pub fn describe(self) -> &'static str {
                match self {
                    $(Self::$v => $label,)+
                }
            }
        }
    };
}

statistics! {
    /// Per run the largest gap over the observation points (batch ends when batched, every
    /// `observe_every` balls and the end when sequential), averaged over runs. The default.
    #[default]
    MaxGap: "max_gap", [Allocation, Graph],
        "largest gap over the observation points (mean over runs)";
    /// Gap at the end of the run, averaged over runs.
    FinalGap: "final_gap", [Allocation, Graph], "gap at the end (mean over runs)";
    /// After every batch, the running maximum of the gap, averaged over runs (one row per
    /// batch; the x axis becomes the batch index).
    RunningMaxGap: "running_max_gap", [Allocation], "running max gap (mean over runs)";
    /// The gap at every observation point (batch ends when batched, every `observe_every`
    /// balls and the end when sequential), averaged over runs: one row per observation point,
    /// the x axis becomes balls / n. The tidy trajectory of the gap.
    GapTrajectory: "gap_trajectory", [Allocation], "gap (mean over runs)";
    /// The largest load at every observation point (the points of `gap_trajectory`),
    /// averaged over runs: one row per observation point, x = balls / n.
    MaxTrajectory: "max_trajectory", [Allocation], "max load (mean over runs)";
    /// The smallest load at every observation point (the points of `gap_trajectory`),
    /// averaged over runs: one row per observation point, x = balls / n.
    MinTrajectory: "min_trajectory", [Allocation], "min load (mean over runs)";
    /// Each of the series' `potentials` at every observation point, averaged over runs: one
    /// row per potential and observation point, series `<series> [<potential>]`, x = balls
    /// / n. Needs `potentials` and observation points; as the statistic or in `also`.
    PotentialTrajectory: "potential_trajectory", [Allocation], "potential (mean over runs)";
    /// The empirical distribution of the gap at the end (or at each block end), rounded by the
    /// series' `round` (default up): one row per gap value, value = percent of samples (the x
    /// axis becomes the gap value).
    Distribution: "distribution", [Allocation], "percent of samples";
    /// The largest load at the end, averaged over runs.
    MaxLoad: "max_load", [Allocation, Graph], "max load at the end (mean over runs)";
    /// The empirical distribution of the largest load at the end: one row per value, value =
    /// percent of runs (the x axis becomes the max load).
    MaxLoadDistribution: "max_load_distribution", [Allocation],
        "percent of runs with this max load";
    /// The smallest load at the end, averaged over runs.
    MinLoad: "min_load", [Allocation], "min load at the end (mean over runs)";
    /// The underload at the end, W/n − min load, averaged over runs.
    Underload: "underload", [Allocation],
        "underload W/n - min load at the end (mean over runs)";
    /// Bins with load 0 at the end, averaged over runs.
    EmptyBins: "empty_bins", [Allocation], "empty bins at the end (mean over runs)";
    /// Balls until the gap first falls to the series' `recovery_target` (censored runs count
    /// as their balls, `m`), averaged over runs ([`ballast_core::recovery`]).
    RecoveryTime: "recovery_time", [Allocation],
        "balls until the gap first reaches the target (mean over runs)";
    /// The gap at the end divided by ln n, averaged over runs.
    GapOverLnN: "gap_over_ln_n", [Allocation], "gap at the end / ln n (mean over runs)";
    /// Bin samples per ball, averaged over runs (graphical processes: 2 vertex samples per
    /// edge step, 1 per vertex step).
    SamplesPerBall: "samples_per_ball", [Allocation, Graph],
        "bin samples per ball (mean over runs)";
    /// Balls per bin sample (above 1 for Packing and Twinning), averaged over runs.
    BallsPerSample: "balls_per_sample", [Allocation], "balls per bin sample (mean over runs)";
    /// Mean number of probes (bin samples) per step, averaged over runs.
    ProbesMean: "probes_mean", [Allocation], "probes per step (mean over runs)";
    /// Largest number of probes in one step of a run, averaged over runs.
    ProbesMax: "probes_max", [Allocation], "largest probes in one step (mean over runs)";
    /// Balls moved per ball allocated (reallocation processes), averaged over runs.
    MovedPerBall: "moved_per_ball", [Allocation], "balls moved per ball (mean over runs)";
    /// The distribution of probes (bin samples) per step: one row per probe count (x) with
    /// the fraction of the run's steps that drew it, mean over runs. Recorded by the bin
    /// engine ([`ballast_core::RunSpec::record_probes`]); as the statistic or in `also`.
    ProbesDistribution: "probes_distribution", [Allocation],
        "fraction of steps with this many probes (mean over runs)";
    /// The normalised load distribution at the end: one row per offset x = load − W/n seen
    /// in some run, value = the fraction of the run's bins at that offset, mean over runs
    /// (which is the fraction pooled over runs; the per-run fractions are the row's values).
    LoadDistribution: "load_distribution", [Allocation],
        "fraction of bins at load − average (mean over runs)";
    /// The sorted load vector at the end: one row per rank i = 1..n (1 = the lightest bin),
    /// value = the i-th smallest load, mean over runs. At most 10⁵ bins.
    SortedLoads: "sorted_loads", [Allocation], "i-th smallest load at the end (mean over runs)";
    /// The largest loads at the end: one row per rank k = 1..min(10, n) (1 = the heaviest
    /// bin), value = the k-th largest load, mean over runs.
    TopLoads: "top_loads", [Allocation], "k-th largest load at the end (mean over runs)";
    /// The spread at the end, max load − min load, averaged over runs.
    Spread: "spread", [Allocation], "max load − min load at the end (mean over runs)";
    /// The empirical distribution of the spread at the end: one row per value, value =
    /// percent of runs (the x axis becomes the spread).
    SpreadDistribution: "spread_distribution", [Allocation], "percent of runs with this spread";
    /// The balls above a capacity c at the end, Σᵢ max(0, xᵢ − c) over the bins (c: the
    /// series' `above`), averaged over runs: the overflow if every bin held at most c.
    BallsAbove: "balls_above", [Allocation],
        "balls above the capacity c at the end (mean over runs)";
    /// Off-line d-choice optimum: minimum possible max load, mean over instances.
    OfflineOptimum: "offline_optimum", [Graph],
        "off-line optimum max load (mean over instances)";
    /// On-line Greedy\[d\] max load on the same choices, mean over instances.
    GreedyMaxLoad: "greedy_max_load", [Graph], "Greedy[d] max load (mean over instances)";
    /// Round-based process: time average of the max load over the measured rounds.
    AvgMaxLoad: "avg_max_load", [Dynamic], "time-averaged max load";
    /// Round-based process: time average of the fraction of empty bins.
    AvgFractionEmptyBins: "avg_fraction_empty_bins", [Dynamic],
        "time-averaged fraction of empty bins";
    /// Round-based process: time average of the total ("system") load.
    AvgSystemLoad: "avg_system_load", [Dynamic], "time-averaged system load";
    /// Round-based process: time average of the system load divided by n.
    AvgLoadPerBin: "avg_load_per_bin", [Dynamic], "time-averaged system load / n";
    /// Time-averaged max load divided by the theorem's shape ((1/(1−λ))·ln(n/(1−λ)) for
    /// d = 1, ln(n/(1−λ)) for d ≥ 2).
    MaxLoadOverShape: "max_load_over_shape", [Dynamic], "time-averaged max load / bound's shape";
    /// Round-based process: the largest max load of a measured round, mean over runs.
    PeakMaxLoad: "peak_max_load", [Dynamic],
        "peak max load over the measured rounds (mean over runs)";
    /// Round-based process: the distribution of the max load over the measured rounds, one
    /// row per max-load value (x) with the fraction of rounds at it, mean over runs.
    MaxLoadHistogram: "max_load_histogram", [Dynamic],
        "fraction of measured rounds with this max load";
    /// Potential value at a sample time, mean over runs (x = balls / n). Also the rows of a
    /// series' tracked `potentials` in allocation and graph items.
    Potential: "potential", [Potential], "potential (mean over runs)";
    /// Mean change of the potential per ball, conditional on its level (x = level).
    DriftPerBall: "drift_per_ball", [Potential], "mean change of the potential per ball";
    /// Round-based process: time average of the discrepancy, max load − current average.
    AvgDiscrepancy: "avg_discrepancy", [Dynamic], "time-averaged max load − current average";
    /// Round-based process: time average of the overload, max load − highest average so far.
    AvgOverload: "avg_overload", [Dynamic], "time-averaged max load − highest average so far";
    /// Round-based process: the rounds until the discrepancy (max load − current average)
    /// first is at most the series' `recovery_target` (a run that never gets there counts
    /// its simulated rounds), mean over runs.
    RecoveryRounds: "recovery_rounds", [Dynamic],
        "rounds until max load − average first is at most the target";
}

impl Statistic {
    /// The statistics the series of `kind` may name, in declaration order.
    pub fn of_kind(kind: Kind) -> &'static [Statistic] {
        static BY_KIND: std::sync::LazyLock<[Vec<Statistic>; 4]> = std::sync::LazyLock::new(|| {
            Kind::ALL.map(|k| {
                Statistic::ALL.iter().copied().filter(|s| s.kinds().contains(&k)).collect()
            })
        });
        let at = Kind::ALL.iter().position(|&k| k == kind).unwrap_or(0);
        &BY_KIND[at]
    }

    /// The statistics an allocation series may name, in order (for listings).
    pub fn allocation() -> &'static [Statistic] {
        Self::of_kind(Kind::Allocation)
    }

    /// Every statistic an allocation series may name, comma-separated, for messages.
    pub fn names() -> String {
        allocation_names().join(", ")
    }

    /// The allocation statistic of this name, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::allocation().iter().copied().find(|v| v.name() == name)
    }

    /// The statistic of this name among `allowed`, or the message naming the allowed ones
    /// (with a suggestion for a near miss).
    pub(crate) fn from_name_in(s: &str, allowed: &[Statistic]) -> Result<Self, String> {
        allowed.iter().copied().find(|m| m.name() == s).ok_or_else(|| {
            let names: Vec<&str> = allowed.iter().map(|m| m.name()).collect();
            format!(
                "unknown statistic `{s}`: expected one of {}{}",
                names.join(", "),
                ballast_core::registry::did_you_mean(s, names.iter().copied())
            )
        })
    }

    /// Whether rows of this statistic follow a run over time (one row per observation point)
    /// rather than summarise it.
    pub fn is_trajectory(self) -> bool {
        matches!(
            self,
            Self::RunningMaxGap | Self::GapTrajectory | Self::MaxTrajectory | Self::MinTrajectory
        )
    }

    /// Whether rows of this statistic are values at the observation points (x = balls / n).
    pub fn at_observations(self) -> bool {
        matches!(
            self,
            Self::GapTrajectory
                | Self::MaxTrajectory
                | Self::MinTrajectory
                | Self::PotentialTrajectory
        )
    }

    /// Whether the runs must record their largest and smallest load at every observation
    /// point ([`ballast_core::RunSpec::record_loads`]).
    pub fn records_loads(self) -> bool {
        matches!(self, Self::MaxTrajectory | Self::MinTrajectory)
    }

    /// Whether rows of this statistic are a distribution (one row per value, in percent).
    pub fn is_distribution(self) -> bool {
        matches!(self, Self::Distribution | Self::MaxLoadDistribution | Self::SpreadDistribution)
    }

    /// Whether the statistic is a gap or a distribution of gaps.
    pub fn is_gap(self) -> bool {
        matches!(
            self,
            Self::MaxGap
                | Self::FinalGap
                | Self::RunningMaxGap
                | Self::GapTrajectory
                | Self::Distribution
                | Self::GapOverLnN
        )
    }
}

/// The names of [`Statistic::allocation`], in order.
fn allocation_names() -> &'static [&'static str] {
    static NAMES: std::sync::LazyLock<Vec<&'static str>> =
        std::sync::LazyLock::new(|| Statistic::allocation().iter().map(|s| s.name()).collect());
    &NAMES
}

/// By name, among the allocation statistics (the other kinds read the name as text and
/// check it against theirs): an unknown name is serde's "unknown variant" error listing the
/// allowed names.
impl<'de> serde::Deserialize<'de> for Statistic {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::from_name(&s).ok_or_else(|| serde::de::Error::unknown_variant(&s, allocation_names()))
    }
}

#[cfg(test)]
mod tests {
    use super::{Kind, Statistic};

    #[test]
    fn names_are_the_serde_names_and_unique() {
        for s in Statistic::ALL {
            let json = serde_json::to_string(s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.name()));
        }
        let mut names: Vec<&str> = Statistic::ALL.iter().map(|s| s.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Statistic::ALL.len());
    }

    #[test]
    fn every_statistic_belongs_to_a_kind_and_every_kind_has_some() {
        for s in Statistic::ALL {
            assert!(!s.kinds().is_empty(), "{}", s.name());
        }
        let counts: Vec<usize> = Kind::ALL.iter().map(|&k| Statistic::of_kind(k).len()).collect();
        assert_eq!(counts, [27, 6, 10, 2]);
        let shared: Vec<&str> = Statistic::of_kind(Kind::Graph)
            .iter()
            .filter(|s| s.kinds().contains(&Kind::Allocation))
            .map(|s| s.name())
            .collect();
        assert_eq!(shared, ["max_gap", "final_gap", "max_load", "samples_per_ball"]);
    }

    #[test]
    fn allocation_names_deserialize_and_the_others_are_refused_with_the_list() {
        let ok: Statistic = serde_json::from_str("\"spread\"").unwrap();
        assert_eq!(ok, Statistic::Spread);
        let e = serde_json::from_str::<Statistic>("\"avg_max_load\"").unwrap_err().to_string();
        assert!(e.contains("unknown variant `avg_max_load`") && e.contains("`balls_above`"), "{e}");
        let e = Statistic::from_name_in("potentail", Statistic::of_kind(Kind::Potential));
        assert_eq!(
            e.unwrap_err(),
            "unknown statistic `potentail`: expected one of potential, drift_per_ball; \
             did you mean `potential`?"
        );
    }
}
