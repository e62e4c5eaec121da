//! The floor table: ns per ball of the bin and level engines beside the floor loop, from one
//! run (see `ballast_benches::floor`). Run it through `cargo xtask bench --floor`, or
//! directly: `cargo run --release -p ballast-benches --bin floor -- [options]`.
//!
//! Options: `--big` adds n = 10⁷ and 10⁸ (minutes, 400 MB); `--n 1000,10000` replaces the
//! sizes; `--only two_choice` keeps the cases whose label contains the word, `--only
//! packing,memory` those containing any of the words (the floor rows always run); engines
//! that cannot run a case skip it; `--engine bins|levels` keeps one engine; `--reference` adds rows
//! `bins-ref`, the bin engine without its fast paths (`simulate_ball_by_ball`: the
//! straightforward loop the kernels are tested against), and `levels-ref`, the level
//! engine ball by ball without chunks (of the engines `--engine` keeps), to compare in one
//! run, and for the
//! cases timed in whole runs (`equalize`, m = n and 100n: a timed run is a number of complete
//! runs) also `levels-ref`, the level engine's reference loop; `--reps R` (default 5) timed runs
//! per row, the median is reported; `--target-ms T` (default 150) the wall time each run
//! aims at (m is calibrated from pilot runs, rounded to whole batches); `--m-per-n R` runs
//! the engines with exactly m = R·n balls instead (the heavily loaded regime, e.g. R = 100
//! for `configs/czumaj97/adaptive`; the floor rows stay calibrated); `--out FILE` the
//! CSV (default `<target>/bench/floor.csv`, next to the binary's profile directory).
//!
//! Every timed run of a row follows a run of the floor loop (about a third as long), and the
//! ratio column is the median of the per-run ratios: on a shared machine a busy phase slows
//! both runs of a pair, so the ratio moves much less than the raw times. Each case's own
//! floor (`ballast_benches::floor::OwnFloor`: the random numbers its law needs) is a row of
//! its own at each n, timed the same way; the last column, the engine's ratio to its own
//! floor, is the engine row's ratio divided by that floor row's ratio.
//!
//! `--dynamic` measures the round-based models instead (`ballast_benches::floor::dynamic_cases`,
//! n = 10² … 10⁵ unless `--n`): ns per throw (a re-thrown ball, an arrival, a delete-insert
//! step) of `rounds` rounds of a warmed-up clone through `ballast_dynamic::simulate_process`,
//! paired with `floor_loop_one` (one bounded index per throw); `--reference` adds rows
//! `list-ref`, the models' straightforward reference loops (`Rbb::reference`,
//! `LeakyBins::reference`). One-Choice RBB also gets a row `levels-occ`: the same
//! warmed-up state as a level histogram, each round an occupancy step
//! (`ballast_benches::rbb_levels`, a measurement, not a route). Its CSV defaults to
//! `<target>/bench/floor_dynamic.csv`.
//!
//! The Markdown table goes to stdout, progress to stderr.

use std::hint::black_box;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use ballast_benches::floor::{
    dynamic_cases, floor_cases, floor_loop, floor_loop_one, floor_loop_one_word, own_floor_loop,
    runs_on, DynProcess, DynamicModel, OwnFloor, DYNAMIC_SIZES, FLOOR_BIG_SIZES, FLOOR_SIZES,
    MAX_WHOLE_RUN_BALLS,
};
use ballast_benches::rbb_levels::RbbOnLevels;
use ballast_core::{sim_rng, simulate_ball_by_ball, simulate_seeded, Engine};

/// A result whose error is a message for the user.
type Res<T> = Result<T, String>;

fn fail<T>(msg: impl Into<String>) -> Res<T> {
    Err(msg.into())
}

struct Options {
    sizes: Vec<u64>,
    only: Option<String>,
    engines: Vec<Engine>,
    reps: usize,
    target_ms: f64,
    out: PathBuf,
    reference: bool,
    dynamic: bool,
    /// `--m-per-n R`: engine runs of exactly m = R·n balls instead of calibrated ones.
    m_per_n: Option<u64>,
}

fn parse_n(s: &str) -> Res<u64> {
    let v: f64 = s.trim().parse().map_err(|_| format!("--n: `{s}` is not a number"))?;
    if !(1.0..=4.0e9).contains(&v) || v.fract() != 0.0 {
        return fail(format!("--n: `{s}` is not a bin count in 1..=4e9"));
    }
    Ok(v as u64)
}

fn default_out() -> PathBuf {
    // <target>/<profile>/floor → <target>/bench/floor.csv
    std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().and_then(|d| d.parent()).map(|t| t.join("bench")))
        .unwrap_or_else(|| PathBuf::from("target/bench"))
        .join("floor.csv")
}

fn parse_args() -> Res<Options> {
    let mut o = Options {
        sizes: FLOOR_SIZES.to_vec(),
        only: None,
        engines: vec![Engine::Bins, Engine::Levels],
        reps: 5,
        target_ms: 150.0,
        out: default_out(),
        reference: false,
        dynamic: false,
        m_per_n: None,
    };
    let mut big = false;
    let mut sizes_given = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--big" => big = true,
            "--reference" => o.reference = true,
            "--dynamic" => o.dynamic = true,
            "--n" => {
                o.sizes = value()?.split(',').map(parse_n).collect::<Res<_>>()?;
                sizes_given = true;
            }
            "--only" => o.only = Some(value()?),
            "--engine" => {
                o.engines = match value()?.as_str() {
                    "bins" => vec![Engine::Bins],
                    "levels" => vec![Engine::Levels],
                    "both" => vec![Engine::Bins, Engine::Levels],
                    e => return fail(format!("--engine: `{e}` (bins, levels or both)")),
                }
            }
            "--reps" => {
                o.reps = value()?.parse().map_err(|_| "--reps: not a count".to_string())?;
                if o.reps == 0 {
                    return fail("--reps: at least 1");
                }
            }
            "--target-ms" => {
                o.target_ms =
                    value()?.parse().map_err(|_| "--target-ms: not a number".to_string())?;
                if o.target_ms.is_nan() || o.target_ms <= 0.0 {
                    return fail("--target-ms: positive");
                }
            }
            "--out" => o.out = PathBuf::from(value()?),
            "--m-per-n" => {
                let r: u64 = value()?.parse().map_err(|_| "--m-per-n: not a count".to_string())?;
                if r == 0 {
                    return fail("--m-per-n: at least 1");
                }
                o.m_per_n = Some(r);
            }
            "-h" | "--help" => {
                println!(
                    "floor [--dynamic] [--big] [--n N,N..] [--only WORD] \
                     [--engine bins|levels|both] [--reference] [--reps R] [--target-ms T] \
                     [--m-per-n R] [--out FILE.csv]"
                );
                std::process::exit(0);
            }
            _ => return fail(format!("unknown argument `{a}` (try --help)")),
        }
    }
    if o.dynamic {
        if big {
            return fail("--dynamic does not take --big");
        }
        if !sizes_given {
            o.sizes = DYNAMIC_SIZES.to_vec();
        }
        if o.out == default_out() {
            o.out.set_file_name("floor_dynamic.csv");
        }
    }
    if big {
        o.sizes.extend(FLOOR_BIG_SIZES);
    }
    if o.dynamic && o.m_per_n.is_some() {
        return fail("--dynamic does not take --m-per-n");
    }
    Ok(o)
}

/// One measured row.
struct Row {
    n: u64,
    case: String,
    engine: &'static str,
    m: u64,
    median_ns: f64,
    min_ns: f64,
    floor_ns: f64,
    ratio: f64,
    /// Engine rows of a case with an [`OwnFloor`]: the ratio to it (the row's ratio divided
    /// by the own floor row's ratio to the two-index floor, both medians of paired runs).
    own_ratio: Option<f64>,
    /// Mean units (balls or throws) of a timed run.
    units: f64,
}

/// Seconds of one call of `run(m, seed)`, and the units (balls or throws) it simulated.
fn time(run: &mut impl FnMut(u64, u64) -> u64, m: u64, seed: u64) -> (f64, u64) {
    let t = Instant::now();
    let units = run(m, seed);
    (t.elapsed().as_secs_f64(), units.max(1))
}

/// Calibrates m (a multiple of `granule`) so that one run takes about `target_ms`: from
/// `pilot` balls, m is rescaled by target ÷ time until a run takes between half and twice
/// the target (at most 5 tries; per-run fixed costs make the first estimate short).
fn calibrate(
    run: &mut impl FnMut(u64, u64) -> u64,
    pilot: u64,
    granule: u64,
    target_ms: f64,
) -> u64 {
    let round = |m: f64| ((m / granule as f64).round() as u64).max(1) * granule;
    let target = target_ms * 1e-3;
    let mut m = round(pilot as f64);
    for _ in 0..5 {
        let t = time(run, m, 0).0.max(1e-9);
        if (0.5 * target..=2.0 * target).contains(&t) {
            break;
        }
        let next = round(m as f64 * target / t);
        if next == m {
            break;
        }
        m = next;
    }
    m
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let k = v.len();
    if k % 2 == 1 {
        v[k / 2]
    } else {
        0.5 * (v[k / 2 - 1] + v[k / 2])
    }
}

/// Times `reps` runs of `m` balls (seeds 1..=reps), each right after a run of the floor loop
/// (`floor_m` balls), so that every engine time has a floor time from the same moment: the
/// machine may be shared, and a slow phase then slows both. Fills a [`Row`]'s timings:
/// median and minimum ns per unit, median floor ns, median ratio, mean units per run.
fn paired(
    run: &mut impl FnMut(u64, u64) -> u64,
    m: u64,
    floor: &mut impl FnMut(u64, u64) -> u64,
    floor_m: u64,
    reps: usize,
) -> (f64, f64, f64, f64, f64) {
    let (mut ns, mut floor_ns, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    let mut units_sum = 0u64;
    for seed in 1..=reps as u64 {
        let (tf, uf) = time(floor, floor_m, seed);
        let f = tf * 1e9 / uf as f64;
        let (te, ue) = time(run, m, seed);
        let e = te * 1e9 / ue as f64;
        units_sum += ue;
        ns.push(e);
        floor_ns.push(f);
        ratio.push(e / f);
    }
    let min = ns.iter().copied().fold(f64::INFINITY, f64::min);
    (median(ns), min, median(floor_ns), median(ratio), units_sum as f64 / reps as f64)
}

fn engine_name(e: Engine) -> &'static str {
    match e {
        Engine::Bins => "bins",
        Engine::Levels => "levels",
        _ => "auto",
    }
}

/// `YYYY-MM-DD` (UTC) of the system clock (days to civil date, proleptic Gregorian).
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|r| r.trim_start_matches([' ', '\t', ':']).to_string())
            })
        })
        .unwrap_or_else(|| "unknown CPU".to_string())
}

fn main() {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("floor: {e}");
            std::process::exit(2);
        }
    };
    let rows = if o.dynamic { dynamic_rows(&o) } else { engine_rows(&o) };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let head = format!(
        "{} UTC, {} ({} logical cores), `floor {}`. Each row: {} timed runs, each right after a \
         run of the floor loop",
        today(),
        cpu_model(),
        std::thread::available_parallelism().map_or(0, |p| p.get()),
        args.join(" "),
        o.reps
    );
    let mut csv;
    if o.dynamic {
        println!(
            "Dynamic floor table, {head} (one `below` draw per throw); ns/throw and floor are \
             medians, min the fastest run, ratio the median of the per-run ratios model ÷ \
             floor. A throw is a re-thrown ball (RBB), an arrival (leaky bins) or a \
             delete-insert step (Azar); a run is `rounds` rounds of a clone of the warmed-up \
             process through `simulate_process` (statistics included).\n"
        );
        println!(
            "| n | case | state | rounds | throws/round | ns/throw | min | floor (1 × below) | ratio to floor |"
        );
        println!("|---:|---|---|---:|---:|---:|---:|---:|---:|");
        csv = String::from(
            "n,case,state,rounds,throws_per_round,reps,ns_per_throw_median,ns_per_throw_min,floor_ns_per_throw,ratio_to_floor\n",
        );
        for r in &rows {
            let per_round = r.units / r.m as f64;
            println!(
                "| {} | {} | {} | {} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} |",
                r.n, r.case, r.engine, r.m, per_round, r.median_ns, r.min_ns, r.floor_ns, r.ratio
            );
            csv.push_str(&format!(
                "{},{},{},{},{:.1},{},{:.3},{:.3},{:.3},{:.3}\n",
                r.n,
                r.case,
                r.engine,
                r.m,
                per_round,
                o.reps,
                r.median_ns,
                r.min_ns,
                r.floor_ns,
                r.ratio
            ));
        }
    } else {
        println!(
            "Floor table, {head} (two `below` draws per ball); ns/ball and floor are medians, \
             min the fastest run, ratio the median of the per-run ratios engine ÷ floor. \
             Own floor: the case's own random numbers (`OwnFloor`; its row's ratio is to the \
             two-index floor), the engine's ratio divided by that row's; – where the law's \
             random numbers depend on the state.\n"
        );
        println!(
            "| n | case | engine | m | ns/ball | min | floor | ratio to floor | ratio to own floor |"
        );
        println!("|---:|---|---|---:|---:|---:|---:|---:|---:|");
        csv = String::from(
            "n,case,engine,m,reps,ns_per_ball_median,ns_per_ball_min,floor_ns_per_ball,ratio_to_floor,ratio_to_own_floor\n",
        );
        for r in &rows {
            let own = r.own_ratio.map_or("–".to_string(), |x| format!("{x:.2}"));
            println!(
                "| {} | {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {own} |",
                r.n, r.case, r.engine, r.m, r.median_ns, r.min_ns, r.floor_ns, r.ratio
            );
            let own_csv = r.own_ratio.map_or(String::new(), |x| format!("{x:.3}"));
            csv.push_str(&format!(
                "{},{},{},{},{},{:.3},{:.3},{:.3},{:.3},{own_csv}\n",
                r.n, r.case, r.engine, r.m, o.reps, r.median_ns, r.min_ns, r.floor_ns, r.ratio
            ));
        }
    }
    let written = o
        .out
        .parent()
        .map_or(
            Ok(()),
            |d| if d.as_os_str().is_empty() { Ok(()) } else { std::fs::create_dir_all(d) },
        )
        .and_then(|()| std::fs::File::create(&o.out))
        .and_then(|mut f| f.write_all(csv.as_bytes()));
    match written {
        Ok(()) => eprintln!("wrote {}", o.out.display()),
        Err(e) => {
            eprintln!("floor: writing {}: {e}", o.out.display());
            std::process::exit(1);
        }
    }
}

/// Calibrates and times one row against `floor` (already calibrated to `floor_m`).
#[allow(clippy::too_many_arguments)]
fn measure_row(
    o: &Options,
    n: u64,
    label: &str,
    engine: &'static str,
    run: &mut dyn FnMut(u64, u64) -> u64,
    pilot: u64,
    granule: u64,
    floor: &mut impl FnMut(u64, u64) -> u64,
    floor_m: u64,
) -> Row {
    eprintln!("n={n} {label} {engine}");
    let mut run = |m: u64, seed: u64| run(m, seed);
    // Fixed m = R·n for the engines (the floor rows, engine "-", stay calibrated).
    let m = match o.m_per_n {
        Some(r) if engine != "-" => (r * n).div_ceil(granule) * granule,
        _ => calibrate(&mut run, pilot, granule, o.target_ms),
    };
    let (median_ns, min_ns, floor_ns, ratio, units) = paired(&mut run, m, floor, floor_m, o.reps);
    Row {
        n,
        case: label.to_string(),
        engine,
        m,
        median_ns,
        min_ns,
        floor_ns,
        ratio,
        own_ratio: None,
        units,
    }
}

/// The rows of the engine table (the default).
fn engine_rows(o: &Options) -> Vec<Row> {
    let cases: Vec<_> = floor_cases()
        .into_iter()
        .filter(|c| {
            o.only.as_ref().is_none_or(|w| w.split(',').any(|w| c.label.contains(w.trim())))
        })
        .collect();
    let mut rows: Vec<Row> = Vec::new();
    for &n in &o.sizes {
        let floor = |m: u64, seed: u64| {
            black_box(floor_loop(n, m, seed));
            m
        };
        // The paired floor runs take about a third of an engine run.
        let floor_m = calibrate(&mut &floor, 200_000, 1, o.target_ms / 3.0);
        let row = |label: &str, engine, run: &mut dyn FnMut(u64, u64) -> u64, granule| {
            measure_row(o, n, label, engine, run, 200_000, granule, &mut &floor, floor_m)
        };
        rows.push(row(
            "floor (2 × below)",
            "-",
            &mut |m, seed| {
                black_box(floor_loop(n, m, seed));
                m
            },
            1,
        ));
        rows.push(row(
            "floor (1 word)",
            "-",
            &mut |m, seed| {
                black_box(floor_loop_one_word(n, m, seed));
                m
            },
            1,
        ));
        // The own floors of the cases (other than the two-index floor itself), each a row
        // paired like the engines; their ratios turn the engines' ratios into own ratios.
        let mut own_floors: Vec<(OwnFloor, f64)> = vec![(OwnFloor::Indices(2), 1.0)];
        for f in cases.iter().filter_map(|c| OwnFloor::of(&c.process)) {
            if own_floors.iter().any(|(g, _)| *g == f) {
                continue;
            }
            let mut run = |m: u64, seed: u64| {
                black_box(own_floor_loop(f, n, m, seed));
                m
            };
            let r = row(&f.label(), "-", &mut run, 1);
            own_floors.push((f, r.ratio));
            rows.push(r);
        }
        let own_ratio = |c: &ballast_benches::floor::FloorCase, r: &Row| {
            let f = OwnFloor::of(&c.process)?;
            own_floors.iter().find(|(g, _)| *g == f).map(|(_, x)| r.ratio / x)
        };
        for c in &cases {
            if let Some(balls) = c.whole_run_balls(n) {
                if balls > MAX_WHOLE_RUN_BALLS {
                    eprintln!("n={n} {}: skipped ({balls} balls per run)", c.label);
                    continue;
                }
                rows.extend(whole_run_rows(o, n, c, balls, &mut &floor, floor_m));
                continue;
            }
            for &engine in o.engines.iter().filter(|&&e| runs_on(c, e)) {
                let mut run = |m: u64, seed: u64| {
                    let out = simulate_seeded(&c.spec(engine, n, m), seed).expect("valid spec");
                    black_box(out.final_gap);
                    m
                };
                let mut r = row(&c.label, engine_name(engine), &mut run, c.granule(n));
                r.own_ratio = own_ratio(c, &r);
                rows.push(r);
            }
            // The reference loops of the engines the run keeps: the bin engine without its
            // fast paths, the level engine ball by ball (no chunks).
            let refs = [(Engine::Bins, "bins-ref"), (Engine::Levels, "levels-ref")];
            for (engine, name) in refs.into_iter().filter(|&(e, _)| o.reference && runs_on(c, e)) {
                if !o.engines.contains(&engine) {
                    continue;
                }
                let mut run = |m: u64, seed: u64| {
                    let spec = c.spec(engine, n, m);
                    let out = simulate_ball_by_ball(&spec, &mut sim_rng(seed), &mut ())
                        .expect("valid spec");
                    black_box(out.final_gap);
                    m
                };
                let mut r = row(&c.label, name, &mut run, c.granule(n));
                r.own_ratio = own_ratio(c, &r);
                rows.push(r);
            }
        }
    }
    rows
}

/// The rows of a case timed in whole runs of `balls` balls
/// ([`ballast_benches::floor::FloorSetting::SequentialRunsTimesN`]): a timed run is a number
/// of runs (seeds derived from the timing seed), calibrated like `m` from one run; the `m`
/// column shows the balls of a timed run. `--reference` adds `bins-ref` and `levels-ref`,
/// both engines through `simulate_ball_by_ball` (for `equalize`, its reference loops).
fn whole_run_rows(
    o: &Options,
    n: u64,
    c: &ballast_benches::floor::FloorCase,
    balls: u64,
    floor: &mut impl FnMut(u64, u64) -> u64,
    floor_m: u64,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for &engine in o.engines.iter().filter(|&&e| runs_on(c, e)) {
        let spec = c.spec(engine, n, balls);
        for reference in [false, true] {
            if reference && !o.reference {
                continue;
            }
            let mut run = |runs: u64, seed: u64| {
                for i in 0..runs {
                    let rng = &mut sim_rng(ballast_core::derive_seed(seed, &[i]));
                    let out = if reference {
                        simulate_ball_by_ball(&spec, rng, &mut ())
                    } else {
                        ballast_core::simulate(&spec, rng)
                    };
                    black_box(out.expect("valid spec").final_gap);
                }
                runs * balls
            };
            let name = match (engine, reference) {
                (Engine::Bins, true) => "bins-ref",
                (Engine::Levels, true) => "levels-ref",
                (e, false) => engine_name(e),
                _ => "auto-ref",
            };
            let mut r = measure_row(o, n, &c.label, name, &mut run, 1, 1, floor, floor_m);
            r.m *= balls;
            rows.push(r);
        }
    }
    rows
}

/// The rows of the dynamic table (`--dynamic`): `m` is the number of rounds of a run, the
/// unit a throw, the floor one `below` draw per throw.
fn dynamic_rows(o: &Options) -> Vec<Row> {
    let cases: Vec<_> = dynamic_cases()
        .into_iter()
        .filter(|c| {
            o.only.as_ref().is_none_or(|w| w.split(',').any(|w| c.label.contains(w.trim())))
        })
        .collect();
    let mut rows: Vec<Row> = Vec::new();
    for &n in &o.sizes {
        let mut floor = |m: u64, seed: u64| {
            black_box(floor_loop_one(n, m, seed));
            m
        };
        let floor_m = calibrate(&mut floor, 200_000, 1, o.target_ms / 3.0);
        let mut row = |label: &str, engine, run: &mut dyn FnMut(u64, u64) -> u64, pilot| {
            measure_row(o, n, label, engine, run, pilot, 1, &mut floor, floor_m)
        };
        rows.push(row(
            "floor (2 × below)",
            "-",
            &mut |m, seed| {
                black_box(floor_loop(n, m, seed));
                m
            },
            200_000,
        ));
        rows.push(row(
            "floor (1 × below)",
            "-",
            &mut |m, seed| {
                black_box(floor_loop_one(n, m, seed));
                m
            },
            200_000,
        ));
        for c in &cases {
            let spec = c.spec(n as usize);
            let mut p = DynProcess::new(&spec).expect("valid model");
            eprintln!("n={n} {}: warm-up {} rounds", c.label, c.warm_up_rounds(n as usize));
            p.warm_up(c.warm_up_rounds(n as usize), 0);
            // Pilot: about 2·10⁵ throws (at least the 20 batches).
            let pilot = (200_000 / n).max(20);
            let mut run = |rounds: u64, seed: u64| p.run_clone(rounds, seed);
            let mut r = row(&c.label, p.state_name(), &mut run, pilot);
            // A run has at least the tracker's 20 batches of rounds.
            r.m = r.m.max(20);
            rows.push(r);
            if matches!(c.model, DynamicModel::Rbb { d: 1, .. }) {
                // The same warmed-up state as a level histogram, a round as an occupancy
                // step (`ballast_benches::rbb_levels`).
                let loads = p.loads().to_vec();
                let mut run = |rounds: u64, seed: u64| {
                    RbbOnLevels::from_loads(&loads).run(rounds.max(20), seed)
                };
                let mut r = row(&c.label, "levels-occ", &mut run, pilot);
                r.m = r.m.max(20);
                rows.push(r);
            }
            if !o.reference {
                continue;
            }
            if let Some(mut q) = DynProcess::reference(&spec) {
                q.warm_up(c.warm_up_rounds(n as usize), 0);
                let mut run = |rounds: u64, seed: u64| q.run_clone(rounds, seed);
                let mut r = row(&c.label, "list-ref", &mut run, pilot);
                r.m = r.m.max(20);
                rows.push(r);
            }
        }
    }
    rows
}
