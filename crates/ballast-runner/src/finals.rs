//! How an allocation run's final-load metrics ([`ballast_core::FinalMetrics`]) are stored in
//! checkpoints and shard files: the first, `empty_bins`, as the integer that stored units
//! have held since format 4, then every other metric as an `f64`, in the order of
//! [`ballast_core::FinalMetrics::NAMES`], without a length (a postcard tuple).
//!
//! While `empty_bins` is the only metric the bytes are those of format 8, so stored units
//! stay valid. A list with more metrics is named in the point key ([`key_part`]), so a unit
//! stored with another list is never looked up.

use std::fmt;

use ballast_core::FinalMetrics;
use serde::de::{Error as _, SeqAccess, Visitor};
use serde::ser::SerializeTuple;
use serde::{Deserializer, Serializer};

/// The metric stored as an integer first (the field of earlier formats).
const FIRST: &str = "empty_bins";

/// The point key's part for the metric list: empty for the list of earlier formats
/// (`empty_bins` only), else the names.
pub(crate) fn key_part() -> String {
    if FinalMetrics::NAMES == [FIRST] {
        String::new()
    } else {
        format!(" | finals {:?}", FinalMetrics::NAMES)
    }
}

/// Writes `values` (one per name, `empty_bins` first).
pub(crate) fn serialize<S: Serializer>(values: &[f64], s: S) -> Result<S::Ok, S::Error> {
    let mut t = s.serialize_tuple(values.len())?;
    let (first, rest) = values.split_first().ok_or_else(|| serde::ser::Error::custom("none"))?;
    t.serialize_element(&(*first as u64))?;
    for v in rest {
        t.serialize_element(v)?;
    }
    t.end()
}

/// Reads one value per name of [`FinalMetrics::NAMES`].
pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
    struct Finals;
    impl<'de> Visitor<'de> for Finals {
        type Value = Vec<f64>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{} final-load metrics", FinalMetrics::NAMES.len())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<f64>, A::Error> {
            let n = FinalMetrics::NAMES.len();
            let missing = |i| A::Error::invalid_length(i, &self);
            let first: u64 = seq.next_element()?.ok_or_else(|| missing(0))?;
            let mut values = vec![first as f64];
            for i in 1..n {
                values.push(seq.next_element()?.ok_or_else(|| missing(i))?);
            }
            Ok(values)
        }
    }
    d.deserialize_tuple(FinalMetrics::NAMES.len(), Finals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct Stored {
        #[serde(with = "super")]
        finals: Vec<f64>,
    }

    #[test]
    fn empty_bins_comes_first_and_keeps_the_bytes_of_format_8() {
        assert_eq!(FinalMetrics::NAMES[0], FIRST);
        // The update stays when metrics are added, so this test needs no edit then.
        #[allow(clippy::needless_update)]
        let values = FinalMetrics { empty_bins: 300, ..FinalMetrics::default() }.values();
        let bytes = postcard::to_allocvec(&Stored { finals: values.clone() }).unwrap();
        if FinalMetrics::NAMES.len() == 1 {
            // Format 8 held `empty_bins: u64`: the same bytes.
            assert_eq!(bytes, postcard::to_allocvec(&300u64).unwrap());
            assert_eq!(key_part(), "");
        } else {
            assert!(key_part().contains(FIRST));
        }
        let back: Stored = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back.finals, values);
        // One value too few is refused (the flawed reading of a shorter list).
        assert!(postcard::from_bytes::<Stored>(&bytes[..bytes.len() - 1]).is_err());
    }
}
