//! How the list of an allocation run's final-load metrics ([`ballast_core::FinalMetrics`])
//! is versioned in stored units: a stored `RunOutcome` holds one value per metric, so a unit
//! stored with another list must never be read. The point key names the list
//! ([`key_part`]), so adding a metric needs no new unit format.

use ballast_core::FinalMetrics;

/// The list the point key leaves unnamed: the one of format 9's first units (`empty_bins`
/// only), whose keys then stay as they are.
const FIRST_LIST: [&str; 1] = ["empty_bins"];

/// The point key's part for the metric list: empty for the first list, else the names.
pub(crate) fn key_part() -> String {
    if FinalMetrics::NAMES == FIRST_LIST {
        String::new()
    } else {
        format!(" | finals {:?}", FinalMetrics::NAMES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_longer_list_is_named_in_the_key() {
        if FinalMetrics::NAMES == FIRST_LIST {
            assert_eq!(key_part(), "");
        } else {
            for name in FinalMetrics::NAMES {
                assert!(key_part().contains(name), "{name}");
            }
        }
    }

    #[test]
    fn a_stored_outcome_reads_back_whole() {
        let mut out = ballast_core::RunOutcome {
            final_gap: 1.5,
            max_gap: 2.25,
            trajectory: vec![0.5, 1.5],
            balls: 7,
            samples: 14,
            samples_per_step: vec![0, 3, 2],
            ..Default::default()
        };
        out.finals.empty_bins = 3;
        let bytes = postcard::to_allocvec(&out).unwrap();
        let back: ballast_core::RunOutcome = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back, out);
        // A unit cut short does not decode.
        assert!(
            postcard::from_bytes::<ballast_core::RunOutcome>(&bytes[..bytes.len() - 1]).is_err()
        );
    }
}
