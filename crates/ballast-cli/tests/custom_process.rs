//! A complete process declared outside `ballast-core`, in this one file: its rule, its level
//! law (the same rule on the sorted loads), its parameter with the range declared once, its
//! registry entry, and its tests. Once registered, it runs from a TOML string through the
//! runner, through `ballast simulate`'s code path and listing, and on both engines; its law
//! is tested against the exact law computed from its definition, and a deliberately wrong
//! variant is rejected.
//!
//! The process, "lazy heavier of two": with probability `p` the ball goes to the heavier of
//! two uniform samples (the second on a tie), otherwise to one uniform sample.
//!
//! Statistics. Every goodness-of-fit test here is Pearson's χ² at α = 0.001
//! ([`ballast_testkit::ALPHA`]) with fixed seeds. n = 3 bins, m = 6 balls from empty bins:
//! the sorted final load vector has 7 possible values (6 degrees of freedom, critical value
//! 22.46), the smallest expected count at 20 000 runs is about 75. Power: the wrong variant
//! (the coin inverted, a realistic slip: `p` read as the chance of the uniform sample) has
//! a noncentrality λ = R·Σ(q−p)²/p computed below from the two exact laws; the test asserts
//! λ ≥ 200, where a χ²(6) test at α = 0.001 has power above 0.9999, and then runs the wrong
//! variant and sees it rejected.

use ballast_core::item::{CustomRule, CustomSpec, Decision, ProcessItem};
use ballast_core::registry::{self, Args, ParamDef, ParamDefault, ParamType, ProcessDef, Settings};
use ballast_core::{sim_rng, simulate_observed, Engine, LoadState, Observer, ProcessSpec, RunSpec};
use ballast_testkit::{chi2_critical, chi2_gof};
use rand::Rng;
use std::collections::BTreeMap;
use std::sync::Once;

/// The item: everything the engines need.
#[derive(Debug)]
struct LazyHeavier {
    /// `true` for the deliberately wrong variant (the coin inverted).
    inverted: bool,
}

struct Rule {
    p: f64,
}

impl CustomRule for Rule {
    fn place(&mut self, at: &mut dyn Decision) -> usize {
        if at.rng().random_bool(self.p) {
            let (a, b) = (at.sample(), at.sample());
            if at.load(a) > at.load(b) {
                a
            } else {
                b
            }
        } else {
            at.sample()
        }
    }
}

impl ProcessItem for LazyHeavier {
    fn name(&self) -> &'static str {
        if self.inverted {
            "lazy_heavier_inverted"
        } else {
            "lazy_heavier"
        }
    }
    fn rule(&self, args: &Args) -> Box<dyn CustomRule> {
        let p = args.num("p");
        Box::new(Rule { p: if self.inverted { 1.0 - p } else { p } })
    }
    fn levels(&self) -> Result<(), String> {
        Ok(()) // reads loads of uniform samples only: bins of one level are exchangeable
    }
}

static ITEM: LazyHeavier = LazyHeavier { inverted: false };
static WRONG: LazyHeavier = LazyHeavier { inverted: true };

/// The registry entry: parameters (range and default declared once), settings, docs.
static DEF: ProcessDef = ProcessDef {
    name: "lazy_heavier",
    doc: "with probability p the heavier of two uniform samples, else one uniform sample",
    params: &[ParamDef::new(
        "p",
        ParamType::Unit,
        ParamDefault::Num(1.0),
        "probability of comparing two samples",
    )],
    ties: &[],
    settings: Settings { batched: true, delay: false, biased: true },
    unit_weights_only: false,
    build: |a| Ok(ProcessSpec::Custom(CustomSpec::new(&ITEM, a.clone()))),
    example: "",
};

fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| registry::register(&DEF).expect("registers"));
}

const N: usize = 3;
const M: u64 = 6;
const RUNS: u64 = 20_000;

/// The exact law of the sorted final loads, from the definition: a ball goes to a bin of
/// load x with probability p·(F(x)² − F(x⁻)²) + (1 − p)·(F(x) − F(x⁻)), F the fraction of
/// bins with load at most x.
fn exact_law(p: f64) -> BTreeMap<Vec<u64>, f64> {
    let mut law = BTreeMap::from([(vec![0u64; N], 1.0)]);
    for _ in 0..M {
        let mut next = BTreeMap::new();
        for (loads, q) in &law {
            let levels: std::collections::BTreeSet<u64> = loads.iter().copied().collect();
            for x in levels {
                let f = |y: u64| loads.iter().filter(|&&l| l <= y).count() as f64 / N as f64;
                let below = if x == 0 { 0.0 } else { f(x - 1) };
                let to_x = p * (f(x).powi(2) - below.powi(2)) + (1.0 - p) * (f(x) - below);
                let mut after = loads.clone();
                let i = after.iter().position(|&l| l == x).expect("a bin at level x");
                after[i] += 1;
                after.sort_unstable_by(|a, b| b.cmp(a));
                *next.entry(after).or_insert(0.0) += q * to_x;
            }
        }
        law = next;
    }
    law
}

/// Records the sorted loads at the end of a run.
#[derive(Default)]
struct Final(Vec<u64>);

impl Observer for Final {
    const PER_BALL: bool = false;
    fn on_observation<S: LoadState>(&mut self, s: &S) {
        let mut v: Vec<u64> = (0..s.n()).map(|i| s.load(i).into() as u64).collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        self.0 = v;
    }
}

/// χ² of `RUNS` runs of `process` on `engine` against the exact law at `p`.
fn chi2(process: ProcessSpec, engine: Engine, p: f64, seed: u64) -> (f64, usize) {
    let law = exact_law(p);
    let index: BTreeMap<&Vec<u64>, usize> = law.keys().zip(0..).collect();
    let mut counts = vec![0u64; law.len()];
    let spec = RunSpec::new(process, N as u64, M).engine(engine);
    for r in 0..RUNS {
        let mut seen = Final::default();
        simulate_observed(&spec, &mut sim_rng(seed + r), &mut seen).expect("runs");
        counts[index[&seen.0]] += 1;
    }
    chi2_gof(&counts, &law.values().copied().collect::<Vec<_>>())
}

fn build(def: &ProcessDef, p: f64) -> ProcessSpec {
    def.build(&[("p", registry::ParamValue::Num(p))]).expect("builds")
}

#[test]
fn its_law_on_both_engines_is_the_exact_law_and_the_wrong_variant_is_rejected() {
    register();
    let p = 0.8;
    let critical = chi2_critical(6);
    for engine in [Engine::Bins, Engine::Levels] {
        let (stat, df) = chi2(build(&DEF, p), engine, p, 1);
        assert_eq!(df, 6);
        println!("{engine:?}: χ² = {stat:.2} (critical {critical:.2})");
        assert!(stat < critical, "{engine:?}: χ² = {stat:.1} ≥ {critical:.1}");
    }
    // Power, from the exact laws: the inverted coin is far away.
    let (right, wrong) = (exact_law(p), exact_law(1.0 - p));
    let lambda: f64 =
        right.iter().map(|(k, &q)| RUNS as f64 * (wrong[k] - q).powi(2) / q).sum::<f64>();
    assert!(lambda >= 200.0, "noncentrality {lambda:.0}: the test would lack power");
    let wrong_spec = ProcessSpec::Custom(CustomSpec::new(&WRONG, args_of(&DEF, p)));
    for engine in [Engine::Bins, Engine::Levels] {
        let (stat, _) = chi2(wrong_spec.clone(), engine, p, 1);
        println!("{engine:?}, wrong variant: χ² = {stat:.1} (λ = {lambda:.0})");
        assert!(stat > critical, "{engine:?}: the wrong variant passed, χ² = {stat:.1}");
    }
}

/// The checked parameters of `def` at `p` (for the wrong variant, which is not registered).
fn args_of(def: &ProcessDef, p: f64) -> Args {
    def.list().args(&[("p", registry::ParamValue::Num(p))]).expect("checked")
}

/// The exact law of the maximum load at `p`: P(max = x) for x = 0..=M.
fn max_law(p: f64) -> Vec<f64> {
    let mut out = vec![0.0; M as usize + 1];
    for (loads, q) in exact_law(p) {
        out[loads[0] as usize] += q;
    }
    out
}

/// The χ² (α = 0.001) of a distribution of the final gap (max − M/N, an integer here) over
/// `runs` runs
/// against the exact law of the maximum.
fn gap_chi2(distribution: &BTreeMap<i64, f64>, runs: u64, p: f64) -> f64 {
    let law = max_law(p);
    let avg = (M / N as u64) as i64;
    let (mut counts, mut probs) = (Vec::new(), Vec::new());
    for (x, &q) in law.iter().enumerate().filter(|(_, &q)| q * runs as f64 >= 5.0) {
        let share = distribution.get(&(x as i64 - avg)).copied().unwrap_or(0.0);
        counts.push((share * runs as f64).round() as u64);
        probs.push(q);
    }
    let total: f64 = probs.iter().sum();
    let probs: Vec<f64> = probs.iter().map(|q| q / total).collect();
    let (stat, df) = chi2_gof(&counts, &probs);
    println!("gap distribution: χ² = {stat:.2} on {df} degrees of freedom");
    assert!(stat < chi2_critical(df), "χ² = {stat:.1} on {df} degrees of freedom");
    stat
}

#[test]
fn a_toml_config_runs_it_through_the_runner_on_both_engines() {
    register();
    for engine in ["bins", "levels"] {
        let toml = format!(
            "title = \"custom\"\nseed = 5\nruns = 40000\nengine = \"{engine}\"\n\
             x = {{ variable = \"n\", label = \"n\" }}\ny_label = \"gap\"\n\
             grid = {{ n = [{N}] }}\n[point]\nn = \"n\"\nm = {M}\n\
             [[series]]\nname = \"lazy\"\nprocess = {{ kind = \"lazy_heavier\", p = 0.8 }}\n\
             statistic = \"distribution\"\nreference = \"\"\n"
        );
        let path = std::path::Path::new("custom.toml");
        let exp = ballast_runner::Experiment::parse("demo/custom", path, &toml).expect("parses");
        let mut opts = ballast_runner::RunOptions::new("reference");
        opts.progress = false;
        let result = ballast_runner::run_experiment(&exp, &opts).expect("runs");
        let row = &result.rows[0];
        assert_eq!(row.summary.runs, 40000);
        gap_chi2(&row.summary.distribution, 40000, 0.8);
    }
    // Its declared range is checked at validation, with the config's line and column.
    let bad = "title = \"t\"\nseed = 1\nruns = 1\nx = { variable = \"n\", label = \"n\" }\n\
               y_label = \"g\"\ngrid = { n = [3] }\n[point]\nn = \"n\"\nm = 6\n[[series]]\n\
               name = \"s\"\nprocess = { kind = \"lazy_heavier\", p = 1.5 }\nreference = \"\"\n";
    let e = ballast_runner::Experiment::parse("demo/bad", std::path::Path::new("bad.toml"), bad)
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad.toml:12:") && e.contains("[0, 1]"), "{e}");
}

#[test]
fn simulate_and_list_reach_it_as_a_built_in() {
    register();
    let args = ["--process", "lazy_heavier", "--param", "p=0.8", "--n", "3", "--m", "6"];
    let runs = ["--runs", "20000", "--seed", "11"];
    let json = ballast_cli::embed::simulate(&[&args[..], &runs[..]].concat()).expect("runs");
    let dist: BTreeMap<i64, f64> = json["gap"]["distribution"]
        .as_object()
        .expect("a gap distribution")
        .iter()
        .map(|(k, v)| (k.parse().expect("an integer key"), v.as_f64().expect("a share")))
        .collect();
    gap_chi2(&dist, 20000, 0.8);
    let e =
        ballast_cli::embed::simulate(&["--process", "lazy_heavier", "--param", "q=1", "--n", "3"])
            .unwrap_err()
            .to_string();
    assert!(e.contains("unknown parameter `q`") && e.contains("p (a number in [0, 1])"), "{e}");
    let listing = ballast_cli::embed::list_text();
    assert!(listing.contains("lazy_heavier") && listing.contains(DEF.doc), "{listing}");
    assert!(registry::register(&DEF).is_err(), "a name is registered once");
}
