//! Schema errors of a config file, all at once.
//!
//! serde stops at the first error. To report every schema error of a file, the file is
//! deserialized repeatedly: each error is located in the document (toml_edit, by key path),
//! recorded at its place in the ORIGINAL text, and repaired in a working copy (an unknown
//! field is removed; an unknown variant, a value of the wrong type or a missing required field
//! is replaced by a placeholder), until the working copy deserializes or a step limit is hit.
//!
//! Every repaired path is *tainted*: a later error at or below a tainted path is a consequence
//! of the repair (a "missing field" after removing a required key, an error inside a
//! placeholder) and is repaired silently, never reported. Spans of the repaired copy map back
//! to the original through key paths ([`Remap`]), never through raw offsets.

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;

use serde::de::DeserializeOwned;
use toml_edit::{Array, DocumentMut, ImDocument, InlineTable, Item, Table, TableLike, Value};

/// At most this many repairs per file (each one re-deserializes the working copy).
const MAX_STEPS: usize = 100;

/// One segment of a key path: a table key or an array index.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

/// A path from the document root: `series[1].process.beta`.
pub(crate) type KeyPath = Vec<Seg>;

/// `series[1].process.beta` (empty for the root).
pub(crate) fn display_path(p: &[Seg]) -> String {
    let mut s = String::new();
    for seg in p {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                let bare = !k.is_empty()
                    && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if bare {
                    s.push_str(k);
                } else {
                    s.push_str(&format!("{k:?}"));
                }
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// The backquoted names in a serde message after its first one: the allowed names of
/// The fields of a `[[series]]` that a `[point]` table (or the `point` of `[quick]` or
/// `[reduced]`) does not take.
const SERIES_ONLY: [&str; 17] = [
    "observe_every",
    "top_k",
    "above",
    "tie_break",
    "stop",
    "weights",
    "start",
    "recovery_target",
    "statistic",
    "also",
    "theory",
    "round",
    "setting",
    "delay_mode",
    "potentials",
    "churn",
    "dispatchers",
];

/// For a series field written in a point table: where it belongs (else empty).
fn misplaced(path: &[Seg], name: &str) -> String {
    let in_point = match path {
        [Seg::Key(t), Seg::Key(_)] => t == "point",
        [Seg::Key(s), Seg::Key(t), Seg::Key(_)] => (s == "quick" || s == "reduced") && t == "point",
        _ => false,
    };
    if in_point && SERIES_ONLY.contains(&name) {
        format!("; `{name}` is a field of each [[series]] (write it in the series that needs it)")
    } else {
        String::new()
    }
}

/// "unknown field `x`, expected one of `a`, `b`" (empty for "there are no fields").
fn expected_names(msg: &str) -> Vec<String> {
    let parts: Vec<&str> = msg.split('`').collect();
    parts.iter().skip(3).step_by(2).map(|s| (*s).to_string()).collect()
}

/// The first backquoted name of a serde message.
fn first_name(msg: &str) -> Option<String> {
    msg.split('`').nth(1).map(str::to_string)
}

/// What kind of place a node span is: a key or a value / table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Key,
    Value,
}

/// Every node of a parsed document with its span: (path, part, span).
fn nodes(root: &Item) -> Vec<(KeyPath, Part, Range<usize>)> {
    fn table_like(
        tl: &dyn TableLike,
        path: &mut KeyPath,
        out: &mut Vec<(KeyPath, Part, Range<usize>)>,
    ) {
        for (k, item) in tl.iter() {
            path.push(Seg::Key(k.to_string()));
            if let Some(span) = tl.get_key_value(k).and_then(|(key, _)| key.span()) {
                out.push((path.clone(), Part::Key, span));
            }
            walk_item(item, path, out);
            path.pop();
        }
    }
    fn walk_value(v: &Value, path: &mut KeyPath, out: &mut Vec<(KeyPath, Part, Range<usize>)>) {
        if let Some(span) = v.span() {
            out.push((path.clone(), Part::Value, span));
        }
        match v {
            Value::InlineTable(t) => table_like(t, path, out),
            Value::Array(a) => {
                for (i, el) in a.iter().enumerate() {
                    path.push(Seg::Index(i));
                    walk_value(el, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    fn walk_item(item: &Item, path: &mut KeyPath, out: &mut Vec<(KeyPath, Part, Range<usize>)>) {
        match item {
            Item::Value(v) => walk_value(v, path, out),
            Item::Table(t) => {
                if let Some(span) = t.span() {
                    out.push((path.clone(), Part::Value, span));
                }
                table_like(t, path, out);
            }
            Item::ArrayOfTables(a) => {
                if let Some(span) = a.span() {
                    out.push((path.clone(), Part::Value, span));
                }
                for (i, t) in a.iter().enumerate() {
                    path.push(Seg::Index(i));
                    if let Some(span) = t.span() {
                        out.push((path.clone(), Part::Value, span));
                    }
                    table_like(t, path, out);
                    path.pop();
                }
            }
            Item::None => {}
        }
    }
    let mut out = Vec::new();
    if let Item::Table(t) = root {
        table_like(t, &mut Vec::new(), &mut out);
    }
    out
}

/// The node an error span points at: the deepest node with exactly this span, else the
/// smallest node containing its start, else the root.
fn locate(root: &Item, span: Option<Range<usize>>) -> (KeyPath, Part) {
    let Some(span) = span else { return (Vec::new(), Part::Value) };
    let all = nodes(root);
    if let Some((p, part, _)) = all
        .iter()
        .filter(|(_, _, s)| *s == span)
        .max_by_key(|(p, part, _)| (p.len(), *part == Part::Key))
    {
        return (p.clone(), *part);
    }
    all.iter()
        .filter(|(_, _, s)| s.start <= span.start && (span.start < s.end || s.is_empty()))
        .min_by_key(|(p, _, s)| (s.len(), usize::MAX - p.len()))
        .map_or((Vec::new(), Part::Value), |(p, part, _)| (p.clone(), *part))
}

/// The item at `path`, if any.
fn get<'a>(root: &'a Item, path: &[Seg]) -> Option<&'a Item> {
    let mut cur = root;
    for seg in path {
        cur = match seg {
            Seg::Key(k) => cur.as_table_like()?.get(k)?,
            Seg::Index(i) => cur.get(*i)?,
        };
    }
    Some(cur)
}

fn get_mut<'a>(root: &'a mut Item, path: &[Seg]) -> Option<&'a mut Item> {
    let mut cur = root;
    for seg in path {
        cur = match seg {
            Seg::Key(k) => cur.as_table_like_mut()?.get_mut(k)?,
            Seg::Index(i) => cur.get_mut(*i)?,
        };
    }
    Some(cur)
}

/// The span of the key (or value) at `path`, else of its nearest ancestor that has one.
fn span_at(root: &Item, path: &[Seg], part: Part) -> Option<Range<usize>> {
    for len in (1..=path.len()).rev() {
        let p = &path[..len];
        if part == Part::Key && len == path.len() {
            if let (Some(parent), Some(Seg::Key(k))) = (get(root, &p[..len - 1]), p.last()) {
                if let Some(s) = parent
                    .as_table_like()
                    .and_then(|t| t.get_key_value(k))
                    .and_then(|(k, _)| k.span())
                {
                    return Some(s);
                }
            }
        }
        if let Some(s) = get(root, p).and_then(Item::span) {
            return Some(s);
        }
        // A table with a header has a span; a dotted or implicit one is found by its key.
        if let (Some(parent), Some(Seg::Key(k))) = (get(root, &p[..len - 1]), p.last()) {
            if let Some(s) =
                parent.as_table_like().and_then(|t| t.get_key_value(k)).and_then(|(k, _)| k.span())
            {
                return Some(s);
            }
        }
    }
    None
}

/// Maps spans of a repaired copy back to the original text through key paths.
pub(crate) struct Remap {
    original: ImDocument<String>,
    repaired: ImDocument<String>,
}

impl Remap {
    /// The original span of the node a repaired-copy span points at.
    pub(crate) fn map(&self, span: Range<usize>) -> Option<Range<usize>> {
        let (path, part) = locate(self.repaired.as_item(), Some(span));
        if path.is_empty() {
            return None;
        }
        span_at(self.original.as_item(), &path, part)
    }

    /// The original span of the key (`key = true`) or value at `path`.
    pub(crate) fn original_span(&self, path: &[Seg], key: bool) -> Option<Range<usize>> {
        span_at(self.original.as_item(), path, if key { Part::Key } else { Part::Value })
    }
}

/// The spans of a series' process parameters (`beta`, `tau.base`, …) and weights (`weights`,
/// `weights.mean`) in `doc`, by the names the checks use.
fn param_spans_in(doc: &Item, si: usize) -> HashMap<String, Range<usize>> {
    let mut out = HashMap::new();
    let series = [Seg::Key("series".into()), Seg::Index(si)];
    for (table, prefix) in [
        ("process", ""),
        ("weights", "weights."),
        ("sampling", "sampling."),
        ("start", "start."),
        ("capacities", "capacities."),
        ("churn", "churn."),
        ("dispatchers", "dispatchers."),
    ] {
        let mut path = series.to_vec();
        path.push(Seg::Key(table.into()));
        let Some(item) = get(doc, &path) else { continue };
        if let Some(s) = item.span() {
            if !prefix.is_empty() {
                out.insert(table.to_string(), s);
            }
        }
        let Some(t) = item.as_table_like() else { continue };
        for (k, v) in t.iter() {
            if let Some(s) = v.span() {
                out.insert(format!("{prefix}{k}"), s);
            }
            if let Some(inner) = v.as_table_like() {
                for (k2, v2) in inner.iter() {
                    if let Some(s) = v2.span() {
                        out.insert(format!("{prefix}{k}.{k2}"), s);
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
thread_local! {
    /// Parses of whole configs for span lookups on this thread ([`SpanCache`]), for the test
    /// that validation does not parse once per series.
    pub(crate) static SPAN_PARSES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The original text of a config parsed once, on first use, for the spans of its problems:
/// validation looks up spans once per series (and per problem), and parsing the whole file
/// for each lookup made it quadratic in the number of series.
#[derive(Default)]
pub(crate) struct SpanCache(std::cell::OnceCell<Option<ImDocument<String>>>);

impl SpanCache {
    /// The parsed `source` (parsed on the first call; `None` if it is not TOML).
    fn doc(&self, source: &str) -> Option<&Item> {
        let parse = || {
            #[cfg(test)]
            SPAN_PARSES.with(|c| c.set(c.get() + 1));
            ImDocument::parse(source.to_string()).ok()
        };
        self.0.get_or_init(parse).as_ref().map(|d| d.as_item())
    }

    /// [`param_spans_in`] of the text a value was deserialized from: the repaired copy when
    /// there is one, else `source`.
    pub(crate) fn param_spans(
        &self,
        remap: Option<&Remap>,
        source: &str,
        si: usize,
    ) -> HashMap<String, Range<usize>> {
        match remap {
            Some(r) => param_spans_in(r.repaired.as_item(), si),
            None => self.doc(source).map(|d| param_spans_in(d, si)).unwrap_or_default(),
        }
    }

    /// The span of the value (or key) at `path` in `source`, if it parses.
    pub(crate) fn span_in(&self, source: &str, path: &[Seg], key: bool) -> Option<Range<usize>> {
        span_at(self.doc(source)?, path, if key { Part::Key } else { Part::Value })
    }
}

/// What the repairs of a file touched, for deciding which value checks may still run.
#[derive(Debug, Default)]
pub(crate) struct Taint {
    /// A repair may have changed the meaning of shared settings: skip the value checks.
    pub global: bool,
    /// Series whose entry was repaired: skip their value checks.
    pub series: BTreeSet<usize>,
}

/// Top-level fields that no value check reads: a repair there cannot cause a later error.
const NEUTRAL: &[&str] =
    &["title", "notes", "seed", "seed_item", "y_label", "y_log", "reference", "report"];

impl Taint {
    /// Records a repair at `path` (`removed_unknown`: an unknown field was removed).
    fn add(&mut self, path: &[Seg], removed_unknown: bool) {
        let key = |i: usize| match path.get(i) {
            Some(Seg::Key(k)) => k.as_str(),
            _ => "",
        };
        // An unknown field of [quick] or [reduced] leaves that setting at its full-scale
        // value, which is checked anyway.
        let neutral = NEUTRAL.contains(&key(0))
            || (key(0) == "x" && ["label", "log"].contains(&key(1)) && path.len() == 2)
            || (removed_unknown
                && (path.len() == 1
                    || ["quick", "reduced"].contains(&key(0))
                    || (path.len() == 2 && ["x", "sampling"].contains(&key(0)))));
        match path {
            _ if neutral => {}
            [Seg::Key(k), Seg::Index(i), _, ..] if k == "series" => {
                self.series.insert(*i);
            }
            _ => self.global = true,
        }
    }
}

/// A deserialized config with the schema errors found on the way.
pub(crate) struct Parsed<T> {
    /// The value deserialized from the (possibly repaired) text.
    pub value: T,
    /// Located messages (original spans).
    pub errors: Vec<(Option<Range<usize>>, String)>,
    /// `Some` when the value comes from a repaired copy: maps its spans to the original.
    pub remap: Option<Remap>,
    /// What the repairs touched.
    pub taint: Taint,
}

/// What [`deserialize`] found besides the value.
pub(crate) struct Schema {
    /// Located messages (original spans).
    pub errors: Vec<(Option<Range<usize>>, String)>,
    /// `Some` when the value comes from a repaired copy: maps its spans to the original.
    pub remap: Option<Remap>,
    /// What the repairs touched.
    pub taint: Taint,
}

impl<T> Parsed<T> {
    /// The value and the rest.
    pub(crate) fn split(self) -> (T, Schema) {
        (self.value, Schema { errors: self.errors, remap: self.remap, taint: self.taint })
    }
}

/// Why the loop stopped without a value: the messages to report.
pub(crate) type Failed = Vec<(Option<Range<usize>>, String)>;

/// Placeholder values, tried in order for a required field (after removal, for an existing
/// one): whichever the schema accepts.
fn placeholder(attempt: usize) -> Option<Value> {
    Some(match attempt {
        0 => Value::InlineTable(InlineTable::new()),
        1 => Value::from("?"),
        2 => Value::from(1i64),
        3 => Value::from(true),
        4 => Value::Array(Array::new()),
        _ => return None,
    })
}

fn remove(doc: &mut DocumentMut, path: &[Seg]) -> bool {
    let Some((Seg::Key(k), parent)) = path.split_last() else { return false };
    get_mut(doc.as_item_mut(), parent)
        .and_then(Item::as_table_like_mut)
        .is_some_and(|t| t.remove(k).is_some())
}

fn set(doc: &mut DocumentMut, path: &[Seg], v: Value) -> bool {
    let Some((last, parent)) = path.split_last() else { return false };
    let Some(parent) = get_mut(doc.as_item_mut(), parent) else { return false };
    match last {
        Seg::Key(k) => match parent.as_table_like_mut() {
            Some(t) => {
                t.insert(k, Item::Value(v));
                true
            }
            None => false,
        },
        Seg::Index(i) => match parent {
            Item::Value(Value::Array(a)) if *i < a.len() => {
                a.replace(*i, v);
                true
            }
            Item::ArrayOfTables(a) => match (a.get_mut(*i), v) {
                (Some(t), Value::InlineTable(it)) => {
                    *t = it.into_table();
                    true
                }
                (Some(t), _) => {
                    *t = Table::new();
                    true
                }
                _ => false,
            },
            _ => false,
        },
    }
}

/// One schema error found by [`deserialize`].
struct Found {
    span: Option<Range<usize>>,
    msg: String,
    /// "missing field": (table, field).
    missing: Option<(KeyPath, String)>,
    /// "unknown field" with a suggestion: (table, suggested field).
    suggested: Option<(KeyPath, String)>,
}

/// The fields of the root struct of `T`, from the message of an unknown probe field.
fn root_fields<T: DeserializeOwned>() -> Vec<String> {
    match toml::from_str::<T>("__ballast_probe__ = 0\n") {
        Err(e) if e.message().starts_with("unknown field `__ballast_probe__`") => {
            expected_names(e.message())
        }
        _ => Vec::new(),
    }
}

/// What a config is read from: the text of a file, or a table built in memory (`ballast
/// simulate`'s one-point config), which is deserialized as it is, never written out and
/// read back.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Input<'a> {
    /// TOML text: values keep their places, and every schema error is found (by repairs).
    Text(&'a str),
    /// A table: no places; a schema error is one message.
    Table(&'a toml::Table),
}

impl<'a> Input<'a> {
    /// The config as `T`, with the schema errors found on the way.
    pub(crate) fn deserialize<T: DeserializeOwned>(self) -> Result<Parsed<T>, Failed> {
        match self {
            Self::Text(source) => deserialize(source),
            Self::Table(table) => toml::Value::Table(table.clone())
                .try_into::<T>()
                .map(|value| Parsed {
                    value,
                    errors: Vec::new(),
                    remap: None,
                    taint: Taint::default(),
                })
                .map_err(|e| vec![(None, one_line(e.message()))]),
        }
    }

    /// The text that spans point into (empty for a table: nothing has a place).
    pub(crate) fn located_text(self) -> &'a str {
        match self {
            Self::Text(source) => source,
            Self::Table(_) => "",
        }
    }
}

/// Deserializes `source` as `T`, collecting every schema error (see the module docs).
pub(crate) fn deserialize<T: DeserializeOwned>(source: &str) -> Result<Parsed<T>, Failed> {
    let first = match toml::from_str::<T>(source) {
        Ok(value) => {
            return Ok(Parsed { value, errors: Vec::new(), remap: None, taint: Taint::default() })
        }
        Err(e) => e,
    };
    let original = match ImDocument::parse(source.to_string()) {
        Ok(d) => d,
        // Malformed TOML: one error, where the parser stopped.
        Err(_) => return Err(vec![(first.span(), one_line(first.message()))]),
    };
    let mut doc: DocumentMut = original.clone().into_mut();
    let mut found: Vec<Found> = Vec::new();
    let mut taint = Taint::default();
    let mut tainted: Vec<KeyPath> = Vec::new();
    // Placeholders tried per path, variants tried per path, paths removed once already.
    let mut attempts: HashMap<KeyPath, usize> = HashMap::new();
    let mut variant_attempts: HashMap<KeyPath, usize> = HashMap::new();
    let mut removed: BTreeSet<KeyPath> = BTreeSet::new();
    let mut root_names: Option<Vec<String>> = None;
    let mut last_edit: Option<KeyPath> = None;
    let mut current = original.clone();
    let mut err = first;
    let under = |p: &KeyPath, tainted: &[KeyPath]| tainted.iter().any(|t| p.starts_with(t));
    // Records an error at `at` (its key or value in the original), prefixed with `ctx`.
    let record = |found: &mut Vec<Found>, at: &KeyPath, part: Part, ctx: &[Seg], text: String| {
        let span = if at.is_empty() { None } else { span_at(original.as_item(), at, part) };
        let where_ = display_path(ctx);
        let msg = if where_.is_empty() { text } else { format!("{where_}: {text}") };
        found.push(Found { span, msg, missing: None, suggested: None });
    };
    let mut finished = None;
    for _ in 0..MAX_STEPS {
        let msg = one_line(err.message());
        let (mut path, part) = locate(current.as_item(), err.span());
        let edited;
        if msg.starts_with("unknown field `") {
            let name = first_name(&msg).unwrap_or_default();
            // The span is the key, or (inside internally tagged enums) the whole table.
            let target = if part == Part::Key && path.last() == Some(&Seg::Key(name.clone())) {
                Some(path.clone())
            } else {
                let mut p = path.clone();
                p.push(Seg::Key(name.clone()));
                get(current.as_item(), &p).map(|_| p)
            };
            match target {
                Some(t) => {
                    if !under(&t, &tainted) {
                        let names = expected_names(&msg);
                        let hint = ballast_core::registry::did_you_mean(
                            &name,
                            names.iter().map(String::as_str),
                        );
                        let hint = if hint.is_empty() { misplaced(&t, &name) } else { hint };
                        let table = t[..t.len() - 1].to_vec();
                        record(&mut found, &t, Part::Key, &table, format!("{msg}{hint}"));
                        if !hint.is_empty() {
                            let s = first_name(&hint).unwrap_or_default();
                            if let Some(f) = found.last_mut() {
                                f.suggested = Some((table, s));
                            }
                        }
                    }
                    if !remove(&mut doc, &t) {
                        break;
                    }
                    taint.add(&t, true);
                    tainted.push(t.clone());
                    edited = t;
                }
                None => {
                    if !under(&path, &tainted) {
                        record(&mut found, &path, Part::Value, &path, msg.clone());
                    }
                    if !replace(&mut doc, &path, &mut attempts, &mut removed) {
                        break;
                    }
                    taint.add(&path, false);
                    tainted.push(path.clone());
                    edited = path;
                }
            }
        } else if msg.starts_with("unknown variant `") {
            let name = first_name(&msg).unwrap_or_default();
            let variants = expected_names(&msg);
            if !under(&path, &tainted) {
                let hint = ballast_core::registry::did_you_mean(
                    &name,
                    variants.iter().map(String::as_str),
                );
                record(&mut found, &path, Part::Value, &path, format!("{msg}{hint}"));
            }
            // An internally tagged enum (`kind = …`): its other fields belong to the unknown
            // variant, so the whole table is tainted.
            let scope = match path.last() {
                Some(Seg::Key(k)) if k == "kind" => path[..path.len() - 1].to_vec(),
                _ => path.clone(),
            };
            let n = variant_attempts.entry(path.clone()).or_insert(0);
            let Some(v) = variants.get(*n) else { break };
            *n += 1;
            if !set(&mut doc, &path, Value::from(v.as_str())) {
                break;
            }
            taint.add(&scope, false);
            tainted.push(scope);
            edited = path;
        } else if msg.starts_with("missing field `") {
            let name = first_name(&msg).unwrap_or_default();
            // The span is the table that lacks the field (for the root: the whole text, which
            // may also be the span of its only table).
            if part == Part::Key {
                path.pop();
            }
            if !path.is_empty() && err.span().is_some() && err.span() == current.as_table().span() {
                let names = root_names.get_or_insert_with(root_fields::<T>);
                if names.contains(&name) {
                    path.clear();
                }
            }
            let table_path = path;
            let mut t = table_path.clone();
            t.push(Seg::Key(name.clone()));
            if !under(&t, &tainted) {
                record(&mut found, &table_path, Part::Value, &table_path, msg.clone());
                if let Some(f) = found.last_mut() {
                    f.missing = Some((table_path.clone(), name.clone()));
                }
            }
            let n = attempts.entry(t.clone()).or_insert(0);
            let Some(v) = placeholder(*n) else { break };
            *n += 1;
            if !set(&mut doc, &t, v) {
                break;
            }
            taint.add(&t, false);
            tainted.push(t.clone());
            edited = t;
        } else {
            // A value of the wrong type or out of the type's range. Inside a buffered table
            // (an internally tagged enum) the span is the whole table: when that table holds
            // our previous edit, the error is about the edit.
            if let Some(l) = &last_edit {
                if l.len() > path.len() && l.starts_with(&path) {
                    path = l.clone();
                }
            }
            if path.is_empty() {
                if found.is_empty() {
                    found.push(Found { span: err.span(), msg, missing: None, suggested: None });
                }
                break;
            }
            if !under(&path, &tainted) {
                record(&mut found, &path, part, &path, msg.clone());
            }
            if !replace(&mut doc, &path, &mut attempts, &mut removed) {
                break;
            }
            taint.add(&path, false);
            tainted.push(path.clone());
            edited = path;
        }
        last_edit = Some(edited);
        let text = doc.to_string();
        current = match ImDocument::parse(text.clone()) {
            Ok(d) => d,
            Err(_) => break,
        };
        match toml::from_str::<T>(&text) {
            Ok(value) => {
                finished = Some(value);
                break;
            }
            Err(e) => err = e,
        }
    }
    // A "missing field `seed`" next to "unknown field `seeed`; did you mean `seed`?" is the
    // same mistake: keep the one with the suggestion.
    let suggested: Vec<(KeyPath, String)> =
        found.iter().filter_map(|f| f.suggested.clone()).collect();
    found.retain(|f| f.missing.as_ref().is_none_or(|m| !suggested.contains(m)));
    let mut errors: Failed = Vec::new();
    for f in found {
        if !errors.iter().any(|(_, m)| *m == f.msg) {
            errors.push((f.span, f.msg));
        }
    }
    if errors.is_empty() {
        errors.push((None, "invalid config".into()));
    }
    match finished {
        Some(value) => {
            let remap = Remap { original, repaired: current };
            Ok(Parsed { value, errors, remap: Some(remap), taint })
        }
        None => {
            errors.push((
                None,
                "(checking stopped at these problems: fix them first, further ones may follow)"
                    .into(),
            ));
            Err(errors)
        }
    }
}

/// A value that the schema refuses: first removed (it may be optional), then replaced by
/// the placeholders in turn. `false` when nothing is left to try.
fn replace(
    doc: &mut DocumentMut,
    path: &[Seg],
    attempts: &mut HashMap<KeyPath, usize>,
    removed: &mut BTreeSet<KeyPath>,
) -> bool {
    // An index cannot be removed without renumbering its siblings.
    if matches!(path.last(), Some(Seg::Key(_)))
        && removed.insert(path.to_vec())
        && remove(doc, path)
    {
        return true;
    }
    let n = attempts.entry(path.to_vec()).or_insert(0);
    let Some(v) = placeholder(*n) else { return false };
    *n += 1;
    set(doc, path, v)
}

/// A serde/toml message on one line, without Rust type names.
fn one_line(msg: &str) -> String {
    let mut m = msg.trim_end().lines().map(str::trim_end).collect::<Vec<_>>().join("; ");
    for (from, to) in [
        ("expected internally tagged enum ", "expected a table with `kind`, such as "),
        ("expected struct ", "expected a table "),
        ("expected a sequence", "expected an array"),
        ("expected a map", "expected a table"),
    ] {
        if let Some(i) = m.find(from) {
            // Drop the type name that follows a replaced "struct"/"enum".
            let rest = &m[i + from.len()..];
            let name_len = if from.ends_with(' ') {
                rest.find(|c: char| !c.is_alphanumeric() && c != '_').unwrap_or(rest.len())
            } else {
                0
            };
            let tail = &rest[name_len..];
            let replacement = if from.contains("tagged") {
                "expected a table with `kind` naming the variant".to_string()
            } else {
                to.trim_end().to_string()
            };
            m = format!("{}{replacement}{tail}", &m[..i]);
        }
    }
    m
}
