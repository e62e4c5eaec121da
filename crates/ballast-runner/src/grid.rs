//! The grid of an item, shared by every item kind: the values of each grid variable (a list or
//! a range, with the `[quick]`/`[reduced]` table's overrides), the size limit, and the
//! combinations in the one order every plan numbers its points by (the other variables sorted
//! by name, the x variable innermost).

use std::collections::BTreeMap;

use toml::Spanned;

use crate::config::Problems;

/// At most this many points (series × grid values) per scale: validation expands them all.
pub(crate) const MAX_POINTS: usize = 100_000;

const GRID_HELP: &str =
    "expected a non-empty list of numbers such as [1, 2, 5] or a range { from = 1, to = 50, step = 1 }";

/// A grid as written: variable → values (list or range), with spans.
pub(crate) type RawGrid = BTreeMap<String, Spanned<toml::Value>>;

/// The values of one grid variable: a non-empty list of numbers, or a range
/// `{ from, to, step }`.
pub(crate) fn values_of(v: &toml::Value) -> Result<Vec<f64>, String> {
    let num = |x: &toml::Value| match x {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(f) => Some(*f),
        _ => None,
    };
    match v {
        toml::Value::Array(a) if !a.is_empty() => a
            .iter()
            .map(|x| match num(x) {
                Some(v) if v.is_finite() => Ok(v),
                Some(v) => Err(format!("invalid value {v}: grid values must be finite numbers")),
                None => Err(GRID_HELP.to_string()),
            })
            .collect(),
        toml::Value::Table(t) => {
            if let Some(k) = t.keys().find(|k| !["from", "to", "step"].contains(&k.as_str())) {
                return Err(format!(
                    "unknown field `{k}`, expected `from`, `to` or `step`{}",
                    ballast_core::registry::did_you_mean(k, ["from", "to", "step"])
                ));
            }
            let get = |k: &str| t.get(k).and_then(num);
            let (Some(from), Some(to)) = (get("from"), get("to")) else {
                return Err(GRID_HELP.to_string());
            };
            let step = get("step").unwrap_or(1.0);
            let finite = from.is_finite() && to.is_finite() && step.is_finite();
            if !finite || step <= 0.0 || to < from || (to - from) / step > 1e6 {
                return Err(format!(
                    "invalid range from {from} to {to} step {step}: expected finite numbers, \
                     from <= to, step > 0 and at most 1000001 values"
                ));
            }
            let count = ((to - from) / step + 1e-9).floor() as usize + 1;
            Ok((0..count).map(|i| from + step * i as f64).collect())
        }
        _ => Err(GRID_HELP.to_string()),
    }
}

/// The grid of one scale: every variable's values, the scale's table overriding the base.
pub(crate) struct Grid {
    pub values: BTreeMap<String, Vec<f64>>,
    /// False when a variable's values could not be read (the points cannot be checked then:
    /// they would only report consequences of the grid error).
    pub ok: bool,
}

impl Grid {
    /// Reads `base` with the overrides of the scale table named `table` (`quick`, `reduced`),
    /// reporting every bad list, range or unknown override.
    pub(crate) fn read(
        base: &RawGrid,
        overrides: Option<&RawGrid>,
        table: &str,
        problems: &mut Problems<'_>,
    ) -> Self {
        let mut grid = Self { values: BTreeMap::new(), ok: true };
        for (name, v) in base {
            grid.insert(name, v, "", problems);
        }
        for (name, v) in overrides.into_iter().flatten() {
            if !base.contains_key(name) {
                let known: Vec<&str> = base.keys().map(String::as_str).collect();
                problems.at(
                    Some(v.span()),
                    format!(
                        "{table}.grid: unknown grid variable `{name}`, expected one of: {}{}",
                        known.join(", "),
                        ballast_core::registry::did_you_mean(name, known.iter().copied())
                    ),
                );
                continue;
            }
            grid.insert(name, v, &format!("{table}."), problems);
        }
        grid
    }

    fn insert(
        &mut self,
        name: &str,
        v: &Spanned<toml::Value>,
        prefix: &str,
        problems: &mut Problems<'_>,
    ) {
        match values_of(v.get_ref()) {
            Ok(vals) => {
                self.values.insert(name.to_string(), vals);
            }
            Err(e) => {
                self.ok = false;
                problems.at(Some(v.span()), format!("{prefix}grid variable `{name}`: {e}"));
            }
        }
    }

    /// Refuses (and marks the grid unusable) a grid whose `series` × combinations exceed
    /// [`MAX_POINTS`]; the message points at the longest variable of `base`.
    pub(crate) fn check_size(
        &mut self,
        base: &RawGrid,
        series: usize,
        table: &str,
        problems: &mut Problems<'_>,
    ) {
        let combos = self.values.values().fold(1usize, |acc, v| acc.saturating_mul(v.len()));
        let total = combos.saturating_mul(series.max(1));
        if total > MAX_POINTS {
            let span = base.values().max_by_key(|v| values_of(v.get_ref()).map_or(0, |g| g.len()));
            problems.at(
                span.map(|v| v.span()),
                format!(
                    "{table} grid: {total} points (series × grid values); at most {MAX_POINTS} \
                     are allowed"
                ),
            );
            self.ok = false;
        }
    }

    /// Every combination of the values, as (variable, value) lists: the variables other than
    /// `x` sorted by name, then `x` (when it is a grid variable), the last varying fastest.
    pub(crate) fn combinations(&self, x: &str) -> Vec<Vec<(String, f64)>> {
        let mut order: Vec<&String> = self.values.keys().filter(|k| *k != x).collect();
        if let Some((k, _)) = self.values.get_key_value(x) {
            order.push(k);
        }
        let mut combos: Vec<Vec<(String, f64)>> = vec![Vec::new()];
        for name in order {
            let vals = &self.values[name];
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    vals.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push((name.clone(), *v));
                        c
                    })
                })
                .collect();
        }
        combos
    }
}

/// `n = 100, k = 4`: a grid combination in words (`the point` for an empty grid).
pub(crate) fn describe(combo: &[(String, f64)]) -> String {
    let parts: Vec<String> =
        combo.iter().map(|(k, v)| format!("{k} = {}", crate::numbers::num(*v))).collect();
    if parts.is_empty() {
        "the point".to_string()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_lists() {
        let v = |s: &str| values_of(&s.parse::<toml::Table>().unwrap()["v"]);
        assert_eq!(v("v = [1, 2.5]").unwrap(), vec![1.0, 2.5]);
        assert_eq!(v("v = { from = 1, to = 3 }").unwrap(), vec![1.0, 2.0, 3.0]);
        assert_eq!(v("v = { from = 0.05, to = 1.0, step = 0.05 }").unwrap().len(), 20);
        assert!(v("v = []").is_err());
        assert!(v("v = { from = 1, to = 3, stp = 1 }").unwrap_err().contains("`step`"));
        assert!(v("v = { from = 3, to = 1 }").is_err());
    }

    #[test]
    fn combinations_put_x_innermost() {
        let mut values = BTreeMap::new();
        values.insert("a".to_string(), vec![1.0, 2.0]);
        values.insert("k".to_string(), vec![5.0]);
        values.insert("b".to_string(), vec![7.0, 8.0]);
        let g = Grid { values, ok: true };
        let c = g.combinations("a");
        let names: Vec<&str> = c[0].iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["b", "k", "a"]);
        let xs: Vec<(f64, f64)> = c.iter().map(|c| (c[0].1, c[2].1)).collect();
        assert_eq!(xs, [(7.0, 1.0), (7.0, 2.0), (8.0, 1.0), (8.0, 2.0)]);
        // An x that is not a grid variable (time on the x axis): the others only.
        assert_eq!(g.combinations("t").len(), 4);
    }
}
