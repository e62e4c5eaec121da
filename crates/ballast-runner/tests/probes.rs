//! `statistic = "probes_distribution"` (or in `also`): one row per probe count (x) with the
//! fraction of the run's steps that drew it, mean over runs, equal to the core's recorded
//! histograms on the plan's seeds; the fractions sum to 1 and their mean is `probes_mean`;
//! refused where no loop records probes (delay setting).

use std::path::Path;

use ballast_core::{simulate_seeded, ProcessSpec, RunSpec, Tau};
use ballast_runner::{run_experiment, Experiment, ItemResult, Plan, RunOptions, Statistic};

const ID: &str = "test/probes";
const SEED: u64 = 21;
const RUNS: u64 = 5;

fn config(process: &str, statistic: &str, extra: &str) -> String {
    format!(
        "title = \"t\"\nseed = {SEED}\nruns = {RUNS}\n\
         x = {{ variable = \"n\" }}\ngrid = {{ n = [200] }}\npoint = {{ m = 4000 }}\n\n\
         [[series]]\nname = \"s\"\nprocess = {process}\nstatistic = \"{statistic}\"\n{extra}"
    )
}

fn run(text: &str) -> ItemResult {
    let mut o = RunOptions::new(".");
    o.progress = false;
    o.threads = 2;
    o.command = Some("test".into());
    let exp = Experiment::parse(ID, Path::new("p.toml"), text).unwrap();
    run_experiment(&exp, &o).unwrap()
}

#[test]
fn probe_rows_are_the_cores_histograms() {
    let cases = [
        (
            "{ kind = \"adaptive\", preset = \"probe_count\" }",
            ProcessSpec::Adaptive { tau: Tau::PROBE_COUNT, cap: None },
        ),
        ("{ kind = \"one_plus_beta\", beta = 0.5 }", ProcessSpec::OnePlusBeta { beta: 0.5 }),
    ];
    for (process, spec) in cases {
        let r =
            run(&config(process, "final_gap", "also = [\"probes_mean\", \"probes_distribution\"]"));
        let rows: Vec<&ballast_runner::Row> =
            r.rows.iter().filter(|r| r.statistic == Statistic::ProbesDistribution).collect();
        let spec = RunSpec { record_probes: true, ..RunSpec::new(spec, 200, 4000) };
        let hists: Vec<Vec<u64>> = (0..RUNS)
            .map(|run| {
                simulate_seeded(&spec, Plan::unit_seed(SEED, ID, 0, run)).unwrap().samples_per_step
            })
            .collect();
        let len = hists.iter().map(Vec::len).max().unwrap();
        let seen: Vec<usize> =
            (0..len).filter(|&k| hists.iter().any(|h| h.get(k).is_some_and(|&c| c > 0))).collect();
        assert_eq!(rows.iter().map(|r| r.x as usize).collect::<Vec<_>>(), seen, "{process}");
        for (row, &k) in rows.iter().zip(&seen) {
            let by_hand = hists
                .iter()
                .map(|h| h.get(k).map_or(0.0, |&c| c as f64 / h.iter().sum::<u64>() as f64))
                .sum::<f64>()
                / RUNS as f64;
            assert!((row.summary.mean - by_hand).abs() < 1e-12, "{process}: {row:?}");
            assert!(row.also);
        }
        let total: f64 = rows.iter().map(|r| r.summary.mean).sum();
        assert!((total - 1.0).abs() < 1e-9, "{total}");
        let mean: f64 = rows.iter().map(|r| r.x * r.summary.mean).sum();
        let probes_mean =
            r.rows.iter().find(|r| r.statistic == Statistic::ProbesMean).unwrap().summary.mean;
        assert!((mean - probes_mean).abs() < 1e-9, "{mean} vs {probes_mean}");
    }
    // As the series' statistic.
    let r = run(&config("{ kind = \"two_choice\" }", "probes_distribution", ""));
    assert_eq!(r.rows.len(), 1);
    assert_eq!((r.rows[0].x, r.rows[0].summary.mean, r.rows[0].also), (2.0, 1.0, false));
}

#[test]
fn probes_need_the_bin_engines_loop() {
    let text = config(
        "{ kind = \"two_choice\" }",
        "probes_distribution",
        "setting = \"delay\"\ntau = 4\n",
    );
    let e = Experiment::parse(ID, Path::new("p.toml"), &text).unwrap_err().to_string();
    assert!(e.contains("p.toml:") && e.contains("not in the delay setting"), "{e}");
    let text = config("{ kind = \"two_choice\" }", "probes_distribution", "")
        .replace("runs = 5", "runs = 5\nengine = \"levels\"");
    let e = Experiment::parse(ID, Path::new("p.toml"), &text).unwrap_err().to_string();
    assert!(e.contains("probes"), "{e}");
}
