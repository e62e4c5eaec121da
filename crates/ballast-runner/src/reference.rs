//! Published reference numbers (`reference/*.csv`, see `reference/README.md`) and their lookup
//! by (series, n, x).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::Error;

/// One published value.
#[derive(Clone, Debug, PartialEq)]
pub struct RefPoint {
    /// The published value.
    pub value: f64,
    /// Runs behind it (the CSV's `runs` column).
    pub runs: u64,
    /// Where it came from (`raw.out`, `fig_digitized`, …).
    pub source: String,
    /// The CSV's statistic name.
    pub statistic: String,
}

/// A reference CSV, indexed by (series, n, x).
#[derive(Clone, Debug)]
pub struct ReferenceTable {
    /// Short label (`published`, `raw.out`).
    pub label: String,
    /// The file name relative to the reference directory.
    pub file: String,
    /// The resolved path.
    pub path: PathBuf,
    rows: HashMap<(String, u64, i64), RefPoint>,
}

fn x_key(x: f64) -> i64 {
    (x * 1e6).round() as i64
}

/// Sources that duplicate another row of the same point (an extra SVG vertex) and lose to it.
fn low_priority(source: &str) -> bool {
    source.contains("extra_vertex")
}

impl ReferenceTable {
    /// Loads `dir/file`. Needs the columns `series, n, x, value, runs` (and uses `source`,
    /// `statistic` when present). Where two rows share (series, n, x), a row whose source is
    /// an extra SVG vertex loses to the other; otherwise the first row wins.
    pub fn load(dir: &Path, file: &str, label: &str) -> Result<Self, Error> {
        let path = dir.join(file);
        let err = |message: String| Error::Reference { path: path.clone(), message };
        let mut rdr = csv::Reader::from_path(&path).map_err(|e| err(e.to_string()))?;
        let headers = rdr.headers().map_err(|e| err(e.to_string()))?.clone();
        let col = |name: &str| headers.iter().position(|h| h == name);
        let need = |name: &str| col(name).ok_or_else(|| err(format!("missing column `{name}`")));
        let (c_series, c_n, c_x, c_value, c_runs) =
            (need("series")?, need("n")?, need("x")?, need("value")?, need("runs")?);
        let (c_source, c_stat) = (col("source"), col("statistic"));
        let mut rows: HashMap<(String, u64, i64), RefPoint> = HashMap::new();
        for (i, rec) in rdr.records().enumerate() {
            let rec = rec.map_err(|e| err(e.to_string()))?;
            let field = |c: usize| rec.get(c).unwrap_or("").trim();
            let parse = |c: usize, what: &str| -> Result<f64, Error> {
                field(c).parse::<f64>().map_err(|_| {
                    err(format!("row {}: `{what}` = {:?} is not a number", i + 2, field(c)))
                })
            };
            let n = parse(c_n, "n")? as u64;
            let x = parse(c_x, "x")?;
            let p = RefPoint {
                value: parse(c_value, "value")?,
                runs: parse(c_runs, "runs")? as u64,
                source: c_source.map(|c| field(c).to_string()).unwrap_or_default(),
                statistic: c_stat.map(|c| field(c).to_string()).unwrap_or_default(),
            };
            let key = (field(c_series).to_string(), n, x_key(x));
            match rows.get(&key) {
                Some(old) if !low_priority(&old.source) || low_priority(&p.source) => {}
                _ => {
                    rows.insert(key, p);
                }
            }
        }
        Ok(Self { label: label.to_string(), file: file.to_string(), path, rows })
    }

    /// The published value of `series` at (n, x), if any.
    pub fn get(&self, series: &str, n: u64, x: f64) -> Option<&RefPoint> {
        self.rows.get(&(series.to_string(), n, x_key(x)))
    }

    /// Number of indexed points.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_prefers_digitized_over_extra_vertex() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reference");
        let t = ReferenceTable::load(&dir, "batched22_fig8_1_paper.csv", "published").unwrap();
        let p = t.get("Two-Choice", 1000, 1.0).unwrap();
        assert_eq!((p.value, p.runs, p.source.as_str()), (8.18, 100, "fig_digitized"));
        assert_eq!(t.get("Three-Choice", 1000, 50.0).map(|p| p.runs), Some(100));
        assert!(t.get("Three-Choice", 999, 1.0).is_none());
        let t = ReferenceTable::load(&dir, "tower23_table6_5.csv", "raw.out").unwrap();
        assert_eq!(t.get("Two-Choice", 100_000, 80.0).map(|p| p.value), Some(110.05));
        assert!(ReferenceTable::load(&dir, "nope.csv", "x").is_err());
    }
}
