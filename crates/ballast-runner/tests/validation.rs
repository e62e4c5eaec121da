//! Config validation reports every problem of a file at once: schema errors (unknown fields,
//! unknown variants, wrong types, missing fields) located at their original line and column
//! with the allowed names and a "did you mean" suggestion, then the value checks of every
//! scale, each problem once, and nothing that is only a consequence of another error.

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

/// The messages of a rejected config (panics if it is accepted).
fn errors(src: &str) -> Vec<String> {
    match Experiment::parse("t/item", Path::new("item.toml"), src) {
        Err(Error::Config { errors, .. }) => errors.iter().map(ToString::to_string).collect(),
        Err(e) => panic!("not a config error: {e}"),
        Ok(_) => panic!("config should be rejected:\n{src}"),
    }
}

/// Asserts that exactly one message contains every needle.
fn has(errors: &[String], needles: &[&str]) {
    let hits: Vec<&String> =
        errors.iter().filter(|e| needles.iter().all(|n| e.contains(n))).collect();
    assert_eq!(hits.len(), 1, "want one message with {needles:?} in {errors:#?}");
}

#[test]
fn several_unknown_fields_are_all_reported_with_suggestions() {
    let src = GOOD
        .replace("seed = 1", "seed = 1\ncolour = 3\nrunz = 4")
        .replace("label = \"b/n\"", "lable = \"b/n\"")
        .replace("tie_break = \"random\"", "tiebreak = \"random\"")
        .replace("beta = \"min", "betta = \"min");
    let e = errors(&src);
    assert_eq!(e.len(), 5, "{e:#?}");
    has(&e, &["item.toml:4:1:", "unknown field `colour`", "expected one of `kind`, `title`"]);
    has(&e, &["item.toml:5:1:", "unknown field `runz`", "did you mean `runs`?"]);
    has(&e, &["item.toml:7:23:", "x: unknown field `lable`", "did you mean `label`?"]);
    has(
        &e,
        &["item.toml:18:1:", "series[0]: unknown field `tiebreak`", "did you mean `tie_break`?"],
    );
    has(&e, &["item.toml:22:45:", "unknown parameter `betta`", "did you mean `beta`?"]);
    // "colour" is far from every field: no suggestion.
    assert!(!e[0].contains("did you mean"), "{}", e[0]);
    // Sorted by place.
    let lines: Vec<usize> =
        e.iter().map(|m| m.split(':').nth(1).unwrap().parse().unwrap()).collect();
    assert!(lines.windows(2).all(|w| w[0] <= w[1]), "{e:#?}");
}

#[test]
fn a_misspelled_required_field_is_one_error() {
    // Removing `seeed` leaves `seed` missing: that is the same mistake, reported once.
    let e = errors(&GOOD.replace("seed = 1", "seeed = 1"));
    assert_eq!(e.len(), 1, "{e:#?}");
    has(&e, &["item.toml:3:1:", "unknown field `seeed`", "did you mean `seed`?"]);
    let e = errors(&GOOD.replace("kind = \"two_choice\" }", "kind = \"d_choice\", dd = 3 }"));
    assert_eq!(e.len(), 1, "{e:#?}");
    has(&e, &["unknown parameter `dd` for process `d_choice`", "did you mean `d`?"]);
}

#[test]
fn a_missing_field_caused_by_a_removal_is_not_reported() {
    // `runs = "three"` is removed while looking for more errors; the "missing field `runs`"
    // that follows is ours.
    let e = errors(&GOOD.replace("runs = 3", "runs = \"three\"").replace("seed = 1", "seed = -1"));
    assert_eq!(e.len(), 2, "{e:#?}");
    has(&e, &["item.toml:3:8:", "seed: invalid value: integer `-1`, expected u64"]);
    has(&e, &["item.toml:4:8:", "runs: invalid type: string \"three\", expected u64"]);
    assert!(!e.iter().any(|m| m.contains("missing")), "{e:#?}");
}

#[test]
fn genuinely_missing_fields_are_reported() {
    let e = errors(&GOOD.replace("title = \"test\"", ""));
    assert_eq!(e, vec!["item.toml: missing field `title`".to_string()]);
    let e = errors(&GOOD.replace("process = { kind = \"two_choice\" }", ""));
    has(&e, &["item.toml:13:1:", "series[0]: missing field `process`"]);
    let e = errors("");
    assert_eq!(e.len(), 6, "{e:#?}");
    // A file that is only a table: the root's fields are not blamed on the table.
    let e = errors("[x]\nvariable = \"k\"\n");
    assert!(e.iter().all(|m| !m.contains("x: missing")), "{e:#?}");
    has(&e, &["missing field `title`"]);
}

#[test]
fn unknown_variants_suggest_the_nearest_name() {
    let e = errors(&GOOD.replace("\"two_choice\"", "\"tow_choice\""));
    assert_eq!(e.len(), 1, "{e:#?}");
    has(
        &e,
        &[
            "item.toml:15:20:",
            "unknown process `tow_choice`",
            "mixed_quantile",
            "did you mean `two_choice`?",
        ],
    );
    let src =
        GOOD.replace("tie_break = \"random\"", "statistic = \"max_gapp\"\nalso = [\"finalgap\"]");
    let e = errors(&src);
    has(
        &e,
        &[
            "item.toml:16:13:",
            "series[0].statistic: unknown variant `max_gapp`",
            "did you mean `max_gap`?",
        ],
    );
    has(
        &e,
        &[
            "item.toml:17:8:",
            "series[0].also: unknown variant `finalgap`",
            "did you mean `final_gap`?",
        ],
    );
    let e = errors(&GOOD.replace("tie_break = \"random\"", "weights = { kind = \"expo\" }"));
    has(
        &e,
        &[
            "item.toml:16:",
            "unknown weight law `expo`",
            "did you mean `exp`?",
            "valid laws: unit, exp, constant",
        ],
    );
}

#[test]
fn value_names_suggest_the_nearest_name() {
    let e = errors(&GOOD.replace("tie_break = \"random\"", "tie_break = \"positon\""));
    has(
        &e,
        &[
            "item.toml:16:13:",
            "`tie_break`",
            "random, first, lowest_index, position",
            "did you mean `position`?",
        ],
    );
    let e = errors(&GOOD.replace("seed = 1", "seed = 1\nengine = \"level\""));
    has(&e, &["item.toml:4:10:", "`engine`", "auto, bins, levels", "did you mean `levels`?"]);
    let e = errors(&GOOD.replace("variable = \"k\"", "variable = \"kk\""));
    has(&e, &["item.toml:5:18:", "`kk` is not a grid variable", "did you mean `k`?"]);
    let e = errors(&GOOD.replace("floor(12/k)", "floor(12/kk)"));
    // The [point] formula fails for both series: one message.
    assert_eq!(e.len(), 1, "{e:#?}");
    has(&e, &["item.toml:11:11:", "unknown variable `kk`", "did you mean `k`?"]);
    let e = errors(&format!("kind = \"grph\"\n{GOOD}"));
    has(&e, &["item.toml:1:8:", "unknown item kind `grph`", "did you mean `graph`?"]);
    let e = errors(&format!("{GOOD}\n[quick]\ngrid = {{ kk = [2] }}\n"));
    has(&e, &["quick.grid: unknown grid variable `kk`", "did you mean `k`?"]);
}

#[test]
fn schema_errors_and_value_errors_together() {
    // An unknown process kind in one series does not hide β out of range in another.
    let src = GOOD
        .replace("\"two_choice\"", "\"tow_choice\"")
        .replace("\"min(1, sqrt(n/b*ln(n)))\"", "1.5")
        .replace("seed = 1", "seed = 1\ncolour = 2");
    let e = errors(&src);
    assert_eq!(e.len(), 3, "{e:#?}");
    has(&e, &["item.toml:4:1:", "unknown field `colour`"]);
    has(&e, &["item.toml:16:20:", "unknown process `tow_choice`"]);
    has(
        &e,
        &["item.toml:21:44:", "series `beta`", "invalid value 1.5 for parameter `beta`", "[0, 1]"],
    );
}

#[test]
fn no_consequences_of_a_schema_error_are_reported() {
    // The misspelled `batches` of [point] would leave every series without balls.
    let e = errors(&GOOD.replace("batches = \"floor(12/k)\"", "batchez = 3"));
    assert_eq!(e.len(), 1, "{e:#?}");
    has(&e, &["item.toml:11:1:", "point: unknown field `batchez`", "did you mean `batches`?"]);
    // A process of the wrong type: nothing about the placeholder that replaced it.
    let e = errors(&GOOD.replace("beta = \"min(1, sqrt(n/b*ln(n)))\"", "beta = true"));
    assert_eq!(e.len(), 1, "{e:#?}");
    has(&e, &["item.toml:20:44:", "invalid value true for parameter `beta`"]);
    // A bad grid: not a cascade of "unknown variable" and "not a grid variable".
    let e = errors(&GOOD.replace("k = [1, 2, 3]", "k = [1, nan, 3]"));
    assert_eq!(e.len(), 1, "{e:#?}");
    has(&e, &["item.toml:6:14:", "grid variable `k`", "finite"]);
}

#[test]
fn problems_of_several_scales_are_reported_once() {
    let src = format!(
        "{}\n[quick]\ngrid = {{ k = [2] }}\n",
        GOOD.replace("\"min(1, sqrt(n/b*ln(n)))\"", "1.5")
    );
    let e = errors(&src);
    assert_eq!(e.len(), 1, "{e:#?}");
    // A problem only of [reduced] is found although the full scale has one too.
    let src = format!(
        "{}\n[reduced]\npoint = {{ n = 0 }}\n",
        GOOD.replace("\"min(1, sqrt(n/b*ln(n)))\"", "1.5")
    );
    let e = errors(&src);
    assert_eq!(e.len(), 2, "{e:#?}");
    has(&e, &["item.toml:23:15:", "`n`", "1..="]);
}

#[test]
fn malformed_toml_is_one_located_error() {
    let e = errors(&GOOD.replace("runs = 3", "runs = = 3"));
    assert_eq!(e.len(), 1, "{e:#?}");
    has(&e, &["item.toml:4:8:", "invalid string"]);
    let e = errors("title = \"x\n");
    has(&e, &["item.toml:1:"]);
}

#[test]
fn wrong_types_name_the_expected_type_without_rust_names() {
    let e = errors(&GOOD.replace("x = { variable = \"k\", label = \"b/n\" }", "x = 5"));
    has(&e, &["item.toml:5:5:", "x: invalid type: integer `5`, expected a table"]);
    assert!(!e[0].contains("RawAxis"), "{e:#?}");
    let e = errors(&GOOD.replace("process = { kind = \"two_choice\" }", "process = 5"));
    has(&e, &["series[0].process: invalid type: integer `5`", "expected a table"]);
}

#[test]
fn out_of_range_values() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("\"min(1, sqrt(n/b*ln(n)))\"", "-0.5", &["item.toml:20:", "`beta`", "[0, 1]"]),
        ("\"min(1, sqrt(n/b*ln(n)))\"", "\"ln(0)\"", &["`beta`", "-inf", "[0, 1]"]),
        ("\"min(1, sqrt(n/b*ln(n)))\"", "\"sqrt(-1)\"", &["`beta`", "NaN"]),
        ("n = 100", "n = 0", &["item.toml:9:5:", "`n`", "1..=4294967295"]),
        ("n = 100", "n = 1e10", &["`n`", "1..=4294967295"]),
        ("n = 100", "n = \"1/0\"", &["`n`", "inf", "non-negative integer"]),
        ("b = \"k * n\"", "b = 0", &["item.toml:10:5:", "`b`", ">= 1"]),
        ("runs = 3", "runs = 0", &["item.toml:4:8:", "`runs`", ">= 1"]),
        ("floor(12/k)", "1e19", &["`batches`", "10000000000000000000 is not below 2^53"]),
        (
            "b = \"k * n\"\nbatches = \"floor(12/k)\"",
            "b = \"2^40\"\nbatches = \"2^30\"",
            &["`batches`", "64 bits"],
        ),
        ("k = [1, 2, 3]", "k = { from = 1, to = inf }", &["`k`", "finite"]),
        ("k = [1, 2, 3]", "k = { from = 1, to = 3, step = 0 }", &["`k`", "step > 0"]),
    ];
    for (from, to, needles) in cases {
        let src = GOOD.replace(from, to);
        assert_ne!(src, GOOD, "{from}");
        has(&errors(&src), needles);
    }
    // m beyond the bin engine's 32-bit loads: refused on `bins`, run by the level engine
    // under the default `auto`.
    let big_m = GOOD.replace("floor(12/k)", "5e9");
    Experiment::parse("t/item", Path::new("item.toml"), &big_m).expect("auto takes big m");
    let on_bins = big_m.replace("seed = 1\n", "seed = 1\nengine = \"bins\"\n");
    has(&errors(&on_bins), &["`m`", "4294967295"]);
    let dchoice = GOOD.replace("kind = \"two_choice\" }", "kind = \"d_choice\", d = 0 }");
    has(&errors(&dchoice), &["item.toml:15:36:", "`d`", "1..=1024"]);
    let mixed = GOOD
        .replace("kind = \"two_choice\" }", "kind = \"mixed_quantile\", delta = 0.5, eta = 2 }");
    has(&errors(&mixed), &["`eta`", "[0, 1]"]);
    let quantile = GOOD.replace("kind = \"two_choice\" }", "kind = \"quantile\", delta = -1 }");
    has(&errors(&quantile), &["`delta`", "[0, 1]"]);
    let weights = GOOD.replace("tie_break = \"random\"", "weights = { kind = \"exp\", mean = 0 }");
    has(&errors(&weights), &["parameter `mean` of weight law `exp`", "> 0"]);
    let theory = GOOD.replace("tie_break = \"random\"", "theory = \"1/(k-1)\"");
    has(&errors(&theory), &["`theory`", "inf", "finite"]);
    let shift = format!("{GOOD}\n[[reference]]\nfile = \"a.csv\"\nlabel = \"p\"\nx_shift = nan\n");
    has(&errors(&shift), &["item.toml:25:11:", "x_shift", "finite"]);
    let sampling = format!("sampling = {{ blocks = 0 }}\n{GOOD}");
    has(&errors(&sampling), &["item.toml:1:12:", "sampling.blocks", ">= 1"]);
    let big = GOOD.replace("k = [1, 2, 3]", "k = { from = 1, to = 1000000 }");
    has(&errors(&big), &["item.toml:6:14:", "2000000 points", "at most 100000"]);
}

#[test]
fn kind_items_report_every_problem() {
    let src = r#"
kind = "dynamic"
title = "t"
seed = 1
runs = 2
x = { variable = "k", label = "m/n" }
grid = { n = [100], k = [1, 2] }
colour = "red"

[point]
m = "k * n"
rounds = 100
burn_inn = 0

[[series]]
name = "RBB"
process = { kind = "rbb", d = 1 }
statistic = "avg_fraction_empty_binz"
"#;
    let e = errors(src);
    assert_eq!(e.len(), 3, "{e:#?}");
    has(&e, &["item.toml:8:1:", "unknown field `colour`"]);
    has(&e, &["item.toml:13:", "unknown parameter `burn_inn`", "did you mean `burn_in`?"]);
    has(
        &e,
        &["unknown statistic `avg_fraction_empty_binz`", "did you mean `avg_fraction_empty_bins`?"],
    );
}

#[test]
fn kind_allocation_is_the_default_kind() {
    Experiment::parse("t/item", Path::new("item.toml"), &format!("kind = \"allocation\"\n{GOOD}"))
        .unwrap();
}

#[test]
fn every_committed_config_is_valid() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
    let items = ballast_runner::discover(&root).unwrap();
    assert!(items.len() > 20);
    for (id, path) in items {
        if let Err(e) = Experiment::from_path(&path) {
            panic!("{id}: {e}");
        }
    }
}

#[test]
fn unreadable_files_are_config_errors() {
    let dir = std::env::temp_dir().join(format!("ballast-validation-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("a.toml")).unwrap();
    match Experiment::from_path(&dir.join("a.toml")) {
        Err(Error::Config { errors, .. }) => {
            let e = errors[0].to_string();
            assert!(e.contains("a.toml") && e.contains("directory"), "{errors:?}")
        }
        other => panic!("{other:?}"),
    }
    let bad = dir.join("b.toml");
    std::fs::write(&bad, b"title = \"x\"\nseed = 1\nnotes = \"caf\xe9\"\n").unwrap();
    match Experiment::from_path(&bad) {
        Err(Error::Config { errors, .. }) => {
            let e = errors[0].to_string();
            assert!(e.contains("b.toml:3:13:") && e.contains("UTF-8"), "{errors:?}")
        }
        other => panic!("{other:?}"),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Weight laws come from the core registry: unknown laws and parameters get its messages at
/// the parameter's line and column, a law's own checks (`high > low`) too, and unit weights
/// take no parameters.
#[test]
fn weight_laws_are_the_registrys() {
    let w = |t: &str| GOOD.replace("tie_break = \"random\"", &format!("weights = {t}"));
    has(&errors(&w("{ kind = \"gamma\", shap = 2 }")), &["item.toml:16:", "shap", "shape"]);
    has(&errors(&w("{ kind = \"uniform\", low = 2, high = 1 }")), &["weights.high", "`low`"]);
    has(&errors(&w("{ kind = \"unit\", mean = 2 }")), &["mean", "unit"]);
    has(&errors(&w("{ mean = 2 }")), &["needs `kind`", "lognormal"]);
    for ok in [
        "{ kind = \"pareto\", alpha = 2.5 }",
        "{ kind = \"two_point\", low = 0.5, high = 4, p = 0.1 }",
    ] {
        Experiment::parse("t/item", Path::new("item.toml"), &w(ok)).expect(ok);
    }
}
