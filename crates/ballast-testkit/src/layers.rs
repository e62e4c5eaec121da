//! The module-layer check of every ballast crate's `tests/module_layers.rs`: no top-level
//! module reaches, through `crate::` paths, a module that reaches it back, and (where a crate
//! declares its layers) no import points up a layer. The check reads the sources (code
//! lines, not comments or the unit tests at the end of a file), maps every `crate::name` to
//! the top-level module that defines `name` (directly, or through a `pub use` of `lib.rs`),
//! and looks for a cycle in that graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level module → the top-level modules it reaches through `crate::` paths.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

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
pub fn crate_paths(text: &str) -> Vec<String> {
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

/// Names of the modules declared only for tests (`#[cfg(test)]` then `mod name;`): their
/// files are test code, like the `mod tests` at the end of a file, and not part of the graph.
fn test_only_modules(all: &[(String, PathBuf)]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, path) in all {
        let text = std::fs::read_to_string(path).unwrap();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for w in lines.windows(2) {
            let decl = w[1].strip_prefix("mod ").and_then(|r| r.strip_suffix(';'));
            if let (true, Some(name)) = (w[0] == "#[cfg(test)]", decl) {
                out.insert(name.to_string());
            }
        }
    }
    out
}

/// The graph of the top-level modules of the crate whose sources are in `src`.
pub fn module_graph(src: &Path) -> Graph {
    let mut all = Vec::new();
    files(src, None, &mut all);
    let test_only = test_only_modules(&all);
    all.retain(|(_, path)| {
        !path.file_stem().is_some_and(|s| test_only.contains(s.to_string_lossy().as_ref()))
    });
    let modules: BTreeSet<String> = all.iter().map(|(m, _)| m.clone()).collect();
    let names = reexports(&code(&src.to_path_buf().join("lib.rs")));
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
pub fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
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

/// The edges of `graph` that point up: from a module of layer `i` to one of a layer above
/// `i` (`layers[0]` is the bottom), sorted. Every module of `graph` must be in exactly one
/// layer; a module missing from `layers` is reported once, as `("?", module)`.
pub fn upward_edges(graph: &Graph, layers: &[&[&str]]) -> Vec<(String, String)> {
    let layer_of = |m: &str| layers.iter().position(|l| l.contains(&m));
    let mut out = BTreeSet::new();
    for (from, deps) in graph {
        let Some(lf) = layer_of(from) else {
            out.insert(("?".to_string(), from.clone()));
            continue;
        };
        for to in deps {
            match layer_of(to) {
                Some(lt) if lt <= lf => {}
                Some(_) => {
                    out.insert((from.clone(), to.clone()));
                }
                None => {
                    out.insert(("?".to_string(), to.clone()));
                }
            }
        }
    }
    out.into_iter().collect()
}

/// Asserts that the crate whose sources are in `src` has no import cycle among its top-level
/// modules and, when `layers` is not empty, that every import points down or sideways in
/// `layers` (bottom first). Panics with the cycle or the offending edges.
pub fn assert_layered(src: &Path, layers: &[&[&str]]) {
    let graph = module_graph(src);
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle: {}\nthe graph: {graph:#?}", cycle.join(" -> "));
    }
    if !layers.is_empty() {
        let up = upward_edges(&graph, layers);
        assert!(up.is_empty(), "imports that point up a layer (or modules in no layer): {up:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn the_layer_check_finds_an_edge_that_points_up() {
        let mut graph = Graph::new();
        graph.entry("spec".into()).or_default();
        graph.entry("engine".into()).or_default().insert("spec".into());
        assert!(upward_edges(&graph, &[&["spec"], &["engine"]]).is_empty());
        graph.get_mut("spec").unwrap().insert("engine".into());
        assert_eq!(
            upward_edges(&graph, &[&["spec"], &["engine"]]),
            [("spec".to_string(), "engine".to_string())]
        );
        assert_eq!(upward_edges(&graph, &[&["engine"]]), [("?".to_string(), "spec".to_string())]);
    }
}
