//! Config parsing and validation errors: each class of bad input gives a message naming the
//! file, the place, the field and the allowed values; good configs expand as documented.

use std::path::Path;

use ballast_runner::{Error, Experiment};

const GOOD: &str = r#"
title = "test"
seed = 1
runs = 3
x = { variable = "k", label = "b/n" }
grid = { k = [1, 2, 3] }

[point]
n = 100
b = "k * n"
batches = "floor(12/k)"

[[series]]
name = "Two-Choice"
process = { kind = "two_choice" }
tie_break = "random"

[[series]]
name = "beta"
process = { kind = "one_plus_beta", beta = "min(1, sqrt(n/b*ln(n)))" }
"#;

fn parse(src: &str) -> Result<Experiment, String> {
    Experiment::parse("t/item", Path::new("configs/t/item.toml"), src).map_err(|e| e.to_string())
}

fn err(src: &str) -> String {
    match parse(src) {
        Ok(_) => panic!("config should be rejected:\n{src}"),
        Err(e) => e,
    }
}

#[test]
fn good_config_expands() {
    let exp = parse(GOOD).unwrap();
    let plan = exp.plan(false).unwrap();
    assert_eq!(plan.points.len(), 6);
    let p = &plan.points[4];
    assert_eq!((p.n, p.b, p.m, p.x), (100, Some(200), 1200, 2.0));
    assert_eq!(plan.points[2].m, 4 * 300);
    assert_eq!(exp.id(), "t/item");
    // Without [quick], the quick plan is the full plan.
    assert_eq!(exp.plan(true).unwrap().points.len(), 6);
}

#[test]
fn malformed_toml_names_the_place() {
    let e = err(&GOOD.replace("runs = 3", "runs = = 3"));
    assert!(e.contains("configs/t/item.toml:4:"), "{e}");
}

#[test]
fn unknown_field_names_the_field_and_the_allowed_ones() {
    let e = err(&GOOD.replace("tie_break = \"random\"", "tiebreak = \"random\""));
    assert!(e.contains("item.toml:16:1") && e.contains("unknown field `tiebreak`"), "{e}");
    assert!(e.contains("`tie_break`"), "{e}");
    let e = err(&GOOD.replace("batches = \"floor(12/k)\"", "batchez = 3"));
    assert!(e.contains("unknown field `batchez`") && e.contains("`batches`"), "{e}");
}

#[test]
fn unknown_process_kind_lists_the_kinds() {
    let e = err(&GOOD.replace("\"two_choice\"", "\"tow_choice\""));
    assert!(e.contains("item.toml:15:") && e.contains("unknown process `tow_choice`"), "{e}");
    assert!(e.contains("did you mean `two_choice`"), "{e}");
    assert!(e.contains("two_choice") && e.contains("mixed_quantile"), "{e}");
}

#[test]
fn unknown_process_parameter() {
    let e = err(&GOOD.replace("beta = \"min", "betta = \"min"));
    assert!(e.contains("item.toml:20:") && e.contains("unknown parameter `betta`"), "{e}");
    assert!(e.contains("did you mean `beta`"), "{e}");
}

#[test]
fn beta_out_of_range() {
    let e = err(&GOOD.replace("\"min(1, sqrt(n/b*ln(n)))\"", "1.5"));
    assert!(e.contains("item.toml:20:44") && e.contains("`beta`") && e.contains("[0, 1]"), "{e}");
    assert!(e.contains("series `beta`") && e.contains("1.5"), "{e}");
}

#[test]
fn zero_bins_and_zero_batch() {
    let e = err(&GOOD.replace("n = 100", "n = 0"));
    assert!(e.contains("item.toml:9:5") && e.contains("`n`") && e.contains("1..="), "{e}");
    let e = err(&GOOD.replace("b = \"k * n\"", "b = \"0 * k\""));
    assert!(e.contains("item.toml:10:5") && e.contains("`b`") && e.contains(">= 1"), "{e}");
    let e = err(&GOOD.replace("runs = 3", "runs = 0"));
    assert!(e.contains("`runs`") && e.contains(">= 1"), "{e}");
}

#[test]
fn bad_tie_break_lists_the_rules() {
    let e = err(&GOOD.replace("tie_break = \"random\"", "tie_break = \"left\""));
    assert!(e.contains("item.toml:16:") && e.contains("tie_break"), "{e}");
    assert!(e.contains("random, first, lowest_index, position"), "{e}");
}

#[test]
fn formula_problems() {
    let e = err(&GOOD.replace("floor(12/k)", "10/k"));
    assert!(e.contains("`batches`") && e.contains("non-negative integer"), "{e}");
    let e = err(&GOOD.replace("floor(12/k)", "12/q"));
    assert!(e.contains("unknown variable `q`"), "{e}");
    let e = err(&GOOD.replace("variable = \"k\"", "variable = \"z\""));
    assert!(e.contains("`z` is not a grid variable") && e.contains("expected one of: k"), "{e}");
}

#[test]
fn all_problems_are_reported_at_once() {
    let bad = GOOD
        .replace("tie_break = \"random\"", "tie_break = \"left\"")
        .replace("\"min(1, sqrt(n/b*ln(n)))\"", "2");
    match Experiment::parse("t/item", Path::new("item.toml"), &bad) {
        Err(Error::Config { errors, .. }) => assert_eq!(errors.len(), 2, "{errors:?}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn quick_overrides() {
    let src = format!("{GOOD}\n[quick]\nruns = 1\ngrid = {{ k = [2] }}\npoint = {{ n = 10 }}\n");
    let exp = parse(&src).unwrap();
    let q = exp.plan(true).unwrap();
    assert_eq!((q.points.len(), q.runs, q.points[0].n), (2, 1, 10));
    let e = err(&format!("{GOOD}\n[quick]\ngrid = {{ j = [2] }}\n"));
    assert!(e.contains("unknown grid variable `j`"), "{e}");
}

#[test]
fn missing_file_is_an_io_error() {
    let e = Experiment::from_path(Path::new("/nonexistent/x.toml")).unwrap_err();
    assert!(matches!(e, Error::Io { .. }));
}

#[test]
fn unknown_engine_lists_the_engines() {
    let e = err(&GOOD.replace("seed = 1", "seed = 1\nengine = \"gpu\""));
    assert!(
        e.contains("item.toml:4:10") && e.contains("`engine`") && e.contains("auto, bins, levels"),
        "{e}"
    );
}
