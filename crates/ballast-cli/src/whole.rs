//! Whole numbers on the command line: `1000000`, `1_000_000`, or a number in any float
//! notation that is an exact whole number (`1e6`, `2.5e3`, `1000000.0`, what Python prints
//! for `1e6`). Anything else (`1.5e0`, `-3`, `1e30`) is refused with the value read.

/// Parses a non-negative whole number that fits in a u64.
pub(crate) fn parse(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let plain = t.replace('_', "");
    if let Ok(v) = plain.parse::<u64>() {
        return Ok(v);
    }
    let Ok(x) = plain.parse::<f64>() else {
        return Err(format!(
            "`{text}` is not a number (expected a whole number such as 1000 or 1e6)"
        ));
    };
    if !x.is_finite() || x < 0.0 {
        return Err(format!("`{text}`: expected a whole number of at least 0"));
    }
    if x.fract() != 0.0 {
        return Err(format!("`{text}` is {x}, not a whole number (expected e.g. 1000 or 1e6)"));
    }
    // 2^64 is exactly representable; every float below it is a whole number that fits.
    if x >= 18_446_744_073_709_551_616.0 {
        return Err(format!("`{text}` is larger than the largest value, {}", u64::MAX));
    }
    // An exact whole number beyond 2^53 may not be the one written (`9007199254740993.0`
    // reads as 2^53): refused unless written as digits.
    if x > 9_007_199_254_740_992.0 {
        return Err(format!(
            "`{text}` is beyond 2^53, where a float is not exact: write the digits"
        ));
    }
    Ok(x as u64)
}

/// [`parse`] within `lo..=hi`.
fn parse_in(text: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let v = parse(text)?;
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is not in {lo}..={hi}"))
    }
}

/// Runs of `ballast simulate`: 1 to 10^7.
pub(crate) fn runs(text: &str) -> Result<u64, String> {
    parse_in(text, 1, 10_000_000)
}

/// Worker threads: 1 to 1024.
pub(crate) fn threads(text: &str) -> Result<u64, String> {
    parse_in(text, 1, 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_whole_numbers_in_any_notation() {
        for (t, v) in
            [("1000", 1000), ("1_000", 1000), ("1e6", 1_000_000), ("1000000.0", 1_000_000)]
        {
            assert_eq!(parse(t), Ok(v), "{t}");
        }
        assert_eq!(parse("2.5e3"), Ok(2500));
        assert_eq!(parse("18446744073709551615"), Ok(u64::MAX));
    }

    #[test]
    fn fractions_negatives_and_inexact_values_are_refused() {
        assert!(parse("1.5e0").unwrap_err().contains("is 1.5, not a whole number"));
        assert!(parse("-3").unwrap_err().contains("at least 0"));
        assert!(parse("1e30").unwrap_err().contains("larger than"));
        assert!(parse("1e17").unwrap_err().contains("beyond 2^53"));
        assert!(parse("ten").unwrap_err().contains("not a number"));
        assert!(runs("0").unwrap_err().contains("1..=10000000"));
    }
}
