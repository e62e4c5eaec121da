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
