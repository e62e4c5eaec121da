//! The catalogue options of configs: `formula_threshold`'s per-ball formula (passed to the
//! core as text, compiled there), `k_threshold`'s thresholds as formulas in the point's
//! variables or as one formula in the run's history (`threshold` with `k`), and
//! `replacement = false` on the two-sample processes; each builds the core's
//! spec, and bad formulas are refused at their line and column.

use std::path::Path;

use ballast_core::registry::{self, ParamValue};
use ballast_core::ProcessSpec;
use ballast_runner::{Error, Experiment};

const SRC: &str = r#"
title = "thinning formulas"
seed = 1
runs = 2
x = { variable = "n", label = "n" }
grid = { n = [10, 100] }

[point]
m = "10 * n"

[[series]]
name = "time threshold"
process = { kind = "formula_threshold", f = "avg + sqrt(ln(n)) + t/n/100" }

[[series]]
name = "constant"
process = { kind = "formula_threshold", f = 3 }

[[series]]
name = "k"
process = { kind = "k_threshold", f = ["-sqrt(ln(n))", 0, "sqrt(ln(n))"], replacement = false }

[[series]]
name = "beta"
process = { kind = "one_plus_beta", beta = 0.5, replacement = false }

[[series]]
name = "k history"
process = { kind = "k_threshold", k = 2, threshold = "avg + if(t < n, 0, j)" }
"#;

fn build(kind: &str, given: &[(&str, ParamValue)]) -> ProcessSpec {
    registry::find(kind).unwrap().build(given).unwrap()
}

#[test]
fn configs_build_the_cores_specs() {
    let e = Experiment::parse("t/item", Path::new("item.toml"), SRC).expect("valid");
    let plan = e.plan(false).unwrap();
    assert_eq!(plan.points.len(), 10);
    for p in &plan.points {
        let n = p.n as f64;
        let want = match p.series {
            0 => build(
                "formula_threshold",
                &[("f", ParamValue::Text("avg + sqrt(ln(n)) + t/n/100".into()))],
            ),
            1 => build("threshold", &[("f", ParamValue::Num(3.0))]),
            2 => {
                let r = n.ln().sqrt();
                build(
                    "k_threshold",
                    &[
                        ("f", ParamValue::List(vec![-r, 0.0, r])),
                        ("replacement", ParamValue::Bool(false)),
                    ],
                )
            }
            3 => ProcessSpec::OnePlusBeta { beta: 0.5 }.without_replacement(),
            _ => build(
                "k_threshold",
                &[
                    ("k", ParamValue::Num(2.0)),
                    ("threshold", ParamValue::Text("avg + if(t < n, 0, j)".into())),
                ],
            ),
        };
        if p.series == 1 {
            // A plain number is the constant formula: the same draws as `threshold`.
            let ProcessSpec::FormulaThreshold { f } = &p.spec.process else { panic!() };
            assert_eq!(f.source(), "3.0");
            assert!(matches!(want, ProcessSpec::Threshold { f } if f == 3.0));
        } else {
            assert_eq!(p.spec.process, want, "series {}", p.series);
        }
    }
}

fn errors(src: &str) -> Vec<String> {
    match Experiment::parse("t/item", Path::new("item.toml"), src) {
        Err(Error::Config { errors, .. }) => errors.iter().map(ToString::to_string).collect(),
        Err(e) => panic!("not a config error: {e}"),
        Ok(_) => panic!("config should be rejected:\n{src}"),
    }
}

#[test]
fn bad_formulas_and_options_are_located() {
    let src = SRC.replace("t/n/100", "t/q");
    let e = errors(&src);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(e[0].contains("item.toml:13:"), "{e:#?}");
    assert!(e[0].contains("unknown variable `q`") && e[0].contains("t, n, avg"), "{e:#?}");
    // Grid variables are not per-ball variables.
    let e = errors(&SRC.replace("t/n/100", "m"));
    assert!(e[0].contains("unknown variable `m`"), "{e:#?}");
    // replacement on a process that does not take it.
    let e = errors(&SRC.replace("f = 3 }", "f = 3, replacement = false }"));
    assert!(e[0].contains("item.toml:17:") && e[0].contains("unknown parameter"), "{e:#?}");
    // k_threshold's history formula: an unknown variable at its line, a missing `k` named.
    let e = errors(&SRC.replace("if(t < n, 0, j)", "if(t < n, 0, q)"));
    assert!(e[0].contains("item.toml:29:") && e[0].contains("unknown variable `q`"), "{e:#?}");
    let e = errors(&SRC.replace("k = 2, threshold", "threshold"));
    assert!(e[0].contains("item.toml:29:") && e[0].contains("needs `k`"), "{e:#?}");
    // Batched runs take the formula (t and avg frozen at the batch start).
    let batched = SRC.replace("m = \"10 * n\"", "m = \"10 * n\"\nb = \"n\"");
    Experiment::parse("t/item", Path::new("item.toml"), &batched).expect("batched is valid");
}
