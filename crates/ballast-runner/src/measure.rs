//! The statistics of the graph, dynamic and potential items (the `statistic` column of
//! their CSVs). A leaf: the config schema names them, the kinds compute them.

use serde::Serialize;

/// A statistic of a non-allocation item kind (the `statistic` column of its CSV).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// Graphical process: gap at the end, mean over runs.
    FinalGap,
    /// Graphical process: the largest gap over the observation points of a run (batch ends
    /// when batched, every `observe_every` balls and the end when sequential), mean over runs.
    MaxGap,
    /// Graphical process: the largest load at the end, mean over runs.
    MaxLoad,
    /// Graphical process: vertex samples per ball (2 per edge step, 1 per vertex step), mean
    /// over runs.
    SamplesPerBall,
    /// Off-line d-choice optimum: minimum possible max load, mean over instances.
    OfflineOptimum,
    /// On-line Greedy\[d\] max load on the same choices, mean over instances.
    GreedyMaxLoad,
    /// Round-based process: time average of the max load over the measured rounds.
    AvgMaxLoad,
    /// Round-based process: time average of the fraction of empty bins.
    AvgFractionEmptyBins,
    /// Round-based process: time average of the total ("system") load.
    AvgSystemLoad,
    /// Round-based process: time average of the system load divided by n.
    AvgLoadPerBin,
    /// Time-averaged max load divided by the theorem's shape ((1/(1−λ))·ln(n/(1−λ)) for
    /// d = 1, ln(n/(1−λ)) for d ≥ 2).
    MaxLoadOverShape,
    /// Round-based process: the largest max load of a measured round, mean over runs.
    PeakMaxLoad,
    /// Round-based process: the distribution of the max load over the measured rounds, one
    /// row per max-load value (x) with the fraction of rounds at it, mean over runs.
    MaxLoadHistogram,
    /// Potential value at a sample time, mean over runs (x = balls / n).
    Potential,
    /// Mean change of the potential per ball, conditional on its level (x = level).
    DriftPerBall,
    /// Round-based process: time average of the discrepancy, max load − current average.
    AvgDiscrepancy,
    /// Round-based process: time average of the overload, max load − highest average so far.
    AvgOverload,
    /// Round-based process: the rounds until the discrepancy (max load − current average)
    /// first is at most the series' `recovery_target` (a run that never gets there counts
    /// its simulated rounds), mean over runs.
    RecoveryRounds,
}

impl Measure {
    /// Every measure, in declaration order (for listings; a test keeps it complete).
    pub const ALL: [Measure; 18] = [
        Self::FinalGap,
        Self::MaxGap,
        Self::MaxLoad,
        Self::SamplesPerBall,
        Self::OfflineOptimum,
        Self::GreedyMaxLoad,
        Self::AvgMaxLoad,
        Self::AvgFractionEmptyBins,
        Self::AvgSystemLoad,
        Self::AvgLoadPerBin,
        Self::MaxLoadOverShape,
        Self::PeakMaxLoad,
        Self::MaxLoadHistogram,
        Self::Potential,
        Self::DriftPerBall,
        Self::AvgDiscrepancy,
        Self::AvgOverload,
        Self::RecoveryRounds,
    ];

    /// The snake_case name used in CSV files.
    pub fn name(self) -> &'static str {
        match self {
            Self::FinalGap => "final_gap",
            Self::MaxGap => "max_gap",
            Self::MaxLoad => "max_load",
            Self::SamplesPerBall => "samples_per_ball",
            Self::OfflineOptimum => "offline_optimum",
            Self::GreedyMaxLoad => "greedy_max_load",
            Self::AvgMaxLoad => "avg_max_load",
            Self::AvgFractionEmptyBins => "avg_fraction_empty_bins",
            Self::AvgSystemLoad => "avg_system_load",
            Self::AvgLoadPerBin => "avg_load_per_bin",
            Self::MaxLoadOverShape => "max_load_over_shape",
            Self::PeakMaxLoad => "peak_max_load",
            Self::MaxLoadHistogram => "max_load_histogram",
            Self::Potential => "potential",
            Self::DriftPerBall => "drift_per_ball",
            Self::AvgDiscrepancy => "avg_discrepancy",
            Self::AvgOverload => "avg_overload",
            Self::RecoveryRounds => "recovery_rounds",
        }
    }

    /// A human description for axis labels.
    pub fn describe(self) -> &'static str {
        match self {
            Self::FinalGap => "gap at the end (mean over runs)",
            Self::MaxGap => "largest gap over the observation points (mean over runs)",
            Self::MaxLoad => "max load at the end (mean over runs)",
            Self::SamplesPerBall => "samples per ball (mean over runs)",
            Self::OfflineOptimum => "off-line optimum max load (mean over instances)",
            Self::GreedyMaxLoad => "Greedy[d] max load (mean over instances)",
            Self::AvgMaxLoad => "time-averaged max load",
            Self::AvgFractionEmptyBins => "time-averaged fraction of empty bins",
            Self::AvgSystemLoad => "time-averaged system load",
            Self::AvgLoadPerBin => "time-averaged system load / n",
            Self::MaxLoadOverShape => "time-averaged max load / bound's shape",
            Self::PeakMaxLoad => "peak max load over the measured rounds (mean over runs)",
            Self::MaxLoadHistogram => "fraction of measured rounds with this max load",
            Self::Potential => "potential (mean over runs)",
            Self::DriftPerBall => "mean change of the potential per ball",
            Self::AvgDiscrepancy => "time-averaged max load − current average",
            Self::AvgOverload => "time-averaged max load − highest average so far",
            Self::RecoveryRounds => "rounds until max load − average first is at most the target",
        }
    }

    pub(crate) fn from_name(s: &str, allowed: &[Measure]) -> Result<Self, String> {
        allowed.iter().copied().find(|m| m.name() == s).ok_or_else(|| {
            let names: Vec<&str> = allowed.iter().map(|m| m.name()).collect();
            format!(
                "unknown statistic `{s}`: expected one of {}{}",
                names.join(", "),
                ballast_core::registry::did_you_mean(s, names.iter().copied())
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Measure;

    /// The position of a measure in its declaration; the match is exhaustive, so a new
    /// variant does not compile until it is placed here and in [`Measure::ALL`].
    fn position(m: Measure) -> usize {
        match m {
            Measure::FinalGap => 0,
            Measure::MaxGap => 1,
            Measure::MaxLoad => 2,
            Measure::SamplesPerBall => 3,
            Measure::OfflineOptimum => 4,
            Measure::GreedyMaxLoad => 5,
            Measure::AvgMaxLoad => 6,
            Measure::AvgFractionEmptyBins => 7,
            Measure::AvgSystemLoad => 8,
            Measure::AvgLoadPerBin => 9,
            Measure::MaxLoadOverShape => 10,
            Measure::PeakMaxLoad => 11,
            Measure::MaxLoadHistogram => 12,
            Measure::Potential => 13,
            Measure::DriftPerBall => 14,
            Measure::AvgDiscrepancy => 15,
            Measure::AvgOverload => 16,
            Measure::RecoveryRounds => 17,
        }
    }

    #[test]
    fn all_holds_every_measure_once() {
        for (i, m) in Measure::ALL.iter().enumerate() {
            assert_eq!(position(*m), i, "{}", m.name());
        }
        let mut names: Vec<&str> = Measure::ALL.iter().map(|m| m.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Measure::ALL.len());
    }
}
