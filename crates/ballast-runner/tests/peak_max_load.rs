//! `statistic = "peak_max_load"` of the dynamic items: the largest max load of a measured
//! round, mean over runs, equal to the models' own run summaries on the plan's seeds, and
//! never below the time-averaged max load of the same runs.

use std::path::Path;

use ballast_core::sim_rng;
use ballast_dynamic::{simulate, DynamicSpec, Horizon, RbbConfig};
use ballast_runner::{run_experiment, Experiment, Plan, RunOptions};

const ID: &str = "test/peak";
const SEED: u64 = 5;
const RUNS: u64 = 4;

fn config(statistic: &str) -> String {
    format!(
        "kind = \"dynamic\"\ntitle = \"t\"\nseed = {SEED}\nruns = {RUNS}\n\
         x = {{ variable = \"k\" }}\ngrid = {{ n = [50], k = [2, 5] }}\n\
         [point]\nm = \"k * n\"\nrounds = 400\nburn_in = 50\n\n\
         [[series]]\nname = \"RBB\"\nprocess = {{ kind = \"rbb\", d = 1 }}\nstatistic = \"{statistic}\"\n"
    )
}

fn run(statistic: &str) -> ballast_runner::ItemResult {
    let mut o = RunOptions::new(".");
    o.progress = false;
    o.threads = 2;
    o.command = Some("test".into());
    let exp = Experiment::parse(ID, Path::new("d.toml"), &config(statistic)).unwrap();
    run_experiment(&exp, &o).unwrap()
}

#[test]
fn peak_max_load_is_the_models_peak_on_the_plans_seeds() {
    let peak = run("peak_max_load");
    let avg = run("avg_max_load");
    assert_eq!(peak.rows.len(), 2);
    for (point, (row, avg_row)) in peak.rows.iter().zip(&avg.rows).enumerate() {
        let spec = DynamicSpec::Rbb(RbbConfig::one_choice(50, row.m));
        let h = Horizon::new(50, 400);
        let by_hand: f64 = (0..RUNS)
            .map(|r| {
                let out = simulate(&spec, &h, &mut sim_rng(Plan::unit_seed(SEED, ID, point, r)));
                f64::from(out.unwrap().peak_max_load)
            })
            .sum::<f64>()
            / RUNS as f64;
        assert_eq!(row.summary.mean, by_hand, "{row:?}");
        assert_eq!(row.summary.runs, RUNS as usize);
        assert!(row.summary.mean >= avg_row.summary.mean, "{row:?} {avg_row:?}");
    }
}

/// `statistic = "max_load_histogram"`: one row per max-load value (x) with the fraction of
/// measured rounds at it, mean over runs, from the models' own distributions on the plan's
/// seeds; per point the fractions sum to 1 and their mean value is the time-averaged max
/// load of the same runs.
#[test]
fn max_load_histogram_is_the_models_distribution_over_rounds() {
    let hist = run("max_load_histogram");
    let avg = run("avg_max_load");
    for (point, avg_row) in avg.rows.iter().enumerate() {
        let rows: Vec<&ballast_runner::Row> =
            hist.rows.iter().filter(|r| r.m == avg_row.m).collect();
        let spec = DynamicSpec::Rbb(RbbConfig::one_choice(50, avg_row.m));
        let h = Horizon::new(50, 400);
        let outs: Vec<_> = (0..RUNS)
            .map(|r| {
                simulate(&spec, &h, &mut sim_rng(Plan::unit_seed(SEED, ID, point, r))).unwrap()
            })
            .collect();
        let mut loads: Vec<u32> =
            outs.iter().flat_map(|o| o.max_load_distribution.iter().map(|p| p.0)).collect();
        loads.sort_unstable();
        loads.dedup();
        assert_eq!(
            rows.iter().map(|r| r.x).collect::<Vec<_>>(),
            loads.iter().map(|&l| f64::from(l)).collect::<Vec<_>>()
        );
        for (row, &load) in rows.iter().zip(&loads) {
            let by_hand = outs
                .iter()
                .map(|o| {
                    let c = o.max_load_distribution.iter().find(|p| p.0 == load).map_or(0, |p| p.1);
                    c as f64 / 400.0
                })
                .sum::<f64>()
                / RUNS as f64;
            assert!((row.summary.mean - by_hand).abs() < 1e-12, "{row:?}");
            // The grid (with k, the x variable of the item) stays in the row's group.
            assert!(row.group.iter().any(|(k, _)| k == "k"), "{row:?}");
        }
        let total: f64 = rows.iter().map(|r| r.summary.mean).sum();
        assert!((total - 1.0).abs() < 1e-9, "{total}");
        let mean: f64 = rows.iter().map(|r| r.x * r.summary.mean).sum();
        assert!((mean - avg_row.summary.mean).abs() < 1e-9, "{mean} vs {:?}", avg_row.summary);
    }
}
