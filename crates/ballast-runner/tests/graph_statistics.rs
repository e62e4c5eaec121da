//! The statistics of graphical series (`kind = "graph"`): `final_gap`, `max_gap`,
//! `max_load`, `samples_per_ball` and the `potentials` rows of one series come from the same
//! runs, and equal the graph run by hand on the plan's seeds (the topology from
//! `derive_seed(seed, [hash_str(seed item), point, GRAPH_STREAM])`, run r from
//! `Plan::unit_seed`); a wiring on another point's seeds gives other values. Topologies
//! written as a table, named or positional shorthand build the same graph; unknown
//! parameters are refused at their place.

use std::path::Path;

use ballast_core::rng::hash_str;
use ballast_core::{derive_seed, sim_rng, ProcessSpec, RunSpec};
use ballast_graph::{GraphKind, GraphOptions, GRAPH_STREAM};
use ballast_potential::{PotentialSpec, Potentials};
use ballast_runner::{run_experiment, Experiment, ItemResult, Plan, RunOptions, Statistic};

const ID: &str = "test/graph";
const SEED: u64 = 9;
const RUNS: u64 = 5;

fn config(graph: &str, extra: &str) -> String {
    format!(
        "kind = \"graph\"\ntitle = \"t\"\nseed = {SEED}\nruns = {RUNS}\n{extra}\
         x = {{ variable = \"n\" }}\ngrid = {{ n = [100, 144] }}\n\
         [point]\nm = \"20 * n\"\nobserve_every = 250\n\n\
         [[series]]\nname = \"s\"\ngraph = {graph}\nprocess = {{ kind = \"two_choice\" }}\n\
         statistic = \"final_gap\"\nalso = [\"max_gap\", \"max_load\", \"samples_per_ball\"]\n\
         potentials = [\"quadratic\"]\n"
    )
}

fn run(text: &str) -> ItemResult {
    let mut o = RunOptions::new(".");
    o.progress = false;
    o.threads = 2;
    o.command = Some("test".into());
    let exp = Experiment::parse(ID, Path::new("g.toml"), text).unwrap();
    run_experiment(&exp, &o).unwrap()
}

/// Means over runs of (final gap, max gap, max load, samples per ball, quadratic) at `n`,
/// with the topology of point `graph_point` and the runs of point `run_point` of `item`.
fn by_hand(item: &str, n: usize, graph_point: u64, run_point: usize) -> [f64; 5] {
    let kind: GraphKind = "regular:3".parse().unwrap();
    let mut rng = sim_rng(derive_seed(SEED, &[hash_str(item), graph_point, GRAPH_STREAM]));
    let g = kind.build(Some(n), &mut rng).unwrap();
    let mut spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, n as u64, 20 * n as u64);
    spec.observe_every = Some(250);
    let pots = [PotentialSpec::parse("quadratic").unwrap()];
    let mut sums = [0.0; 5];
    for r in 0..RUNS {
        let mut tracker = Potentials::new(&pots).unwrap();
        let mut rng = sim_rng(Plan::unit_seed(SEED, item, run_point, r));
        let out = g.simulate_observed(&spec, &GraphOptions::default(), &mut rng, &mut tracker);
        let out = out.unwrap();
        let v = [
            out.final_gap,
            out.max_gap,
            out.max_load,
            out.samples as f64 / out.balls as f64,
            tracker.values()[0],
        ];
        for (s, x) in sums.iter_mut().zip(v) {
            *s += x / RUNS as f64;
        }
    }
    sums
}

fn row_values(result: &ItemResult, n: u64) -> [f64; 5] {
    let get = |series: &str, m: Statistic| {
        let row = result
            .rows
            .iter()
            .find(|r| r.n == n && r.series == series && r.statistic == m)
            .unwrap_or_else(|| panic!("{series} {m:?} at {n}: {:?}", result.rows));
        row.summary.mean
    };
    [
        get("s", Statistic::FinalGap),
        get("s", Statistic::MaxGap),
        get("s", Statistic::MaxLoad),
        get("s", Statistic::SamplesPerBall),
        get("s [quadratic]", Statistic::Potential),
    ]
}

fn close(a: [f64; 5], b: [f64; 5]) -> bool {
    a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-9 * y.abs().max(1.0))
}

#[test]
fn graphical_statistics_are_the_graph_runs_on_the_plans_seeds() {
    let result = run(&config("\"regular:3\"", ""));
    // One main row per point, the rest `also` (left out of the figure).
    assert_eq!(result.rows.iter().filter(|r| !r.also).count(), 2);
    assert_eq!(result.rows.len(), 10);
    assert_eq!(result.graphs.len(), 2);
    assert_eq!((result.graphs[1].n_vertices, result.graphs[1].n_edges), (144, 216));
    for (point, n) in [(0usize, 100usize), (1, 144)] {
        let ours = row_values(&result, n as u64);
        assert!(close(ours, by_hand(ID, n, point as u64, point)), "{ours:?}");
        assert!(ours[1] >= ours[0] && ours[3] == 2.0, "{ours:?}");
        // A wiring on the other point's run seeds gives other values.
        let wrong = by_hand(ID, n, point as u64, 1 - point);
        assert!(!close(ours, wrong), "{ours:?} {wrong:?}");
    }
    // With a seed item, the topologies and the runs derive from it.
    let shared = run(&config("\"regular:3\"", "seed_item = \"other\"\n"));
    let ours = row_values(&shared, 100);
    assert!(close(ours, by_hand("other", 100, 0, 0)), "{ours:?}");
    // The named shorthand and a table name the same topology: the same rows.
    for graph in [
        "\"regular:d=3\"",
        "{ kind = \"regular\", d = 3 }",
        "{ kind = \"regular\", d = \"2 + 1\" }",
    ] {
        let again = run(&config(graph, ""));
        let same = |r: &ItemResult| r.rows.iter().map(|r| r.summary.mean).collect::<Vec<_>>();
        assert_eq!(same(&again), same(&result), "{graph}");
    }
}

#[test]
fn graphical_series_options_are_checked_at_their_place() {
    let parse = |text: &str| {
        Experiment::parse(ID, Path::new("g.toml"), text).map(|_| ()).map_err(|e| e.to_string())
    };
    let cases = [
        (config("{ kind = \"regular\", dd = 3 }", ""), "g.toml:13:29:", "did you mean `d`"),
        (config("\"regular:dd=3\"", ""), "g.toml:13:9:", "unknown parameter `dd` for topology"),
        (config("{ kind = \"regularr\", d = 3 }", ""), "g.toml:13:18:", "did you mean `regular`"),
        (config("\"regular:3\"", "").replace("\"max_load\"", "\"avg_max_load\""), ":", "`also`"),
        (config("\"regular:3\"", "").replace("\"quadratic\"", "\"cubic\""), ":", "`potentials`"),
        (
            config("\"regular:3\"", "").replace("\"two_choice\"", "\"three_choice\""),
            "g.toml:11:1:",
            "unsupported on graphs: process `d_choice` with d = 3",
        ),
        (
            config("\"regular:3\"", "")
                .replace("statistic =", "tie_break = \"frist\"\nstatistic ="),
            "g.toml:15:13:",
            "did you mean `first`",
        ),
    ];
    for (text, place, needle) in cases {
        let e = parse(&text).unwrap_err();
        assert!(e.contains(place) && e.contains(needle), "{needle}: {e}");
    }
    // Fields a kind does not read are refused, not ignored.
    let dynamic =
        "kind = \"dynamic\"\ntitle = \"t\"\nseed = 1\nruns = 2\nx = { variable = \"n\" }\n\
                   grid = { n = [10] }\npoint = { m = 20, rounds = 10 }\n[[series]]\nname = \"r\"\n\
                   process = { kind = \"rbb\" }\ngraph = \"cycle\"\nstatistic = \"avg_max_load\"\n";
    let e = parse(dynamic).unwrap_err();
    assert!(
        e.contains("g.toml:11:1:") && e.contains("`graph` is not read by dynamic items"),
        "{e}"
    );
}
