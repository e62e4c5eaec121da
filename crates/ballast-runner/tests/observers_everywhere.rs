//! Potentials and the final-load statistics where their observers used to be skipped or
//! refused: from a start state and in the delay setting they give, run by run, the values
//! the run's own final loads give; with `equalize` (whose loops take no observer) both are
//! refused at validation; `top_k` sets how many loads `top_loads` reports.
//!
//! Deterministic checks (no statistics): each run's quadratic potential Σ (x_i − W/n)² is
//! compared with the same sum over that run's `sorted_loads` values, to 1e-9 relative.

use std::path::Path;

use ballast_runner::{run_experiment, Experiment, ItemResult, RunOptions, Statistic};

const ID: &str = "test/observers";

fn config(n: u64, m: u64, process: &str, series: &str) -> String {
    format!(
        "title = \"t\"\nseed = 77\nruns = 5\n\
         x = {{ variable = \"n\" }}\ngrid = {{ n = [{n}] }}\npoint = {{ m = {m} }}\n\n\
         [[series]]\nname = \"s\"\nprocess = {process}\n{series}"
    )
}

fn parse(text: &str) -> Result<Experiment, String> {
    Experiment::parse(ID, Path::new("p.toml"), text).map_err(|e| e.to_string())
}

fn run(text: &str) -> ItemResult {
    let mut o = RunOptions::new(".");
    o.progress = false;
    o.threads = 2;
    o.command = Some("test".into());
    run_experiment(&parse(text).unwrap(), &o).unwrap()
}

/// Per run, Σ (x_i − W/n)² of the run's sorted final loads, and the tracked potential.
fn quadratic_both_ways(r: &ItemResult) -> (Vec<f64>, Vec<f64>) {
    let ranks: Vec<&Vec<f64>> = r
        .rows
        .iter()
        .filter(|row| row.statistic == Statistic::SortedLoads)
        .map(|row| &row.values)
        .collect();
    let runs = ranks[0].len();
    let from_loads = (0..runs)
        .map(|run| {
            let loads: Vec<f64> = ranks.iter().map(|v| v[run]).collect();
            let avg = loads.iter().sum::<f64>() / loads.len() as f64;
            loads.iter().map(|x| (x - avg).powi(2)).sum()
        })
        .collect();
    let tracked = r
        .rows
        .iter()
        .find(|row| row.series.ends_with("[quadratic]"))
        .expect("a potential row")
        .values
        .clone();
    (from_loads, tracked)
}

fn assert_same(what: &str, (a, b): (Vec<f64>, Vec<f64>)) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (x, y) in a.iter().zip(&b) {
        assert!(y.is_finite(), "{what}: the potential is {y}");
        assert!(
            (x - y).abs() <= 1e-9 * x.abs().max(1.0),
            "{what}: {x} from the loads, {y} tracked"
        );
    }
}

#[test]
fn potentials_start_from_the_start_state() {
    let series =
        "statistic = \"final_gap\"\nalso = [\"sorted_loads\"]\npotentials = [\"quadratic\"]\n\
                  start = { kind = \"one_bin\", balls = 50 }\n";
    for engine in ["bins", "levels"] {
        let text = config(20, 100, "{ kind = \"two_choice\" }", series)
            .replace("runs = 5\n", &format!("runs = 5\nengine = \"{engine}\"\n"));
        let (from_loads, tracked) = quadratic_both_ways(&run(&text));
        // The start (50 balls in one bin) is still visible after 100 balls.
        assert!(from_loads.iter().all(|&q| q > 50.0), "{engine}: {from_loads:?}");
        assert_same(engine, (from_loads, tracked));
    }
}

#[test]
fn potentials_and_final_loads_in_the_delay_setting() {
    let series = "statistic = \"final_gap\"\nalso = [\"sorted_loads\", \"top_loads\"]\n\
                  potentials = [\"quadratic\"]\nsetting = \"delay\"\ntau = 50\n";
    let r = run(&config(20, 400, "{ kind = \"two_choice\" }", series));
    assert_same("delay", quadratic_both_ways(&r));
    let rule = "{ kind = \"rule\", choose = \"if(x1 < x2, 1, 2)\" }";
    let r = run(&config(20, 400, rule, series));
    assert_same("delay, rule", quadratic_both_ways(&r));
}

#[test]
fn equalize_refuses_potentials_and_final_loads_at_validation() {
    let eq = "{ kind = \"equalize\", d = 2 }";
    let e = parse(&config(20, 100, eq, "potentials = [\"quadratic\"]\n")).unwrap_err();
    assert!(e.contains("`equalize` moves balls between bins"), "{e}");
    let e = parse(&config(20, 100, eq, "statistic = \"load_distribution\"\n")).unwrap_err();
    assert!(e.contains("which the `equalize` loop does not report"), "{e}");
}

#[test]
fn top_k_sets_the_number_of_top_loads() {
    let series = "statistic = \"top_loads\"\nalso = [\"sorted_loads\"]\ntop_k = 3\n";
    let r = run(&config(20, 100, "{ kind = \"two_choice\" }", series));
    let top: Vec<&Vec<f64>> = r
        .rows
        .iter()
        .filter(|row| row.statistic == Statistic::TopLoads)
        .map(|row| &row.values)
        .collect();
    assert_eq!(top.len(), 3);
    let sorted: Vec<&Vec<f64>> = r
        .rows
        .iter()
        .filter(|row| row.statistic == Statistic::SortedLoads)
        .map(|row| &row.values)
        .collect();
    for k in 0..3 {
        assert_eq!(top[k], sorted[19 - k], "rank {}", k + 1);
    }
    let e = parse(&config(20, 100, "{ kind = \"two_choice\" }", "top_k = 3\n")).unwrap_err();
    assert!(e.contains("`top_k` applies to the statistic \"top_loads\" only"), "{e}");
    let e = parse(&config(
        20,
        100,
        "{ kind = \"two_choice\" }",
        "statistic = \"top_loads\"\ntop_k = 0\n",
    ))
    .unwrap_err();
    assert!(e.contains("`top_k` = 0: expected an integer in 1..=100000"), "{e}");
}
