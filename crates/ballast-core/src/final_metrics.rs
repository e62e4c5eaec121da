//! The final-load metrics of a run ([`FinalMetrics`], [`crate::RunOutcome::finals`]): what the
//! outcome says about the loads at the end, computed once per run, in one place, from the
//! load levels every store answers (`FinalLoads`: [`crate::LoadState::for_each_level`] and
//! the reallocation stores' equivalent).
//!
//! A new final-load metric is one entry of the `final_metrics!` list below: its name, type,
//! doc and computation. The runner's statistic of the same name reads it without further
//! code (`ballast-runner`: one entry in `statistic.rs`), and `ballast simulate` reports it.

/// A final load store as the metrics read it (every `LoadState` and the reallocation stores,
/// by the observation layer).
pub(crate) trait FinalLoads {
    /// Calls `f(load, bins)` for the levels of the loads: absolute loads on the scale of the
    /// gap (normalised under capacities), each level once or split into several calls.
    fn for_each_level(&self, f: impl FnMut(f64, u64));
}

/// The loads at the end of a run, as the metrics see them: the levels of a store and the
/// average the gap is measured against. Each question about the levels is one pass over
/// them: O(levels) on the level engine, O(n) on the bin engine.
pub(crate) struct Levels<'a, S: ?Sized> {
    store: &'a S,
    average: f64,
}

impl<S: FinalLoads + ?Sized> Levels<'_, S> {
    /// Number of bins whose load satisfies `pred`.
    pub(crate) fn bins_where(&self, pred: impl Fn(f64) -> bool) -> u64 {
        let mut count = 0u64;
        self.store.for_each_level(|x, bins| {
            if pred(x) {
                count += bins;
            }
        });
        count
    }

    /// The average load the gap is measured against (W/n; W/C under capacities), as the
    /// final largest load − the final gap.
    #[allow(dead_code)]
    pub(crate) fn average(&self) -> f64 {
        self.average
    }
}

/// Declares [`FinalMetrics`]: per metric `/// doc name: type = |levels| computation;`, where
/// `levels` is a [`Levels`] of the final store and the computation's value converts to `f64`
/// losslessly for the runner.
macro_rules! final_metrics {
    ($( $(#[$meta:meta])+ $name:ident: $ty:ty = |$levels:ident| $body:expr; )+) => {
        /// The final-load metrics of one run (`docs/metrics.md#per-run-outcome`), in
        /// declaration order ([`FinalMetrics::NAMES`]).
        #[derive(Clone, Debug, Default, PartialEq)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        pub struct FinalMetrics {
            $( $(#[$meta])+ pub $name: $ty, )+
        }

        impl FinalMetrics {
            /// The metrics' names, in declaration order (the order of [`FinalMetrics::values`]).
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),+];

            /// The metrics of the final store `store`, whose gap is measured against
            /// `average`.
            pub(crate) fn of<S: FinalLoads + ?Sized>(store: &S, average: f64) -> Self {
                let all = Levels { store, average };
                Self { $( $name: { let $levels = &all; $body }, )+ }
            }

            /// The values as `f64`, in the order of [`FinalMetrics::NAMES`].
            pub fn values(&self) -> Vec<f64> {
                vec![$(self.$name as f64),+]
            }
        }
    };
}

final_metrics! {
    /// Bins with load 0 at the end (with weights: bins whose load is exactly 0).
    empty_bins: u64 = |levels| levels.bins_where(|x| x == 0.0);
}

impl FinalMetrics {
    /// The value of the metric `name` in `values` (a [`FinalMetrics::values`] list), `None`
    /// when no final-load metric has that name or the list is shorter.
    pub fn value_of(values: &[f64], name: &str) -> Option<f64> {
        let i = Self::NAMES.iter().position(|&n| n == name)?;
        values.get(i).copied()
    }
}
