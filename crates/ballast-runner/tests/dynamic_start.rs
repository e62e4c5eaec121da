//! `start = { kind = … }` on the series of dynamic items: the runs are the models' own from
//! that start on the plan's seeds; a start the model cannot take (RBB: not m balls) and a
//! start on other item kinds are refused at their place in the file; without `start` the
//! runs are those of before (the same as an explicit uniform load vector).

use std::path::Path;

use ballast_core::{sim_rng, Start};
use ballast_dynamic::{simulate, DynamicSpec, Horizon, RbbConfig};
use ballast_runner::{run_experiment, Experiment, Plan, RunOptions};

const ID: &str = "test/dynamic_start";
const SEED: u64 = 12;
const RUNS: u64 = 3;

fn config(statistic: &str, start: &str) -> String {
    format!(
        "kind = \"dynamic\"\ntitle = \"t\"\nseed = {SEED}\nruns = {RUNS}\n\
         x = {{ variable = \"n\" }}\ngrid = {{ n = [40] }}\n\
         [point]\nm = 80\nrounds = 300\n\n\
         [[series]]\nname = \"RBB\"\nprocess = {{ kind = \"rbb\", d = 1 }}\nstatistic = \"{statistic}\"\n{start}"
    )
}

fn run(text: &str) -> ballast_runner::ItemResult {
    let mut o = RunOptions::new(".");
    o.progress = false;
    o.threads = 2;
    o.command = Some("test".into());
    let exp = Experiment::parse(ID, Path::new("d.toml"), text).unwrap();
    run_experiment(&exp, &o).unwrap()
}

fn by_hand(start: Option<Start>, peak: bool) -> f64 {
    let spec = DynamicSpec::Rbb(RbbConfig::one_choice(40, 80)).with_start(start);
    let h = Horizon::new(0, 300);
    (0..RUNS)
        .map(|r| {
            let out = simulate(&spec, &h, &mut sim_rng(Plan::unit_seed(SEED, ID, 0, r))).unwrap();
            if peak {
                f64::from(out.peak_max_load)
            } else {
                out.max_load.mean
            }
        })
        .sum::<f64>()
        / RUNS as f64
}

#[test]
fn dynamic_runs_start_where_the_series_says() {
    let one_bin = "start = { kind = \"one_bin\", balls = 80 }";
    let peak = run(&config("peak_max_load", one_bin));
    // The peak is the first round's: 79 or 80 balls in bin 0.
    assert_eq!(peak.rows[0].summary.mean, by_hand(Some(Start::OneBin { balls: 80 }), true));
    assert!(peak.rows[0].summary.mean >= 79.0, "{:?}", peak.rows[0]);
    let avg = run(&config("avg_max_load", one_bin));
    let got = avg.rows[0].summary.mean;
    let want = by_hand(Some(Start::OneBin { balls: 80 }), false);
    assert!((got - want).abs() <= 1e-12 * want, "{got} vs {want}");
    // Without a start: the uniform load vector, as before (and as given explicitly).
    let plain = run(&config("avg_max_load", ""));
    assert_eq!(plain.rows[0].summary.mean, by_hand(None, false));
    let uniform = run(&config("avg_max_load", "start = { kind = \"uniform\", k = 2 }"));
    assert_eq!(uniform.rows[0].summary.mean, plain.rows[0].summary.mean);
    assert!(got > plain.rows[0].summary.mean, "recovery from one bin raises the average");
}

#[test]
fn starts_that_do_not_fit_are_refused_at_their_place() {
    let text = config("avg_max_load", "start = { kind = \"one_bin\", balls = 50 }");
    let e = Experiment::parse(ID, Path::new("d.toml"), &text).unwrap_err().to_string();
    assert!(e.contains("d.toml:") && e.contains("exactly m balls"), "{e}");
    let text = config("avg_max_load", "start = { kind = \"one_bn\", balls = 80 }");
    let e = Experiment::parse(ID, Path::new("d.toml"), &text).unwrap_err().to_string();
    assert!(e.contains("did you mean `one_bin`"), "{e}");
    let graph = "kind = \"graph\"\ntitle = \"t\"\nseed = 1\nruns = 1\nx = { variable = \"n\" }\n\
                 grid = { n = [8] }\npoint = { m = 16 }\n\n[[series]]\nname = \"g\"\n\
                 graph = \"cycle\"\nprocess = { kind = \"two_choice\" }\nstatistic = \"final_gap\"\n\
                 start = { kind = \"uniform\", k = 1 }\n";
    let e = Experiment::parse(ID, Path::new("g.toml"), graph).unwrap_err().to_string();
    assert!(e.contains("`start` applies to allocation series and dynamic items"), "{e}");
}
