//! The human lines of `ballast simulate --loads`: the normalised load distribution, the
//! largest loads and the sorted loads of the final load vector (means over runs).

use std::fmt::Write as _;

use ballast_runner::Statistic;

use super::SimulateReport;

/// The statistics `--loads` adds to the one-point config (`loads`: the flag) of n bins:
/// `sorted_loads` only up to [`ballast_runner::MAX_SORTED_BINS`] bins.
pub(crate) fn statistics(loads: bool, n: u64) -> impl Iterator<Item = Statistic> {
    let sorted = n <= ballast_runner::MAX_SORTED_BINS;
    [Statistic::LoadDistribution, Statistic::TopLoads, Statistic::SortedLoads]
        .into_iter()
        .filter(move |s| loads && (sorted || *s != Statistic::SortedLoads))
}

/// At most this many sorted loads are printed (the JSON has them all).
const SHOWN: usize = 20;

/// Appends the final-load lines of `r` to `s` (nothing without `--loads`).
pub(crate) fn print_loads(s: &mut String, r: &SimulateReport) {
    if !r.load_distribution.is_empty() {
        let cells: Vec<String> = r
            .load_distribution
            .iter()
            .map(|b| format!("{:+}: {:.4e}", b.value, b.fraction))
            .collect();
        let _ = writeln!(s, "{:<14}{}  (load − W/n: fraction of bins)", "loads", cells.join(", "));
    }
    if !r.top_loads.is_empty() {
        let top: Vec<String> = r.top_loads.iter().map(|v| format!("{v:.2}")).collect();
        let _ = writeln!(s, "{:<14}{}  (largest first)", "top_loads", top.join(", "));
    }
    if !r.sorted_loads.is_empty() {
        let shown: Vec<String> =
            r.sorted_loads.iter().take(SHOWN).map(|v| format!("{v:.2}")).collect();
        let more = r.sorted_loads.len().saturating_sub(SHOWN);
        let tail = if more > 0 { format!(", … ({more} more in --json)") } else { String::new() };
        let _ = writeln!(s, "{:<14}{}{tail}  (lightest first)", "sorted_loads", shown.join(", "));
    }
}
