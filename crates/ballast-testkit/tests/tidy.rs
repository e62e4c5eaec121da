//! Tidiness of the whole workspace, kept by a test: every source file of a crate, of
//! `xtask` and of `benches` opens with a `//!` comment saying what it is for; no file holds
//! `unsafe` code or a to-do marker; library code logs through `tracing` and never prints to
//! standard error with `eprintln!` (binaries, tests, examples and benches may).
//!
//! Run it with `cargo test -p ballast-testkit --test tidy`; a failure lists the files.

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under `dir`, recursively, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if !p.ends_with("target") {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn sources() -> Vec<PathBuf> {
    let root = workspace();
    let mut out = Vec::new();
    for dir in ["crates", "xtask", "benches"] {
        rust_files(&root.join(dir), &mut out);
    }
    assert!(out.len() > 100, "the walk found only {} files", out.len());
    out
}

/// Whether `path` is a library's own source (not a binary, test, example or bench).
fn is_library_source(path: &Path) -> bool {
    let p = path.to_string_lossy().replace('\\', "/");
    let own_dir = p.contains("/src/") && !p.contains("/tests/") && !p.contains("/examples/");
    let binary = p.contains("/ballast-cli/") || p.contains("/xtask/") || p.contains("/benches/");
    own_dir && !binary && !p.ends_with("/main.rs")
}

/// The problems of one file's text; `library`: whether it is library code.
fn problems(text: &str, in_src: bool, library: bool) -> Vec<&'static str> {
    let mut out = Vec::new();
    if in_src && !text.starts_with("//!") {
        out.push("does not open with a `//!` comment");
    }
    let code: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
    let has = |needle: &str| code.iter().any(|l| l.contains(needle));
    let unsafe_code =
        [concat!("un", "safe {"), concat!("un", "safe fn"), concat!("un", "safe impl")];
    if unsafe_code.iter().any(|u| has(u)) {
        out.push("holds unsafe code");
    }
    if text.contains(concat!("TO", "DO")) || text.contains(concat!("FIX", "ME")) {
        out.push("holds a to-do marker");
    }
    if library && has(concat!("eprint", "ln!")) {
        out.push("prints to standard error in library code (use tracing)");
    }
    out
}

#[test]
fn every_source_file_is_tidy() {
    let mut bad = Vec::new();
    for path in sources() {
        let text = std::fs::read_to_string(&path).unwrap();
        let in_src = path.to_string_lossy().contains("/src/");
        for p in problems(&text, in_src, is_library_source(&path)) {
            bad.push(format!("{}: {p}", path.display()));
        }
    }
    assert!(bad.is_empty(), "untidy files:\n{}", bad.join("\n"));
}

#[test]
fn the_tidy_check_finds_each_problem() {
    assert!(problems("//! fine\nfn f() {}\n", true, true).is_empty());
    assert_eq!(problems("fn f() {}\n", true, false), ["does not open with a `//!` comment"]);
    let code = format!("//! x\nfn f() {{ {} {{ g() }} }}\n", concat!("un", "safe"));
    assert_eq!(problems(&code, true, false), ["holds unsafe code"]);
    let marker = format!("//! x\n// {}: later\n", concat!("TO", "DO"));
    assert_eq!(problems(&marker, true, false), ["holds a to-do marker"]);
    let print = format!("//! x\nfn f() {{ {}(\"x\"); }}\n", concat!("eprint", "ln!"));
    assert_eq!(
        problems(&print, true, true),
        ["prints to standard error in library code (use tracing)"]
    );
    assert!(problems(&print, true, false).is_empty());
    assert!(is_library_source(Path::new("/w/crates/ballast-core/src/engine.rs")));
    assert!(!is_library_source(Path::new("/w/crates/ballast-cli/src/run.rs")));
    assert!(!is_library_source(Path::new("/w/crates/ballast-core/tests/kernels.rs")));
}
