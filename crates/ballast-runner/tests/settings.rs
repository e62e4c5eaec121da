//! Settings from a config: `setting = "delay"` with `tau` (series or `[point]`) and
//! `delay_mode` runs the core's delay loop with the seeds of the plan, and every misuse is
//! refused at validation with its place in the file; legal but degenerate settings (batched
//! Memory) are warnings of the plan and of the report.

use std::path::{Path, PathBuf};

use ballast_core::delay::DelayMode;
use ballast_core::{simulate_seeded, ProcessSpec, RunSpec, Setting};
use ballast_runner::{run_experiment, Experiment, Plan, RunOptions};

fn opts() -> RunOptions {
    let dir: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reference");
    let mut o = RunOptions::new(dir);
    o.threads = 2;
    o.progress = false;
    o
}

fn parse(src: &str) -> Result<Experiment, String> {
    Experiment::parse("test/delay", Path::new("delay.toml"), src).map_err(|e| e.to_string())
}

const DELAY: &str = r#"
title = "delay"
seed = 7
runs = 4
x = { variable = "t", label = "tau" }
grid = { t = [1, 200] }
point = { n = 100, m = 2000, tau = "t" }

[[series]]
name = "Two-Choice, adversarial delay"
process = { kind = "two_choice" }
setting = "delay"
delay_mode = "adversarial"
statistic = "final_gap"
"#;

#[test]
fn a_delay_series_runs_the_core_delay_loop_with_the_plan_seeds() {
    let exp = parse(DELAY).unwrap();
    let plan = exp.plan(false).unwrap();
    let result = run_experiment(&exp, &opts()).unwrap();
    assert_eq!(result.rows.len(), 2);
    for (pi, (point, row)) in plan.points.iter().zip(&result.rows).enumerate() {
        let tau = point.grid[0].1 as u64;
        let spec = RunSpec {
            setting: Setting::Delay { tau, mode: DelayMode::Adversarial },
            ..RunSpec::new(ProcessSpec::DChoice { d: 2 }, 100, 2000)
        };
        assert_eq!(point.spec.setting, spec.setting);
        let gaps: Vec<f64> = (0..4)
            .map(|r| simulate_seeded(&spec, Plan::unit_seed(7, "test/delay", pi, r)).unwrap())
            .map(|o| o.final_gap)
            .collect();
        let mean = gaps.iter().sum::<f64>() / 4.0;
        assert!(
            (row.summary.mean - mean).abs() < 1e-12,
            "tau {tau}: {} vs {mean}",
            row.summary.mean
        );
    }
    // An adversarial window of 2n steps is far worse than current loads.
    assert!(result.rows[1].summary.mean > result.rows[0].summary.mean + 1.0, "{:?}", result.rows);
}

#[test]
fn delay_misuse_is_refused_where_it_was_written() {
    let cases: &[(&str, &str, &[&str])] = &[
        // `tau` without the delay setting.
        ("setting = \"delay\"\n", "", &["delay.toml:7:", "`tau`", "setting = \"delay\""]),
        // The delay setting without `tau`.
        (", tau = \"t\"", "", &["needs `tau`"]),
        // An unknown mode, with the nearest name.
        (
            "\"adversarial\"",
            "\"adverserial\"",
            &[
                "delay.toml:13:14:",
                "`delay_mode`",
                "random, adversarial",
                "did you mean `adversarial`",
            ],
        ),
        // A process the delay loop cannot run.
        (
            "kind = \"two_choice\"",
            "kind = \"quantile\", delta = 0.5",
            &["does not run in the delay setting"],
        ),
    ];
    for (from, to, needles) in cases {
        let src = DELAY.replace(from, to);
        assert_ne!(src, DELAY, "{from}");
        let err = parse(&src).expect_err(&src);
        for needle in *needles {
            assert!(err.contains(needle), "`{needle}` not in:\n{err}");
        }
    }
}

/// A legal but degenerate combination is a warning of the plan and a section of the report;
/// a config without one has neither.
#[test]
fn degenerate_combinations_are_listed_in_the_report() {
    let frozen = r#"
title = "frozen"
seed = 1
runs = 2
x = { variable = "n" }
grid = { n = [50] }
point = { b = 50, m = 500 }

[[series]]
name = "Memory"
process = { kind = "memory", d = 1, k = 1 }
"#;
    let exp = parse(frozen).unwrap();
    let result = run_experiment(&exp, &opts()).unwrap();
    assert_eq!(result.warnings.len(), 1, "{:?}", result.warnings);
    assert!(result.warnings[0].contains("batched memory"), "{:?}", result.warnings);
    let report = result.to_report();
    assert!(report.contains("## Warnings\n\n- series `Memory`: batched memory"), "{report}");
    let plain = run_experiment(&parse(DELAY).unwrap(), &opts()).unwrap();
    assert!(plain.warnings.is_empty() && !plain.to_report().contains("## Warnings"));
}

/// Dynamic items read their models through the model registry: an unknown parameter gets
/// the registry's message, with the nearest name, at validation.
#[test]
fn dynamic_models_are_checked_by_their_registry() {
    let src = r#"
kind = "dynamic"
title = "rbb"
seed = 1
runs = 2
x = { variable = "k" }
grid = { k = [1] }
point = { n = 20, m = "k * n", rounds = 50 }

[[series]]
name = "RBB"
process = { kind = "rbb", dd = 2 }
statistic = "avg_max_load"
"#;
    let err = parse(src).unwrap_err();
    assert!(err.contains("unknown parameter `dd` for model `rbb`; did you mean `d`?"), "{err}");
    let err = parse(&src.replace("kind = \"rbb\", dd = 2", "kind = \"rbbb\"")).unwrap_err();
    assert!(err.contains("unknown model `rbbb`; did you mean `rbb`?"), "{err}");
    let exp = parse(&src.replace("dd = 2", "d = \"1 + k\"")).unwrap();
    assert_eq!(run_experiment(&exp, &opts()).unwrap().rows.len(), 1);
}
