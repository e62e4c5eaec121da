//! `ballast list`: processes with their parameters, tie-breaking rules, settings (with the
//! delay modes), stopping rules, weights, statistics, potentials, the off-line optimum, the
//! round-based models, and the configured reproduction items
//! (`configs/<paper>/<item>.toml`), all read from the registries of the crates that own them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ballast_core::{Engine, TieBreak};

use ballast_core::level::level_settings;
use ballast_core::registry::{self, ProcessDef};

use crate::list_sections::setting_name;

/// One-line meaning of a tie-breaking rule.
fn tie_break_doc(t: TieBreak) -> &'static str {
    match t {
        TieBreak::Random => "uniform among the tied samples (default)",
        TieBreak::First => "the earliest tied sample (same law as random for i.i.d. samples)",
        TieBreak::LowestIndex => "the tied bin with the lowest index",
        TieBreak::Position => {
            "the authors' batched code: the tied bin sorted last (highest index) wins"
        }
    }
}

/// The `configs` directory: `./configs`, else the nearest ancestor's `configs`, else the
/// workspace this binary was built from (canonical).
pub fn find_configs_dir() -> Option<PathBuf> {
    configs_near_cwd().or_else(|| {
        let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
        std::fs::canonicalize(built).ok().filter(|d| d.is_dir())
    })
}

/// `./configs` or the nearest ancestor's, as a path relative to the working directory
/// (`configs`, `../configs`, …), or `None`.
fn configs_near_cwd() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    cwd.ancestors().enumerate().find_map(|(up, dir)| {
        dir.join("configs").is_dir().then(|| {
            let mut p: PathBuf = std::iter::repeat_n("..", up).collect();
            p.push("configs");
            p
        })
    })
}

/// The settings a process runs in.
fn settings_of(k: &ProcessDef) -> Vec<&'static str> {
    use ballast_core::{delay::DelayMode, Setting};
    let mut settings = vec![setting_name(&Setting::Sequential)];
    if k.settings.batched {
        settings.push(setting_name(&Setting::Batched { b: 1 }));
    }
    if k.settings.delay {
        settings.push(setting_name(&Setting::Delay { tau: 1, mode: DelayMode::Random }));
    }
    settings
}

/// The tie-breaking rules a process takes (`random` first; none when it has no ties).
fn ties_of(k: &ProcessDef) -> Vec<&'static str> {
    if k.ties.is_empty() {
        return Vec::new();
    }
    std::iter::once("random").chain(k.ties.iter().map(|t| t.name())).collect()
}

/// The ball weights a process takes.
fn weights_of(k: &ProcessDef) -> Vec<&'static str> {
    if k.unit_weights_only {
        vec!["unit"]
    } else {
        ballast_core::registry::WEIGHTS.iter().map(|w| w.name).collect()
    }
}

/// One-line meaning of an engine.
fn engine_doc(e: Engine) -> &'static str {
    match e {
        Engine::Auto => "the level engine where it is exact (and faster), else bins (default)",
        Engine::Bins => "one load per bin: every process, setting and weight",
        Engine::Levels => "bin counts per load level: unit weights, exchangeable processes",
    }
}

/// The full listing as text, one function per section.
pub fn render() -> String {
    let mut s = String::new();
    render_processes(&mut s);
    render_models(&mut s);
    render_topologies(&mut s);
    let _ = writeln!(s, "\nTie-breaking rules (--tie-break RULE):");
    for (name, t) in TieBreak::ALL {
        let _ = writeln!(s, "  {:<15} {}", name, tie_break_doc(t));
    }
    render_weights(&mut s);
    crate::sampling::render_laws(&mut s);
    crate::capacities::render_laws(&mut s);
    crate::start::render_starts(&mut s);
    crate::dynamic_bins::render(&mut s);
    crate::list_sections::render(&mut s);
    let _ = writeln!(s, "\nEngines (--engine):");
    for (name, e) in Engine::ALL {
        let _ = writeln!(s, "  {name:<15} {}", engine_doc(e));
    }
    render_items(&mut s);
    s
}

/// One parameter line of a registry entry.
fn param_line(s: &mut String, name: &str, doc: &str, ty: String, default: String) {
    let default = if default.is_empty() { default } else { format!(", {default}") };
    let _ = writeln!(s, "      {name:<15} {doc} ({ty}{default})");
}

/// The "Processes" section.
fn render_processes(s: &mut String) {
    let _ = writeln!(s, "Processes (--process KIND [--param key=value]...):");
    for k in registry::processes() {
        let _ = writeln!(s, "  {:<19} {}", k.name, k.doc);
        for p in k.params {
            param_line(s, p.name, p.doc, p.ty.describe(), p.default.describe());
        }
        let _ =
            writeln!(s, "      {:<15} {}", "engines:", level_settings(&k.example()).engines_text());
        let _ = writeln!(s, "      {:<15} {}", "settings:", settings_of(k).join(", "));
        let ties = if k.ties.is_empty() { "none".to_owned() } else { ties_of(k).join(", ") };
        let _ = writeln!(s, "      {:<15} {}", "tie rules:", ties);
        let weights = if k.unit_weights_only { "unit" } else { "every law (see Weights)" };
        let _ = writeln!(s, "      {:<15} {}", "weights:", weights);
        let _ = writeln!(s, "      {:<15} {}", "sampling:", crate::sampling::process_line(k));
    }
}

/// The "Round-based models" section.
fn render_models(s: &mut String) {
    let _ = writeln!(
        s,
        "\nRound-based models (process = {{ kind = … }} in kind = \"dynamic\" configs):"
    );
    for m in ballast_dynamic::registry::MODELS {
        let _ = writeln!(s, "  {:<19} {}", m.name, m.doc);
        for p in m.params {
            param_line(s, p.name, p.doc, p.ty.describe(), p.default.describe());
        }
        let point: Vec<String> = m.point.iter().map(|(k, v)| format!("{k} ({v})")).collect();
        let _ = writeln!(s, "      {:<15} {}", "point:", point.join(", "));
        let _ = writeln!(s, "      {:<15} {}", "start:", m.start);
    }
}

/// The "Topologies" section.
fn render_topologies(s: &mut String) {
    let _ = writeln!(
        s,
        "\nTopologies (--graph KIND[:value:...|:key=value,...]; graph = \"…\" or \
         graph = {{ kind = … }} in kind = \"graph\" configs):"
    );
    for t in ballast_graph::TOPOLOGIES {
        let _ = writeln!(s, "  {:<19} {}", t.name, t.doc);
        for p in t.params {
            param_line(s, p.name, p.doc, p.ty.describe(), p.default.describe());
        }
        let _ = writeln!(s, "      {:<15} {} (e.g. {})", "shorthand:", t.form(), t.example);
    }
}

/// The "Weights" section.
fn render_weights(s: &mut String) {
    let _ = writeln!(
        s,
        "\nWeights (--weights KIND[:key=value,...], weights = {{ kind = … }} in a series):"
    );
    for w in ballast_core::registry::WEIGHTS {
        let _ = writeln!(s, "  {:<15} {}", w.name, w.doc);
        for p in w.params {
            param_line(s, p.name, p.doc, p.ty.describe(), p.default.describe());
        }
    }
}

/// The "Items" section of `ballast list`: the configs under the working directory (or above
/// it), named relative to it.
fn render_items(s: &mut String) {
    match configs_near_cwd() {
        None => {
            let _ = writeln!(
                s,
                "\nItems: no `configs/` in the working directory or above it; run `ballast list` \
                 in the repository to list them (`ballast run configs/<paper>/<item>.toml`)"
            );
        }
        Some(dir) => {
            let ids: Vec<String> = match ballast_runner::discover(&dir) {
                Ok(items) => items.into_iter().map(|(id, _)| id).collect(),
                Err(e) => {
                    let _ = writeln!(s, "\nItems: cannot read {}: {e}", dir.display());
                    return;
                }
            };
            let _ = writeln!(
                s,
                "\nItems ({}, run with `ballast run` or `cargo xtask reproduce`):",
                dir.display()
            );
            if ids.is_empty() {
                let _ = writeln!(s, "  (none)");
            }
            for id in ids {
                let _ = writeln!(s, "  {id}");
            }
        }
    }
}

/// The configs directory found from here (`null` without one) and its items, as `{id, path}`.
fn configs_and_items() -> (serde_json::Value, Vec<serde_json::Value>) {
    use serde_json::{json, Value};
    match find_configs_dir() {
        Some(dir) => {
            let items: Vec<Value> = ballast_runner::discover(&dir)
                .map(|v| {
                    v.into_iter()
                        .map(|(id, path)| json!({ "id": id, "path": path.display().to_string() }))
                        .collect()
                })
                .unwrap_or_default();
            (Value::String(dir.display().to_string()), items)
        }
        None => (Value::Null, Vec::new()),
    }
}

/// The full listing as JSON: the same registries as [`render`], one object per entry.
pub fn structured() -> serde_json::Value {
    use serde_json::{json, Value};
    let param = |name: &str, doc: &str, ty: String, default: String| json!({ "name": name, "doc": doc, "type": ty, "default": default });
    let processes: Vec<Value> = registry::processes()
        .into_iter()
        .map(|k| {
            let params: Vec<Value> = k
                .params
                .iter()
                .map(|p| param(p.name, p.doc, p.ty.describe(), p.default.describe()))
                .collect();
            json!({
                "name": k.name,
                "doc": k.doc,
                "params": params,
                "engines": level_settings(&k.example()).engines_text(),
                "settings": settings_of(k),
                "tie_breaks": ties_of(k),
                "weights": weights_of(k),
                "sampling": crate::sampling::laws_of(k),
            })
        })
        .collect();
    let models: Vec<Value> = ballast_dynamic::registry::MODELS
        .iter()
        .map(|m| {
            let params: Vec<Value> = m
                .params
                .iter()
                .map(|p| param(p.name, p.doc, p.ty.describe(), p.default.describe()))
                .collect();
            let point: Vec<Value> =
                m.point.iter().map(|(k, v)| json!({ "name": k, "doc": v })).collect();
            json!({ "name": m.name, "doc": m.doc, "params": params, "point": point,
                    "start": m.start })
        })
        .collect();
    let topologies: Vec<Value> = ballast_graph::TOPOLOGIES
        .iter()
        .map(|t| {
            let params: Vec<Value> = t
                .params
                .iter()
                .map(|p| param(p.name, p.doc, p.ty.describe(), p.default.describe()))
                .collect();
            json!({ "name": t.name, "doc": t.doc, "form": t.form(), "example": t.example,
                    "params": params })
        })
        .collect();
    let tie_breaks: Vec<Value> = TieBreak::ALL
        .iter()
        .map(|&(name, t)| json!({ "name": name, "doc": tie_break_doc(t) }))
        .collect();
    let engines: Vec<Value> = Engine::ALL
        .iter()
        .map(|&(name, e)| json!({ "name": name, "doc": engine_doc(e) }))
        .collect();
    let (configs, items) = configs_and_items();
    let mut out = json!({
        "processes": processes,
        "models": models,
        "topologies": topologies,
        "tie_breaks": tie_breaks,
        "weights": ballast_core::registry::WEIGHTS
            .iter()
            .map(|w| {
                let params: Vec<Value> = w
                    .params
                    .iter()
                    .map(|p| {
                        json!({"name": p.name, "doc": p.doc, "type": p.ty.describe(),
                               "default": p.default.describe()})
                    })
                    .collect();
                json!({"name": w.name, "doc": w.doc, "params": params})
            })
            .collect::<Vec<_>>(),
        "sampling": crate::sampling::laws_json(),
        "capacities": crate::capacities::laws_json(),
        "starts": crate::start::structured_starts(),
        "churn_and_dispatchers": crate::dynamic_bins::structured(),
        "engines": engines,
        "configs_dir": configs,
        "items": items,
    });
    for (key, value) in crate::list_sections::structured() {
        out[key] = value;
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    /// A parameter as the README's process table shows it: its name, with its default when it
    /// has one (`d = 2`, `ties = "left"`).
    fn param_cell(p: &ballast_core::registry::ParamDef) -> String {
        use ballast_core::registry::ParamDefault;
        match p.default {
            ParamDefault::Required | ParamDefault::Unset => format!("`{}`", p.name),
            ParamDefault::Num(v) => format!("`{} = {v}`", p.name),
            ParamDefault::Bool(b) => format!("`{} = {b}`", p.name),
            ParamDefault::Text(t) => format!("`{} = \"{t}\"`", p.name),
        }
    }

    /// The README's process table (Markdown), one row per kind of the built-in registry, made
    /// from the same declarations as `ballast list`; a test keeps README.md equal to it.
    fn process_table() -> String {
        use std::fmt::Write as _;
        let mut s = String::from("| kind | parameters | engines | rule |\n|---|---|---|---|\n");
        for k in ballast_core::registry::Registry::builtin().processes() {
            let params: Vec<String> = k.params.iter().map(param_cell).collect();
            let engines = ballast_core::level::level_settings(&k.example()).engines_text();
            let doc = k.doc.replace('|', "\\|");
            let _ = writeln!(s, "| `{}` | {} | {engines} | {doc} |", k.name, params.join(", "));
        }
        s
    }

    /// The README's lines between the process table's markers.
    const BEGIN: &str = "<!-- process table: made by `ballast list`'s declarations; \
                         BALLAST_BLESS=1 cargo test -p ballast-cli --lib readme rewrites it -->";
    const END: &str = "<!-- end of process table -->";

    #[test]
    fn readme_process_table_is_the_registrys() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
        let readme = std::fs::read_to_string(path).expect("README.md");
        let (head, rest) = readme.split_once(BEGIN).expect("the table's begin marker");
        let (table, tail) = rest.split_once(END).expect("the table's end marker");
        let made = format!("\n{}", process_table());
        if table == made {
            return;
        }
        if std::env::var_os("BALLAST_BLESS").is_some() {
            std::fs::write(path, format!("{head}{BEGIN}{made}{END}{tail}")).expect("write");
            return;
        }
        panic!("README.md's process table differs from the registry; {BEGIN}");
    }

    #[test]
    fn process_table_has_one_row_per_builtin_kind() {
        let rows: BTreeSet<String> = process_table()
            .lines()
            .skip(2)
            .map(|l| l.split('`').nth(1).unwrap_or_default().to_owned())
            .collect();
        let registry: BTreeSet<String> = ballast_core::registry::Registry::builtin()
            .processes()
            .iter()
            .map(|d| d.name.to_owned())
            .collect();
        assert_eq!(rows, registry);
    }

    #[test]
    fn listing_shows_every_kind_with_its_engines() {
        let text = super::render();
        for def in ballast_core::registry::processes() {
            assert!(text.contains(&format!("  {:<19} {}", def.name, def.doc)), "{}", def.name);
        }
        assert!(text.contains("engines:"), "{text}");
        for def in ballast_dynamic::registry::MODELS {
            assert!(text.contains(&format!("  {:<19} {}", def.name, def.doc)), "{}", def.name);
        }
        for t in ballast_graph::TOPOLOGIES {
            assert!(text.contains(&format!("  {:<19} {}", t.name, t.doc)), "{}", t.name);
            assert!(text.contains(&t.form()), "{}", t.name);
            for p in t.params {
                assert!(text.contains(&format!("      {:<15} {} (", p.name, p.doc)), "{}", p.name);
            }
        }
    }

    /// The names under `key` in the JSON listing.
    fn json_names(v: &serde_json::Value, key: &str) -> Vec<String> {
        v[key]
            .as_array()
            .unwrap_or_else(|| panic!("no `{key}` array"))
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn listing_shows_every_setting_stop_statistic_potential_and_the_offline_optimum() {
        use ballast_core::delay::DelayMode;
        let text = super::render();
        let v = super::structured();
        let section = |title: &str| -> String {
            let from = text.find(title).unwrap_or_else(|| panic!("no {title} in\n{text}"));
            let rest = &text[from..];
            rest[..rest[1..].find("\n\n").map_or(rest.len(), |e| e + 1)].to_owned()
        };
        let entry = |name: &str, doc: &str| format!("{name:<23} {doc}");
        let stats: Vec<String> = ballast_runner::Statistic::allocation()
            .iter()
            .map(|s| {
                let in_text = section("Statistics of allocation series");
                assert!(in_text.contains(&entry(s.name(), s.describe())), "{}", s.name());
                s.name().to_owned()
            })
            .collect();
        assert_eq!(json_names(&v, "statistics"), stats);
        let recovery = section("Statistics of allocation series");
        assert!(recovery.contains("needs:") && recovery.contains("--recovery-target GAP"));
        let measures: Vec<String> = ballast_runner::Statistic::ALL
            .iter()
            .filter(|m| m.kinds() != [ballast_runner::Kind::Allocation])
            .map(|m| {
                assert!(section("Statistics of graph").contains(&entry(m.name(), m.describe())));
                m.name().to_owned()
            })
            .collect();
        assert_eq!(json_names(&v, "measures"), measures);
        let potentials: Vec<String> = ballast_potential::POTENTIALS
            .iter()
            .map(|k| {
                let in_text = section("Potentials (");
                assert!(in_text.contains(&entry(k.name, k.doc)), "{}", k.name);
                assert!(in_text.contains(k.example), "{}", k.example);
                k.name.to_owned()
            })
            .collect();
        assert_eq!(json_names(&v, "potentials"), potentials);
        let stops: Vec<String> = ballast_core::Stop::ALL
            .iter()
            .map(|(name, _)| {
                assert!(section("Stopping rules").contains(&format!("  {name:<23} ")), "{name}");
                (*name).to_owned()
            })
            .collect();
        assert_eq!(json_names(&v, "stops"), stops);
        let modes: Vec<String> = crate::list_sections::DELAY_MODES
            .iter()
            .map(|m| {
                assert_eq!(DelayMode::from_name(m.name()).unwrap(), *m);
                assert!(section("Settings:").contains(&format!("    {:<23} ", m.name())));
                m.name().to_owned()
            })
            .collect();
        assert_eq!(json_names(&v, "delay_modes"), modes);
        let settings = json_names(&v, "settings");
        assert_eq!(settings, ["sequential", "batched", "delay"]);
        for (name, doc) in v["settings"].as_array().unwrap().iter().map(|e| (&e["name"], &e["doc"]))
        {
            let line = entry(name.as_str().unwrap(), doc.as_str().unwrap());
            assert!(section("Settings:").contains(&line), "{line}");
        }
        // Every setting a process names is a listed one, so text and JSON agree on "delay".
        for k in ballast_core::registry::processes() {
            assert!(super::settings_of(k).iter().all(|s| settings.iter().any(|t| t == s)));
        }
        let offline = section("Off-line optimum");
        assert!(offline.contains(v["offline"]["doc"].as_str().unwrap()), "{offline}");
        assert!(offline.contains("--offline D") && offline.contains("offline_optimum"));
    }
}
