//! A newcomer's frictions (issue 43), each as the binary shows it: where outputs go by
//! default, a reference directory that is not there, whole numbers written as floats, help
//! and messages that point to the right place, the listing's paths.

mod common;

use std::path::Path;

use serde_json::Value;

const CONFIG: &str = r#"title = "two"
seed = 3
runs = 2
x = { variable = "n" }
grid = { n = [50] }
point = { m = 500 }

[[series]]
name = "Two-Choice"
process = { kind = "two_choice" }
"#;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn run_writes_to_out_never_into_results() {
    let dir = common::scratch("frictions", "out");
    std::fs::write(dir.join("configs/demo/two.toml"), CONFIG).unwrap();
    std::fs::create_dir_all(dir.join("results")).unwrap();
    let o = common::run_in(&dir, &["run", "configs/demo/two.toml", "--no-checkpoint"]);
    common::ok(&o);
    assert!(dir.join("out/demo/two.csv").is_file());
    assert_eq!(std::fs::read_dir(dir.join("results")).unwrap().count(), 0);
    let help = common::run_in(&dir, &["run", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("[default: out]"));
}

#[test]
fn a_missing_reference_directory_is_named_with_the_way_out() {
    let dir = common::scratch("frictions", "reference");
    std::fs::remove_dir_all(dir.join("reference")).unwrap();
    let text = format!("{CONFIG}\n[[reference]]\nfile = \"paper.csv\"\nlabel = \"published\"\n");
    let config = dir.join("copied.toml");
    std::fs::write(&config, text).unwrap();
    let o = common::run_in(&dir, &["run", "copied.toml", "--no-checkpoint"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("no reference directory") && e.contains("--reference DIR"), "{e}");
    assert!(e.contains(&dir.display().to_string()), "names the directory searched: {e}");
    // With the directory, the file missing there: relative to it.
    std::fs::create_dir_all(dir.join("refs")).unwrap();
    let o = common::run_in(&dir, &["run", "copied.toml", "--no-checkpoint", "--reference", "refs"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("relative to --reference refs"), "{}", stderr(&o));
}

/// `ballast simulate --json ARGS` as a value without its timing fields.
fn simulate(args: &[&str]) -> Value {
    let o = common::run_in(Path::new("."), &[&["simulate", "--json"], args].concat());
    common::ok(&o);
    let mut v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let obj = v.as_object_mut().unwrap();
    obj.remove("ns_per_ball");
    obj.remove("wall_s");
    v
}

#[test]
fn whole_numbers_in_float_notation_are_taken_when_exact() {
    let base = ["--process", "two_choice", "--n", "100", "--seed", "4"];
    let a = simulate(&[&base[..], &["--m", "1e4", "--runs", "2.0"]].concat());
    let b = simulate(&[&base[..], &["--m", "10000", "--runs", "2"]].concat());
    assert_eq!(a, b);
    let o = common::run_in(Path::new("."), &[&["simulate"], &base[..], &["--m", "1.5e0"]].concat());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is 1.5, not a whole number"), "{}", stderr(&o));
}

#[test]
fn help_and_messages_point_to_the_right_place() {
    let o = common::run_in(Path::new("."), &["simulate", "-h"]);
    let help = String::from_utf8_lossy(&o.stdout);
    let line = help.lines().find(|l| l.contains("--process <KIND>")).unwrap();
    assert!(!line.contains("[default"), "{line}");
    let dir = common::scratch("frictions", "point");
    let text = CONFIG.replace("point = { m = 500 }", "point = { m = 500, observe_every = 100 }");
    std::fs::write(dir.join("configs/demo/two.toml"), text).unwrap();
    let o = common::run_in(&dir, &["run", "configs/demo/two.toml", "--no-checkpoint"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is a field of each [[series]]"), "{}", stderr(&o));
}

#[test]
fn list_shows_configs_relative_to_the_working_directory() {
    let dir = common::scratch("frictions", "list");
    std::fs::write(dir.join("configs/demo/two.toml"), CONFIG).unwrap();
    std::fs::create_dir_all(dir.join("sub/deeper")).unwrap();
    for (cwd, shown) in [(dir.clone(), "configs"), (dir.join("sub/deeper"), "../../configs")] {
        let o = common::run_in(&cwd, &["list"]);
        common::ok(&o);
        let out = String::from_utf8_lossy(&o.stdout);
        let items = out.lines().find(|l| l.starts_with("Items")).unwrap();
        assert!(items.starts_with(&format!("Items ({shown},")), "{items}");
        assert!(out.contains("  demo/two"));
    }
    let empty = std::env::temp_dir().join(format!("ballast-frictions-none-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let o = common::run_in(&empty, &["list"]);
    let out = String::from_utf8_lossy(&o.stdout);
    let items = out.lines().find(|l| l.starts_with("Items")).unwrap();
    assert!(
        items.starts_with("Items: no `configs/`") && !items.contains(env!("CARGO_MANIFEST_DIR"))
    );
}

/// Advice names settings in the words of the surface the user typed: flags on the command
/// line, TOML in a config (Python's keywords: `crates/ballast-py/tests/test_messages.py`).
#[test]
fn advice_is_in_the_words_of_the_surface() {
    let dir = std::env::temp_dir();
    let small = ["--n", "10", "--m", "10"];
    let cases: [(&[&str], &[&str]); 3] = [
        (&["--process", "memory", "--param", "k=2", "--engine", "levels"], &["use --engine bins"]),
        (
            &[
                "--process",
                "two_choice",
                "--engine",
                "levels",
                "--batch",
                "5",
                "--tie-break",
                "lowest_index",
            ],
            &["use --engine bins, or --tie-break random"],
        ),
        (
            &["--process", "one_choice", "--tie-break", "first"],
            &["`--tie-break first` would be ignored"],
        ),
    ];
    for (args, needles) in cases {
        let o = common::run_in(&dir, &[&["simulate"][..], args, &small].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        for n in needles {
            assert!(err.contains(n), "{args:?}: `{n}` not in {err}");
        }
        assert!(!err.contains("engine = \"") && !err.contains("tie_break = \""), "{err}");
    }
    // A config keeps its own words.
    let scratch = common::scratch("frictions", "words");
    let config = CONFIG
        .replace("seed = 3", "seed = 3\nengine = \"levels\"")
        .replace("process = { kind = \"two_choice\" }", "process = { kind = \"memory\", k = 2 }");
    std::fs::write(scratch.join("configs/demo/two.toml"), config).unwrap();
    let o = common::run_in(&scratch, &["run", "configs/demo/two.toml", "--no-checkpoint"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("use engine = \"bins\""), "{}", stderr(&o));
}
