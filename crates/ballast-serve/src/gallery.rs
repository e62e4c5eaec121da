//! The results gallery: the items of a results directory and the only files the server
//! reads from disk.
//!
//! An item is a `<paper>/<item>.json` written by the runner (an object with `metadata` and
//! `rows`) with its `<item>.csv` beside it; its `.svg` figure and `.md` report are shown when
//! present. The verdict is the report's "Overall" line (or "no reference" when the report
//! says none is configured).
//!
//! [`Results::resolve`] is the one door to the disk: a relative path is joined to the
//! canonical results directory, canonicalised (links followed) and refused unless it is a
//! file inside that directory.

use std::path::{Component, Path, PathBuf};

use serde_json::{json, Value};

/// The results directory, canonicalised once.
#[derive(Clone, Debug)]
pub struct Results {
    root: PathBuf,
}

/// One item of the gallery list.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Item {
    /// `<paper>/<item>` (the path of its files without the extension).
    pub id: String,
    /// The paper folder (the id's first component).
    pub paper: String,
    /// The title in its metadata.
    pub title: String,
    /// `agrees`, `disagrees`, … (the report's Overall line), `no reference`, or `unknown`.
    pub verdict: String,
    /// Whether `<id>.svg` exists.
    pub has_svg: bool,
}

impl Results {
    /// Opens `dir` (it must be a directory).
    pub fn open(dir: &Path) -> Result<Self, String> {
        let root =
            dir.canonicalize().map_err(|e| format!("results directory {}: {e}", dir.display()))?;
        if !root.is_dir() {
            return Err(format!("results directory {}: not a directory", dir.display()));
        }
        Ok(Self { root })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file at `rel` inside the results directory, or why not: only plain relative
    /// components, and the canonical path (links followed) must be a file under the root.
    pub fn resolve(&self, rel: &str) -> Result<PathBuf, String> {
        let path = Path::new(rel);
        let plain = path.components().all(|c| matches!(c, Component::Normal(_)));
        if rel.is_empty() || !plain {
            return Err(format!("`{rel}`: not a path inside the results directory"));
        }
        let full = self
            .root
            .join(path)
            .canonicalize()
            .map_err(|_| format!("`{rel}`: no such file in the results directory"))?;
        if !full.starts_with(&self.root) || !full.is_file() {
            return Err(format!("`{rel}`: not a file inside the results directory"));
        }
        Ok(full)
    }

    /// Every item, sorted by id.
    pub fn items(&self) -> Vec<Item> {
        let mut jsons = Vec::new();
        walk(&self.root, &mut jsons, 0);
        let mut items: Vec<Item> = jsons.iter().filter_map(|p| self.item_of(p)).collect();
        items.sort_by(|a, b| a.id.cmp(&b.id));
        items
    }

    /// The list entry of `json` (an absolute path under the root), if it is an item.
    fn item_of(&self, json: &Path) -> Option<Item> {
        let id = json.strip_prefix(&self.root).ok()?.with_extension("");
        let id = id.to_str()?.replace('\\', "/");
        if !json.with_extension("csv").is_file() {
            return None;
        }
        let meta = read_json(json)?;
        let meta = meta.get("metadata")?;
        let title = meta.get("title").and_then(Value::as_str).unwrap_or(&id).to_owned();
        let verdict = std::fs::read_to_string(json.with_extension("md"))
            .map(|md| verdict_of(&md))
            .unwrap_or_else(|_| "unknown".into());
        let paper = id.split('/').next().unwrap_or_default().to_owned();
        let has_svg = json.with_extension("svg").is_file();
        Some(Item { id, paper, title, verdict, has_svg })
    }

    /// One item in full: its list entry, metadata, the CSV (header and rows as text, exactly
    /// as written) and the report.
    pub fn item(&self, id: &str) -> Result<Value, String> {
        let json = self.resolve(&format!("{id}.json"))?;
        let entry = self.item_of(&json).ok_or_else(|| format!("`{id}`: not a result item"))?;
        let meta = read_json(&json).and_then(|v| v.get("metadata").cloned()).unwrap_or_default();
        let csv_path = self.resolve(&format!("{id}.csv"))?;
        let (columns, rows) = read_csv(&csv_path).map_err(|e| format!("{id}.csv: {e}"))?;
        let report = self
            .resolve(&format!("{id}.md"))
            .ok()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .unwrap_or_default();
        Ok(json!({
            "item": entry, "metadata": meta, "columns": columns, "rows": rows, "report": report,
        }))
    }
}

/// `dir`'s `.json` files, recursively (hidden folders skipped, at most 6 levels).
fn walk(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let hidden = e.file_name().to_string_lossy().starts_with('.');
        let Ok(kind) = e.file_type() else { continue };
        if hidden {
            continue;
        }
        if kind.is_dir() && depth < 6 {
            walk(&path, out, depth + 1);
        } else if kind.is_file() && path.extension().is_some_and(|x| x == "json") {
            out.push(path);
        }
    }
}

fn read_json(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    (v.get("metadata").is_some() && v.get("rows").is_some()).then_some(v)
}

/// The header and the rows of a CSV file, every field as written.
fn read_csv(path: &Path) -> Result<(Vec<String>, Vec<Vec<String>>), String> {
    let mut reader = csv::Reader::from_path(path).map_err(|e| e.to_string())?;
    let columns = reader.headers().map_err(|e| e.to_string())?.iter().map(String::from).collect();
    let rows = reader
        .records()
        .map(|r| r.map(|r| r.iter().map(String::from).collect()))
        .collect::<Result<Vec<Vec<String>>, _>>()
        .map_err(|e| e.to_string())?;
    Ok((columns, rows))
}

/// The verdict of a report: the word in bold on its `Overall:` line, `no reference` when
/// none is configured, else `unknown`.
pub fn verdict_of(md: &str) -> String {
    for line in md.lines() {
        if let Some(rest) = line.trim().strip_prefix("Overall:") {
            let word = rest.split("**").nth(1).unwrap_or(rest).trim();
            return word.to_owned();
        }
        if line.trim().starts_with("No reference values configured") {
            return "no reference".into();
        }
    }
    "unknown".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        assert_eq!(verdict_of("## Verdict\n\nOverall: **agrees** with x\n"), "agrees");
        assert_eq!(verdict_of("## Verdict\n\nNo reference values configured.\n"), "no reference");
        assert_eq!(verdict_of("nothing"), "unknown");
    }
}
