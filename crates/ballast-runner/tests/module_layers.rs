//! The runner's modules form layers: no module reaches, through `crate::` paths, a module
//! that reaches it back. The check reads the sources (code lines, not comments or the unit
//! tests at the end of a file), maps every
//! `crate::name` to the top-level module that defines `name` (directly, or through a
//! `pub use` of `lib.rs`), and looks for a cycle in that graph.
//!
//! Run it with `cargo test -p ballast-runner --test module_layers`; on failure it prints the
//! cycle, e.g. `config -> plan -> config`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, with the top-level module it belongs to.
fn files(dir: &Path, top: Option<&str>, out: &mut Vec<(String, PathBuf)>) {
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            files(&path, Some(top.unwrap_or(&stem)), out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push((top.unwrap_or(&stem).to_string(), path));
        }
    }
}

/// Code of a file without comment lines and without its unit tests (the `#[cfg(test)] mod
/// tests` at the end of a file, which may drive the whole runner).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default();
    text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// The identifiers after each `crate::` in `text` (`crate::{a, b::c}` gives `a`, `b`).
fn crate_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let ident = |s: &str| -> String {
        s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
    };
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(inner.split(',').map(|p| ident(p.trim())).filter(|s| !s.is_empty()));
        } else {
            out.push(ident(rest));
        }
    }
    out
}

/// Names re-exported by `lib.rs` (`pub use module::{A, B}` / `pub use module::A`) → module.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let text = lib.replace('\n', " ");
    for stmt in text.split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else { continue };
        let Some((module, names)) = rest.split_once("::") else { continue };
        let names = names.trim().trim_start_matches('{').trim_end_matches('}');
        for name in names.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            map.insert(name.to_string(), module.trim().to_string());
        }
    }
    map
}

fn module_graph() -> Graph {
    let mut all = Vec::new();
    files(&src_dir(), None, &mut all);
    let modules: BTreeSet<String> = all.iter().map(|(m, _)| m.clone()).collect();
    let names = reexports(&code(&src_dir().join("lib.rs")));
    let mut graph = Graph::new();
    for (module, path) in &all {
        if module == "lib" {
            continue;
        }
        let deps = graph.entry(module.clone()).or_default();
        for name in crate_paths(&code(path)) {
            let target = if modules.contains(&name) { Some(&name) } else { names.get(&name) };
            if let Some(t) = target.filter(|t| *t != module && *t != "lib") {
                deps.insert(t.clone());
            }
        }
    }
    graph
}

/// A cycle of `graph`, as the list of its modules (first = last), if there is one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        g: &Graph,
        m: &str,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(m) {
            Some(2) => return None,
            Some(1) => {
                let at = stack.iter().position(|s| s == m).unwrap();
                let mut cycle = stack[at..].to_vec();
                cycle.push(m.to_string());
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(m.to_string(), 1);
        stack.push(m.to_string());
        for d in g.get(m).into_iter().flatten() {
            if let Some(c) = visit(g, d, state, stack) {
                return Some(c);
            }
        }
        stack.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    graph.keys().find_map(|m| visit(graph, m, &mut state, &mut Vec::new()))
}

#[test]
fn the_runner_modules_import_one_another_without_a_cycle() {
    let graph = module_graph();
    // The graph is not trivially empty: the pipeline's main edges are seen.
    assert!(graph["run"].contains("units"), "{graph:#?}");
    assert!(graph["plan"].contains("config"), "{graph:#?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle: {}\nthe graph: {graph:#?}", cycle.join(" -> "));
    }
}

#[test]
fn the_cycle_check_finds_a_cycle_when_there_is_one() {
    let mut graph = Graph::new();
    graph.entry("config".into()).or_default().insert("formula".into());
    graph.entry("formula".into()).or_default();
    assert_eq!(find_cycle(&graph), None);
    graph.get_mut("formula").unwrap().insert("config".into());
    assert_eq!(
        find_cycle(&graph),
        Some(vec!["config".to_string(), "formula".to_string(), "config".to_string()])
    );
    assert_eq!(crate_paths("use crate::{a, b::c};\nx = crate::d::e;"), ["a", "b", "d"]);
}
