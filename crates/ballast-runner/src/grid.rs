//! The grid of an item, shared by every item kind: the values of each grid variable (a list or
//! a range, with the `[quick]`/`[reduced]` table's overrides), the size limit, and the
//! combinations in the one order every plan numbers its points by (the other variables sorted
//! by name, the x variable innermost).

use std::collections::BTreeMap;

use crate::config::Located;

use crate::config::schema::Seg;
use crate::config::Problems;

/// At most this many points (series × grid values) per scale: validation expands them all.
pub(crate) const MAX_POINTS: usize = 100_000;

const GRID_HELP: &str =
    "expected a non-empty list of numbers such as [1, 2, 5] or a range { from = 1, to = 50, step = 1 }";

/// A grid as written: variable → values (list or range), with spans.
pub(crate) type RawGrid = BTreeMap<String, Located<toml::Value>>;

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

/// The first value of `vals` equal to an earlier one (`0.0` and `-0.0` are equal: one x):
/// the indices of the earlier value and of its repeat.
fn first_repeat(vals: &[f64]) -> Option<(usize, usize)> {
    let mut seen = std::collections::HashMap::with_capacity(vals.len());
    for (i, v) in vals.iter().enumerate() {
        // `+ 0.0` turns -0.0 into 0.0; the values are finite (checked by `values_of`).
        if let Some(&first) = seen.get(&(v + 0.0).to_bits()) {
            return Some((first, i));
        }
        seen.insert((v + 0.0).to_bits(), i);
    }
    None
}

/// Why a repeated value is refused: two points at one x (or one combination twice).
fn repeat_message(vals: &[f64], first: usize, again: usize, list: bool) -> String {
    let shown = |v: f64| {
        if v == 0.0 && v.is_sign_negative() {
            "-0".to_string()
        } else {
            crate::numbers::num(v)
        }
    };
    let (a, b) = (shown(vals[first]), shown(vals[again]));
    let what = if list {
        format!("entry {} ({b}) repeats entry {} ({a})", again + 1, first + 1)
    } else {
        format!("the range's values {} and {} are both {a} in floating point", first + 1, again + 1)
    };
    format!(
        "{what}: the grid would have two points at one value; expected distinct values (0 and \
         -0 are one value)"
    )
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
                    v.span(),
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
        v: &Located<toml::Value>,
        prefix: &str,
        problems: &mut Problems<'_>,
    ) {
        match values_of(v.get_ref()) {
            Ok(vals) => {
                if let Some((first, again)) = first_repeat(&vals) {
                    self.ok = false;
                    let msg = format!(
                        "{prefix}grid variable `{name}`: {}",
                        repeat_message(&vals, first, again, v.get_ref().is_array())
                    );
                    if v.get_ref().is_array() {
                        let mut path: Vec<Seg> = Vec::new();
                        if let Some(table) = prefix.strip_suffix('.') {
                            path.push(Seg::Key(table.to_string()));
                        }
                        path.extend([
                            Seg::Key("grid".into()),
                            Seg::Key(name.to_string()),
                            Seg::Index(again),
                        ]);
                        problems.at_path(&path, false, msg);
                    } else {
                        problems.at(v.span(), msg);
                    }
                    return;
                }
                self.values.insert(name.to_string(), vals);
            }
            Err(e) => {
                self.ok = false;
                problems.at(v.span(), format!("{prefix}grid variable `{name}`: {e}"));
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
                span.and_then(|v| v.span()),
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
    fn repeated_values_are_found() {
        assert_eq!(first_repeat(&[1.0, 2.0, 3.0]), None);
        assert_eq!(first_repeat(&[1.0, 2.0, 1.0, 2.0]), Some((0, 2)));
        assert_eq!(first_repeat(&[0.0, -0.0]), Some((0, 1)));
        // A range whose steps are below the spacing of doubles repeats a value.
        let v = values_of(
            &"v = { from = 1e16, to = 1.0000000000000004e16 }".parse::<toml::Table>().unwrap()["v"],
        )
        .unwrap();
        let (a, b) = first_repeat(&v).unwrap();
        assert!(repeat_message(&v, a, b, false).contains("are both 1000000000000000"));
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
