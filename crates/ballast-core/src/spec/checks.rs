//! Checks and questions about a process spec that every layer asks: how many distinct
//! samples it draws, and whether its k-Threshold thresholds are usable.

use super::ProcessSpec;

/// Largest number of thresholds.
pub const MAX_K: usize = 64;

/// Checks the thresholds: 1 to [`MAX_K`] finite numbers in strictly increasing order.
pub fn check_thresholds(f: &[f64]) -> Result<(), String> {
    if f.is_empty() || f.len() > MAX_K {
        return Err(format!("{} thresholds; expected 1 to {MAX_K}", f.len()));
    }
    if let Some(x) = f.iter().find(|x| !x.is_finite()) {
        return Err(format!("threshold {x}; expected finite numbers"));
    }
    if let Some(w) = f.windows(2).find(|w| w[0] >= w[1]) {
        return Err(format!(
            "thresholds {} then {}; expected strictly increasing thresholds f_1 < ... < f_k",
            w[0], w[1]
        ));
    }
    Ok(())
}

/// Whether `spec` samples without replacement, and its `d`, for the d-sample family
/// (`d_choice`, `unfair_d_choice`) and `rule`.
pub fn distinct_d(process: &ProcessSpec) -> Option<u32> {
    match process {
        ProcessSpec::WithoutReplacement(p) => match **p {
            ProcessSpec::DChoice { d } | ProcessSpec::UnfairDChoice { d } => Some(d),
            _ => None,
        },
        ProcessSpec::Rule { d, replacement: false, .. } => Some(*d),
        _ => None,
    }
}

/// Whether `spec` is a two-sample process with `replacement = false`.
pub fn is_distinct_pair(process: &ProcessSpec) -> bool {
    match process {
        ProcessSpec::WithoutReplacement(p) => matches!(
            **p,
            ProcessSpec::OnePlusBeta { .. }
                | ProcessSpec::GBounded { .. }
                | ProcessSpec::GMyopic { .. }
                | ProcessSpec::SigmaNoisyLoad { .. }
                | ProcessSpec::KThreshold { .. }
        ),
        _ => false,
    }
}
