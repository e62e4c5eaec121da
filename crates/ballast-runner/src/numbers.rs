//! How numbers are written as text: one rule for tables, labels and ticks ([`num`]), one for
//! the CSV's statistics ([`csv_number`]).

/// A number as written in tables: integers without a decimal point, and at most 9 decimals
/// (so a grid value such as 0.05·7 = 0.35000000000000003 shows as 0.35).
pub(crate) fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else if v.abs() < 1e6 {
        let r = (v * 1e9).round() / 1e9;
        if r.fract() == 0.0 {
            format!("{}", r as i64)
        } else {
            format!("{r}")
        }
    } else {
        format!("{v}")
    }
}

/// A value with 9 significant digits, trailing zeros dropped (`75.48`, `2.06891315`), in
/// exponent notation below 10⁻⁶ and from 10¹⁵ on (`1.5e-7`): enough digits for any
/// statistic, none invented.
pub(crate) fn csv_number(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let r: f64 = format!("{v:.8e}").parse().unwrap_or(v);
    if (1e-6..1e15).contains(&r.abs()) {
        format!("{r}")
    } else {
        format!("{r:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::csv_number;

    /// The CSV's text is a function of the `f64` alone, rounded once from its exact binary
    /// value: the two neighbours around the decimal 9.052028185 (the selfstab16 mean that a
    /// JSON read one unit low once turned into `…818`) give different digits.
    #[test]
    fn csv_numbers_round_the_exact_value_once() {
        let v: f64 = "9.052028185000001".parse().unwrap();
        let below = f64::from_bits(v.to_bits() - 1);
        assert_eq!(below, 9.052028185);
        assert_eq!(csv_number(v), "9.05202819");
        assert_eq!(csv_number(below), "9.05202818");
        assert_eq!(csv_number(0.1 + 0.2), "0.3");
        assert_eq!(csv_number(1.5e-7), "1.5e-7");
        assert_eq!(csv_number(2.5e15), "2.5e15");
        assert_eq!(csv_number(-0.0), "0");
        assert_eq!(csv_number(f64::NAN), "NaN");
    }

    /// Every committed CSV is its JSON's values written by the same function: the run writes
    /// it from the aggregated `f64`s, `read_csv` from the JSON's numbers read back exactly.
    #[test]
    fn committed_csvs_are_their_jsons_formatted() {
        let results = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results");
        let mut checked = 0;
        for dir in std::fs::read_dir(&results).unwrap().flatten() {
            let Ok(files) = std::fs::read_dir(dir.path()) else { continue };
            for f in files.flatten().map(|f| f.path()) {
                let csv = f.with_extension("csv");
                if f.extension().is_none_or(|e| e != "json") || !csv.is_file() {
                    continue;
                }
                let committed = std::fs::read_to_string(&csv).unwrap();
                assert!(crate::read_csv(&f).unwrap() == committed, "{} differs", csv.display());
                checked += 1;
            }
        }
        assert!(checked >= 30, "{checked} results checked");
    }
}
