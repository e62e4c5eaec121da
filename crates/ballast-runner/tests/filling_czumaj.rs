//! Config kinds of the Filling processes (Los, Sauerwald, Sylvester 2022) and of Czumaj and
//! Stemann's adaptive and reallocating processes, and the statistics of the allocation path
//! (max load, its distribution, samples and balls per sample, probes, balls moved, gap / ln n,
//! `also`, `theory`, `seed_item`).

use std::path::Path;

use ballast_core::{ProcessSpec, Tau};
use ballast_runner::{run_experiment, Experiment, RunOptions, Statistic};

fn config(process: &str, statistic: &str, also: &str) -> String {
    format!(
        r#"
title = "test"
seed = 11
runs = 8
x = {{ variable = "n", log = true }}
grid = {{ n = [200, 400] }}
point = {{ m = "20 * n" }}

[[series]]
name = "S"
process = {process}
statistic = "{statistic}"
also = [{also}]
theory = "ln(ln(n)) / ln(2)"
reference = ""
"#
    )
}

fn parse(src: &str) -> Result<Experiment, String> {
    Experiment::parse("t/item", Path::new("configs/t/item.toml"), src).map_err(|e| e.to_string())
}

fn process_of(process: &str) -> ProcessSpec {
    let exp = parse(&config(process, "final_gap", "")).unwrap_or_else(|e| panic!("{e}"));
    exp.plan(false).unwrap().points[0].spec.process.clone()
}

fn err(process: &str) -> String {
    match parse(&config(process, "final_gap", "")) {
        Ok(_) => panic!("should be rejected: {process}"),
        Err(e) => e,
    }
}

fn run(src: &str) -> ballast_runner::ItemResult {
    let exp = parse(src).unwrap_or_else(|e| panic!("{e}"));
    let mut opts = RunOptions::new("reference");
    opts.progress = false;
    opts.threads = 2;
    run_experiment(&exp, &opts).unwrap()
}

#[test]
fn filling_kinds_and_defaults() {
    assert_eq!(process_of(r#"{ kind = "packing" }"#), ProcessSpec::Packing { offset: 1 });
    assert_eq!(
        process_of(r#"{ kind = "packing", offset = 0 }"#),
        ProcessSpec::Packing { offset: 0 }
    );
    assert_eq!(
        process_of(r#"{ kind = "tight_packing", balls = 3 }"#),
        ProcessSpec::TightPacking { offset: 1, balls: Some(3) }
    );
    assert_eq!(process_of(r#"{ kind = "twinning" }"#), ProcessSpec::Twinning);
    assert_eq!(process_of(r#"{ kind = "memory" }"#), ProcessSpec::Memory { d: 1, k: 1 });
    assert_eq!(
        process_of(r#"{ kind = "memory", d = 2, k = 3 }"#),
        ProcessSpec::Memory { d: 2, k: 3 }
    );
    assert_eq!(process_of(r#"{ kind = "caching" }"#), ProcessSpec::Caching { d: 1 });
    assert_eq!(
        process_of(r#"{ kind = "always_go_left", d = 2 }"#),
        ProcessSpec::AlwaysGoLeft { d: 2 }
    );
    assert_eq!(
        process_of(r#"{ kind = "relative_threshold", f = "1/2" }"#),
        ProcessSpec::RelativeThreshold { f: 0.5 }
    );
    assert_eq!(process_of(r#"{ kind = "equalize", d = 3 }"#), ProcessSpec::Equalize { d: 3 });
}

#[test]
fn adaptive_presets_and_open_form() {
    let a = |s: &str| process_of(&format!("{{ kind = \"adaptive\", {s} }}"));
    assert_eq!(
        a(r#"preset = "greedy", d = 2"#),
        ProcessSpec::Adaptive { tau: Tau::NEVER, cap: Some(2) }
    );
    assert_eq!(
        a(r#"preset = "threshold_first", d = 3, c = 2"#),
        ProcessSpec::Adaptive { tau: Tau::constant_until(2.0, 3), cap: Some(3) }
    );
    assert_eq!(
        a(r#"preset = "probe_count""#),
        ProcessSpec::Adaptive { tau: Tau::PROBE_COUNT, cap: None }
    );
    let rel = Tau { per_average: 1.0, ..Tau::PROBE_COUNT };
    assert_eq!(
        a(r#"preset = "probe_count", relative = true"#),
        ProcessSpec::Adaptive { tau: rel, cap: None }
    );
    assert_eq!(
        a(r#"tau = { base = 1.5, per_probe = 0.5, per_average = 1, until = 4 }, cap = 6"#),
        ProcessSpec::Adaptive {
            tau: Tau { base: 1.5, per_probe: 0.5, per_average: 1.0, until: Some(4), formula: None },
            cap: Some(6)
        }
    );
    assert_eq!(
        a("tau = { base = -inf }, cap = 2"),
        ProcessSpec::Adaptive { tau: Tau::NEVER, cap: Some(2) }
    );
}

#[test]
fn bad_parameters_name_the_field_and_the_allowed_values() {
    let e = err(r#"{ kind = "memory", d = 1, k = 0 }"#);
    assert!(e.contains("item.toml:") && e.contains("`k`") && e.contains("1..=1024"), "{e}");
    let e = err(r#"{ kind = "packing", offset = -1 }"#);
    assert!(e.contains("`offset`") && e.contains("0..=1000000"), "{e}");
    let e = err(r#"{ kind = "equalize", d = 2.5 }"#);
    assert!(e.contains("`d`") && e.contains("1..=1024"), "{e}");
    let e = err(r#"{ kind = "adaptive", preset = "lazy" }"#);
    assert!(e.contains("`preset`") && e.contains("greedy") && e.contains("probe_count"), "{e}");
    let e = err(r#"{ kind = "adaptive", preset = "threshold_first", d = 2 }"#);
    assert!(e.contains("needs `c`"), "{e}");
    let e = err(r#"{ kind = "adaptive", preset = "greedy", d = 2, cap = 3 }"#);
    assert!(e.contains("either `preset` or"), "{e}");
    let e = err(r#"{ kind = "adaptive", tau = { base = 0, per_probe = 0 } }"#);
    assert!(e.contains("`cap`"), "{e}");
    let e = err(r#"{ kind = "adaptive", tau = { base = 0, slope = 1 }, cap = 2 }"#);
    assert!(e.contains("slope"), "{e}");
    let e = err(r#"{ kind = "twinning", offset = 1 }"#);
    assert!(e.contains("offset"), "{e}");
}

#[test]
fn filling_statistics() {
    let r = run(&config(
        r#"{ kind = "packing" }"#,
        "final_gap",
        r#""gap_over_ln_n", "balls_per_sample", "samples_per_ball""#,
    ));
    let get = |st: Statistic, n: u64| {
        r.rows.iter().find(|row| row.statistic == st && row.n == n).map(|row| row.summary.clone())
    };
    for n in [200, 400] {
        let gap = get(Statistic::FinalGap, n).unwrap();
        let ratio = get(Statistic::GapOverLnN, n).unwrap();
        approx::assert_relative_eq!(ratio.mean, gap.mean / (n as f64).ln(), max_relative = 1e-12);
        let bps = get(Statistic::BallsPerSample, n).unwrap();
        let spb = get(Statistic::SamplesPerBall, n).unwrap();
        // Packing places at least 2 balls on an underloaded sample: strictly more than one ball
        // per sample on average.
        assert!(bps.mean > 1.2 && spb.mean < 1.0, "{bps:?} {spb:?}");
    }
    // `also` rows carry no reference and stay out of the figure; the theory column is there.
    assert!(r.rows.iter().filter(|row| row.statistic != Statistic::FinalGap).all(|row| row.also));
    let want = (200f64.ln().ln()) / 2f64.ln();
    assert!(r.rows.iter().all(|row| row.n != 200 || (row.theory.unwrap() - want).abs() < 1e-12));
    assert!(r.to_csv().lines().next().unwrap().ends_with(",theory"));
    let report = r.to_report();
    assert!(report.contains("## Table: balls_per_sample"), "{report}");
}

#[test]
fn adaptive_and_equalize_statistics() {
    // Greedy[3] through the adaptive preset: exactly 3 probes per ball, max 3.
    let r = run(&config(
        r#"{ kind = "adaptive", preset = "greedy", d = 3 }"#,
        "max_load",
        r#""max_load_distribution", "probes_mean", "probes_max""#,
    ));
    let of = |st: Statistic| r.rows.iter().filter(move |row| row.statistic == st);
    assert!(of(Statistic::ProbesMean).all(|row| row.summary.mean == 3.0));
    assert!(of(Statistic::ProbesMax).all(|row| row.summary.mean == 3.0));
    for row in of(Statistic::MaxLoad) {
        // m = 20 n: the max load is an integer above the average.
        assert!(row.summary.mean > 20.0 && row.summary.mean < 30.0, "{row:?}");
        let cells: Vec<_> = of(Statistic::MaxLoadDistribution).filter(|c| c.n == row.n).collect();
        let total: f64 = cells.iter().map(|c| c.summary.mean).sum();
        approx::assert_relative_eq!(total, 100.0, max_relative = 1e-9);
        let mean: f64 = cells.iter().map(|c| c.x * c.summary.mean / 100.0).sum();
        approx::assert_relative_eq!(mean, row.summary.mean, max_relative = 1e-9);
    }
    // Threshold-first: between 1 and 2 probes per ball, never more than the cap.
    let r = run(&config(
        r#"{ kind = "adaptive", preset = "threshold_first", d = 2, c = 2, relative = true }"#,
        "max_load",
        r#""probes_mean", "probes_max""#,
    ));
    for row in r.rows.iter().filter(|row| row.statistic == Statistic::ProbesMean) {
        assert!(row.summary.mean > 1.0 && row.summary.mean < 1.5, "{row:?}");
    }
    assert!(r
        .rows
        .iter()
        .filter(|row| row.statistic == Statistic::ProbesMax)
        .all(|row| row.summary.mean <= 2.0));
    // Equalize moves balls; One-Choice never does.
    let r = run(&config(r#"{ kind = "equalize", d = 2 }"#, "max_load", r#""moved_per_ball""#));
    assert!(r
        .rows
        .iter()
        .filter(|row| row.statistic == Statistic::MovedPerBall)
        .all(|row| row.summary.mean > 0.0));
    let r = run(&config(r#"{ kind = "one_choice" }"#, "max_load", r#""moved_per_ball""#));
    assert!(r
        .rows
        .iter()
        .filter(|row| row.statistic == Statistic::MovedPerBall)
        .all(|row| row.summary.mean == 0.0));
}

#[test]
fn seed_item_shares_the_runs() {
    let a = config(r#"{ kind = "twinning" }"#, "final_gap", "");
    let b = a
        .replace("seed = 11", "seed = 11\nseed_item = \"t/item\"")
        .replace("\"final_gap\"", "\"distribution\"");
    let ra = run(&a);
    let exp = Experiment::parse("t/other", Path::new("configs/t/other.toml"), &b).unwrap();
    let mut opts = RunOptions::new("reference");
    opts.progress = false;
    let rb = run_experiment(&exp, &opts).unwrap();
    for n in [200, 400] {
        let mean = ra.rows.iter().find(|r| r.n == n).unwrap().summary.mean;
        let implied: f64 =
            rb.rows.iter().filter(|r| r.n == n).map(|r| r.x * r.summary.mean / 100.0).sum();
        approx::assert_relative_eq!(mean, implied, max_relative = 1e-9);
    }
    assert!(rb.meta.seed_scheme.contains("t/item"));
}
