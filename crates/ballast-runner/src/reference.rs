//! Published reference numbers (`reference/*.csv`, see `reference/README.md`) and their lookup
//! by (series, n, x). The tables are read through [`ballast_core::input::read_text`]
//! (regular files of at most 64 MiB); an error names the file, the line and field and what
//! was expected there, never the file's text.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use ballast_core::input::{read_text, MAX_INPUT_BYTES};

use crate::config::{ConfigFile, Problems};
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
    /// Balls per batch (the CSV's `b` column, when present and numeric).
    pub b: Option<u64>,
}

/// A reference CSV, indexed by (series, n, x); where rows of one (series, n, x) differ in the
/// batch size `b` (a table over b), [`ReferenceTable::get_at`] picks by b.
#[derive(Clone, Debug)]
pub struct ReferenceTable {
    /// Short label (`published`, `raw.out`).
    pub label: String,
    /// The file name relative to the reference directory.
    pub file: String,
    /// The resolved path.
    pub path: PathBuf,
    rows: HashMap<(String, u64, i64), Vec<RefPoint>>,
}

fn x_key(x: f64) -> i64 {
    (x * 1e6).round() as i64
}

/// A published table in another layout than the runner's: one value per (n, x), read from
/// the columns a config names (`columns = { n, x, value }` of a non-allocation item).
#[derive(Clone, Debug)]
pub(crate) struct ColumnTable {
    values: BTreeMap<(u64, i64), f64>,
}

impl ColumnTable {
    /// Loads `dir/file`, reading n, x and the value from the named columns (through
    /// [`read_reference`]: bounded, errors without the file's text).
    pub(crate) fn load(
        dir: &Path,
        file: &str,
        n: &str,
        x: &str,
        value: &str,
    ) -> Result<Self, Error> {
        let path = dir.join(file);
        let err = |message: String| Error::Reference { path: path.clone(), message };
        let text = read_reference(&path)?;
        let mut rdr = csv::Reader::from_reader(text.as_bytes());
        let headers = rdr.headers().map_err(|e| err(e.to_string()))?.clone();
        let col = |name: &str| {
            headers
                .iter()
                .position(|h| h == name)
                .ok_or_else(|| err(format!("missing column `{name}`")))
        };
        let (cn, cx, cv) = (col(n)?, col(x)?, col(value)?);
        let mut values = BTreeMap::new();
        for rec in rdr.records() {
            let rec = rec.map_err(|e| err(e.to_string()))?;
            let get = |c: usize, name: &str| -> Result<f64, Error> {
                let f = rec.get(c).unwrap_or("").trim();
                f.parse::<f64>().map_err(|_| err(format!("{}: not a number", place(&rec, c, name))))
            };
            values.insert((get(cn, n)? as u64, x_key(get(cx, x)?)), get(cv, value)?);
        }
        Ok(Self { values })
    }

    /// The value at (n, x), if the table has one.
    pub(crate) fn get(&self, n: u64, x: f64) -> Option<f64> {
        self.values.get(&(n, x_key(x))).copied()
    }
}

/// Sources that duplicate another row of the same point (an extra SVG vertex) and lose to it.
fn low_priority(source: &str) -> bool {
    source.contains("extra_vertex")
}

/// A problem of the table of the config's `[[reference]]` entry `index`, placed at that
/// entry's `file` key (`config:line:column`, a config error: exit 2 in the CLI); other errors
/// unchanged. The tables are loaded before anything is simulated.
pub(crate) fn at_config_key(config: &ConfigFile, index: usize, e: Error) -> Error {
    use crate::config::schema::Seg;
    let Error::Reference { path, message } = e else { return e };
    let mut p = Problems::new(&config.path, config.located_text());
    let key = [Seg::Key("reference".into()), Seg::Index(index), Seg::Key("file".into())];
    p.at_path(&key, false, format!("{WHAT} `{}`: {message}", ballast_core::input::shown(&path)));
    p.into_error()
}

/// What a reference table is called in messages.
const WHAT: &str = "reference table";

/// The text of the reference table `path` ([`read_text`]: a regular file of at most
/// [`MAX_INPUT_BYTES`]); an error names the file and the problem, never its text.
fn read_reference(path: &Path) -> Result<String, Error> {
    read_text(path, WHAT, MAX_INPUT_BYTES)
        .map_err(|e| Error::Reference { path: path.to_owned(), message: e.problem.to_string() })
}

/// The place of field `c` (column `name`) of a record, in words: `line 3, field 2 (`n`)`.
fn place(rec: &csv::StringRecord, c: usize, name: &str) -> String {
    let line = rec.position().map_or(0, csv::Position::line);
    format!("line {line}, field {} (`{name}`)", c + 1)
}

impl ReferenceTable {
    /// Loads `dir/file` (through `read_reference`: bounded, errors without the file's
    /// text). Needs the columns `series, n, x, value, runs` (and uses `source`, `statistic`
    /// when present). Where two rows share (series, n, x) (and `b`), a row whose source is an
    /// extra SVG vertex loses to the other; any other repeated row, and a value or x that is
    /// not finite (`inf`, `NaN`), is refused.
    pub fn load(dir: &Path, file: &str, label: &str) -> Result<Self, Error> {
        let path = dir.join(file);
        let err = |message: String| Error::Reference { path: path.clone(), message };
        let text = read_reference(&path)?;
        let mut rdr = csv::Reader::from_reader(text.as_bytes());
        let headers = rdr.headers().map_err(|e| err(e.to_string()))?.clone();
        let col = |name: &str| headers.iter().position(|h| h == name);
        let need = |name: &str| col(name).ok_or_else(|| err(format!("missing column `{name}`")));
        let (c_series, c_n, c_x, c_value, c_runs) =
            (need("series")?, need("n")?, need("x")?, need("value")?, need("runs")?);
        let (c_source, c_stat, c_b) = (col("source"), col("statistic"), col("b"));
        let mut rows: HashMap<(String, u64, i64), Vec<RefPoint>> = HashMap::new();
        // The line of each (series, n, x, b) first seen, for the message about a repeat.
        let mut first_line: HashMap<(String, u64, i64, Option<u64>), u64> = HashMap::new();
        for rec in rdr.records() {
            let rec = rec.map_err(|e| err(e.to_string()))?;
            let line = rec.position().map_or(0, csv::Position::line);
            let field = |c: usize| rec.get(c).unwrap_or("").trim();
            let parse = |c: usize, what: &str| -> Result<f64, Error> {
                field(c)
                    .parse::<f64>()
                    .map_err(|_| err(format!("{}: not a number", place(&rec, c, what))))
            };
            let n = parse(c_n, "n")? as u64;
            let x = parse(c_x, "x")?;
            let value = parse(c_value, "value")?;
            for (c, what, v) in [(c_x, "x", x), (c_value, "value", value)] {
                if !v.is_finite() {
                    return Err(err(format!(
                        "{}: not a finite number (a published value is finite; leave the row \
                         out)",
                        place(&rec, c, what)
                    )));
                }
            }
            let p = RefPoint {
                value,
                runs: parse(c_runs, "runs")? as u64,
                source: c_source.map(|c| field(c).to_string()).unwrap_or_default(),
                statistic: c_stat.map(|c| field(c).to_string()).unwrap_or_default(),
                b: c_b.and_then(|c| field(c).parse::<u64>().ok()),
            };
            let key = (field(c_series).to_string(), n, x_key(x));
            let first = *first_line.entry((key.0.clone(), n, key.2, p.b)).or_insert(line);
            let list = rows.entry(key).or_default();
            match list.iter().position(|old| old.b == p.b) {
                // Two rows of one point that the extra-vertex rule does not order: which one
                // is meant is unknown.
                Some(j) if low_priority(&list[j].source) == low_priority(&p.source) => {
                    return Err(err(format!(
                        "line {line}: a second row for the series, n and x{} of line {first}: \
                         each point has one published value (only a row whose source is an \
                         extra SVG vertex may repeat one); remove one of them",
                        if p.b.is_some() { " (and b)" } else { "" }
                    )));
                }
                Some(i) if !low_priority(&list[i].source) || low_priority(&p.source) => {}
                Some(i) => list[i] = p,
                None => list.push(p),
            }
        }
        Ok(Self { label: label.to_string(), file: file.to_string(), path, rows })
    }

    /// The published value of `series` at (n, x), if any (the first one when the table has
    /// several batch sizes there).
    pub fn get(&self, series: &str, n: u64, x: f64) -> Option<&RefPoint> {
        self.rows.get(&(series.to_string(), n, x_key(x))).and_then(|l| l.first())
    }

    /// The published value of `series` at (n, b, x). When we are batched (`b` given) and the
    /// published rows give a batch size, it must be ours; otherwise (a sequential run, or a
    /// table without b) the first row of (series, n, x).
    pub fn get_at(&self, series: &str, n: u64, b: Option<u64>, x: f64) -> Option<&RefPoint> {
        let list = self.rows.get(&(series.to_string(), n, x_key(x)))?;
        match b {
            Some(b) if list.iter().any(|p| p.b.is_some()) => list.iter().find(|p| p.b == Some(b)),
            _ => list.first(),
        }
    }

    /// The x values published for `series` at (n, b) (b as in [`ReferenceTable::get_at`]),
    /// sorted: the support of a published distribution.
    pub fn xs(&self, series: &str, n: u64, b: Option<u64>) -> Vec<f64> {
        let mut v: Vec<f64> = self
            .rows
            .iter()
            .filter(|((s, nn, _), _)| s == series && *nn == n)
            .filter(|((s, nn, x), _)| self.get_at(s, *nn, b, *x as f64 / 1e6).is_some())
            .map(|((_, _, x), _)| *x as f64 / 1e6)
            .collect();
        v.sort_by(f64::total_cmp);
        v
    }

    /// Whether the table has any row of `series`.
    pub fn has_series(&self, series: &str) -> bool {
        self.rows.keys().any(|(s, _, _)| s == series)
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

    #[test]
    fn committed_tables_load_and_bad_rows_are_refused() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reference");
        for e in std::fs::read_dir(&dir).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if let (true, Err(e)) = (name.ends_with(".csv"), ReferenceTable::load(&dir, &name, "r"))
            {
                let e = e.to_string();
                assert!(!e.contains("second row") && !e.contains("finite"), "{name}: {e}");
            }
        }
        let tmp = std::env::temp_dir().join(format!("ballast-ref-test-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        let head = "series,n,x,value,runs\n";
        for (body, needle) in [
            ("s,10,1,inf,5\n", "line 2, field 4 (`value`): not a finite number"),
            ("s,10,1,NaN,5\n", "line 2, field 4 (`value`): not a finite number"),
            ("s,10,x1,2,5\n", "line 2, field 3 (`x`): not a number"),
            ("s,10,1,2,5\ns,10,1,3,5\n", "line 3: a second row for the series, n and x of line 2"),
        ] {
            std::fs::write(tmp.join("t.csv"), format!("{head}{body}")).unwrap();
            let e = ReferenceTable::load(&tmp, "t.csv", "r").unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
        }
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn tables_over_b_are_looked_up_by_b() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reference");
        let t = ReferenceTable::load(&dir, "noise22_table12_4.csv", "published").unwrap();
        let s = "b-Batch (Two-Choice); m=1000n (code: 50n for b<n)";
        assert_eq!(t.get_at(s, 10_000, Some(10), 3.0).map(|p| p.value), Some(44.0));
        assert_eq!(t.get_at(s, 10_000, Some(100), 3.0).map(|p| p.value), Some(40.0));
        assert_eq!(t.xs(s, 10_000, Some(10)), vec![3.0, 4.0]);
        let d = ReferenceTable::load(&dir, "noise22_dist_g_bounded.csv", "published").unwrap();
        assert_eq!(d.xs("g-Bounded n=10000 g=0", 10_000, None), vec![2.0, 3.0]);
        assert_eq!(
            d.get_at("g-Bounded n=10000 g=0", 10_000, None, 2.0).map(|p| p.value),
            Some(46.0)
        );
    }
}
