//! What one run reports.

use crate::final_metrics::FinalMetrics;

/// Per-run metrics (`docs/metrics.md#per-run-outcome`). Gaps are `max load − W/n`. The
/// runner stores it as it is, in its checkpoints and shard files (feature `serde`).
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RunOutcome {
    /// Gap at the end of the run.
    pub final_gap: f64,
    /// Largest gap over the observation points (batch ends in the batched setting; the
    /// `observe_every` points and the end in the sequential setting).
    pub max_gap: f64,
    /// Gap at each observation point, in order, when the spec asks for it (else empty).
    pub trajectory: Vec<f64>,
    /// Largest load at each observation point, in order, when the spec asks for it
    /// ([`crate::RunSpec::record_loads`]; else empty). Same points as the gap trajectory.
    pub max_trajectory: Vec<f64>,
    /// Smallest load at each observation point, in order, when the spec asks for it
    /// ([`crate::RunSpec::record_loads`]; else empty).
    pub min_trajectory: Vec<f64>,
    /// Largest load at the end.
    pub max_load: f64,
    /// Smallest load at the end.
    pub min_load: f64,
    /// The final-load metrics (`empty_bins`, …), computed once from the final loads
    /// ([`crate::final_metrics`]).
    pub finals: FinalMetrics,
    /// Number of balls allocated.
    pub balls: u64,
    /// Number of bin samples drawn.
    pub samples: u64,
    /// Number of observation points.
    pub observations: u64,
    /// Number of allocation steps (rounds): one per sample decision, so `balls / steps` is
    /// the mean number of balls a step places (above 1 for Twinning and Packing). Counted by
    /// the bin engine; 0 where an engine does not count steps (the level engine).
    pub steps: u64,
    /// Histogram of bin samples (probes) per step, `samples_per_step[k]` = number of steps
    /// that drew `k` samples; filled for processes whose probe count varies (adaptive
    /// probing), empty otherwise.
    pub samples_per_step: Vec<u64>,
    /// Balls that changed bin (reallocation processes; 0 otherwise).
    pub moved: u64,
}

impl RunOutcome {
    /// Largest number of samples drawn in one step, when [`RunOutcome::samples_per_step`]
    /// is filled.
    pub fn max_samples_per_step(&self) -> Option<usize> {
        self.samples_per_step.iter().rposition(|&c| c > 0)
    }

    /// Bin samples per ball (1 for One-Choice, d for d-Choice, 1 + β for (1+β) on average).
    pub fn samples_per_ball(&self) -> f64 {
        if self.balls == 0 {
            0.0
        } else {
            self.samples as f64 / self.balls as f64
        }
    }
}
