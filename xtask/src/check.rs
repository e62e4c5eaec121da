//! `cargo xtask reproduce <selector>... --check`: would re-running the items change their
//! committed outputs?
//!
//! Each selected item is re-rendered, by the first of these that applies, into
//! `target/xtask-check/` and compared with its committed files under `results/`:
//!
//! 1. **checkpoints**: every run is stored in `target/ballast-cache/`: the outputs are
//!    re-rendered without simulating (`--cached-only`);
//! 2. **simulated**: the committed JSON says the item's simulation took at most `--budget`
//!    seconds (scaled to this machine's thread count): it is simulated again at the committed
//!    scale. An item whose points were shared with an earlier item of its invocation does not
//!    record their cost, so it is never simulated here;
//! 3. **quick**: otherwise it runs at quick scale (the pipeline still runs end to end), and of
//!    its committed files only the config hash is checked: the outputs cannot be compared.
//!
//! Every item's committed JSON must record the SHA-256 of the config as it is now (else the
//! outputs belong to an older config). "Would not change" means what the shard and thread
//! tests mean by "the same": CSV and SVG byte-identical, the report identical above its
//! `## Run` section, the JSON identical after removing the execution fields
//! ([`Metadata::EXECUTION_FIELDS`]). The check fails naming every file that differs.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use ballast_runner::{run_experiment, Error, Experiment, Metadata, RunOptions};
use serde_json::Value;

/// How an item was re-rendered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    Checkpoints,
    Simulated,
    Quick,
}

impl Method {
    fn word(self) -> &'static str {
        match self {
            Method::Checkpoints => "checkpoints",
            Method::Simulated => "simulated",
            Method::Quick => "quick",
        }
    }
}

/// What the check found for one item.
struct ItemCheck {
    id: String,
    method: Method,
    seconds: f64,
    /// `path: reason` for each committed file that would change.
    differences: Vec<String>,
}

/// The committed metadata fields the check reads.
struct Committed {
    sha256: String,
    reduced: bool,
    /// What simulating the item again costs, in core-seconds (see [`core_seconds`]).
    core_seconds: f64,
}

/// What simulating an item again costs, in core-seconds, from its committed metadata: its
/// wall time × threads, or its recorded CPU time where that is larger (the CPU time counts the
/// runs it read from checkpoints or shards; the wall time does not). An item that shared points
/// with an earlier item of its invocation has those points' time in that item's row, not its
/// own, so its cost is unknown: infinite. (rbb23/max_load records 0.02 s for 54 shared points
/// that cost about 10 000 CPU-s, and CI once simulated it until its time ran out.)
fn core_seconds(m: &Value) -> f64 {
    if m["shared_points"].as_u64().unwrap_or(0) > 0 {
        return f64::INFINITY;
    }
    let threads = m["threads"].as_f64().unwrap_or(1.0).max(1.0);
    let wall = m["wall_time_s"].as_f64().map_or(f64::INFINITY, |w| w * threads);
    wall.max(m["cpu_time_s"].as_f64().unwrap_or(0.0))
}

fn committed(json: &Path) -> Result<Committed> {
    let text =
        std::fs::read_to_string(json).with_context(|| format!("reading {}", json.display()))?;
    let v: Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", json.display()))?;
    let m = &v["metadata"];
    Ok(Committed {
        sha256: m["config_sha256"].as_str().unwrap_or_default().to_string(),
        reduced: m["scale"].as_str() == Some("reduced"),
        core_seconds: core_seconds(m),
    })
}

/// The JSON with the execution fields removed, for comparison.
fn without_execution(text: &str) -> Option<Value> {
    let mut v: Value = serde_json::from_str(text).ok()?;
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        for f in Metadata::EXECUTION_FIELDS {
            m.remove(*f);
        }
    }
    Some(v)
}

/// The part of a report that does not depend on how the run went.
fn report_body(text: &str) -> &str {
    text.find("\n## Run").map_or(text, |i| &text[..i])
}

/// The first line where two texts differ (1-based), or where one ends.
fn first_line_difference(a: &str, b: &str) -> usize {
    let mut n = 0;
    let (mut x, mut y) = (a.lines(), b.lines());
    loop {
        n += 1;
        match (x.next(), y.next()) {
            (None, None) => return n,
            (l, r) if l != r => return n,
            _ => {}
        }
    }
}

/// Compares the four outputs of `id` in `fresh` with those in `results`.
fn compare(results: &Path, fresh: &Path, id: &str) -> Vec<String> {
    let mut out = Vec::new();
    for ext in ["csv", "json", "svg", "md"] {
        let old_path = results.join(format!("{id}.{ext}"));
        let new_path = fresh.join(format!("{id}.{ext}"));
        let (old, new) =
            match (std::fs::read_to_string(&old_path), std::fs::read_to_string(&new_path)) {
                (Ok(o), Ok(n)) => (o, n),
                (Err(_), _) => {
                    out.push(format!("{}: not committed", old_path.display()));
                    continue;
                }
                (_, Err(e)) => {
                    out.push(format!("{}: not re-rendered ({e})", old_path.display()));
                    continue;
                }
            };
        let same = match ext {
            "json" => {
                without_execution(&old).is_some()
                    && without_execution(&old) == without_execution(&new)
            }
            "md" => report_body(&old) == report_body(&new),
            _ => old == new,
        };
        if !same {
            let (o, n) = match ext {
                "md" => (report_body(&old), report_body(&new)),
                _ => (old.as_str(), new.as_str()),
            };
            let what = if ext == "json" { "outside the execution fields" } else { "" };
            out.push(format!(
                "{}: would change {what}(first difference at line {})",
                old_path.display(),
                first_line_difference(o, n)
            ));
        }
    }
    out
}

/// Options of the check.
pub struct CheckArgs {
    pub threads: usize,
    /// Core-seconds of full-scale simulation allowed per item without checkpoints.
    pub budget_s: f64,
}

fn threads_here(requested: usize) -> f64 {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    (if requested == 0 { cores } else { requested }) as f64
}

/// Checks one item (see the module docs).
fn check_item(exp: &Experiment, args: &CheckArgs, scratch: &Path) -> Result<ItemCheck> {
    let id = exp.id().to_string();
    let results = Path::new("results");
    let start = Instant::now();
    let json = results.join(format!("{id}.json"));
    let Ok(c) = committed(&json) else {
        return Ok(ItemCheck {
            id,
            method: Method::Quick,
            seconds: 0.0,
            differences: vec![format!("{}: no committed metadata", json.display())],
        });
    };
    let mut differences = Vec::new();
    if c.sha256 != exp.sha256() {
        differences.push(format!(
            "{}: records config SHA-256 {}…, the config is now {}…: the outputs are of an older \
             config",
            json.display(),
            &c.sha256.get(..12).unwrap_or(&c.sha256),
            &exp.sha256()[..12]
        ));
    }
    let mut opts = RunOptions::new("reference");
    opts.threads = args.threads;
    opts.reduced = c.reduced;
    opts.progress = false;
    opts.command = Some("cargo xtask reproduce --check".to_string());
    opts.cache_dir = Some(PathBuf::from("target/ballast-cache"));
    opts.cached_only = true;
    let fresh = scratch.join("full");
    let (method, result) = match run_experiment(exp, &opts) {
        Ok(r) => (Method::Checkpoints, r),
        Err(Error::NotCached { .. })
            if c.core_seconds / threads_here(args.threads) <= args.budget_s =>
        {
            opts.cached_only = false;
            (
                Method::Simulated,
                run_experiment(exp, &opts).with_context(|| format!("running {id}"))?,
            )
        }
        Err(Error::NotCached { .. }) => {
            opts.cached_only = false;
            opts.reduced = false;
            opts.quick = true;
            let r = run_experiment(exp, &opts).with_context(|| format!("running {id} --quick"))?;
            r.write(&scratch.join("quick")).with_context(|| format!("writing {id} --quick"))?;
            return Ok(ItemCheck {
                id,
                method: Method::Quick,
                seconds: start.elapsed().as_secs_f64(),
                differences,
            });
        }
        Err(e) => return Err(e).with_context(|| format!("re-rendering {id}")),
    };
    result.write(&fresh).with_context(|| format!("writing {id} into {}", fresh.display()))?;
    differences.extend(compare(results, &fresh, &id));
    Ok(ItemCheck { id, method, seconds: start.elapsed().as_secs_f64(), differences })
}

/// Runs the check over `exps` (from the repository root) and fails naming every file that
/// would change.
pub fn check(exps: &[Experiment], args: &CheckArgs) -> Result<()> {
    let scratch = PathBuf::from("target/xtask-check");
    let _ = std::fs::remove_dir_all(&scratch);
    let mut checks = Vec::new();
    for exp in exps {
        let c = check_item(exp, args, &scratch)?;
        let verdict = if c.differences.is_empty() {
            match c.method {
                Method::Quick => "ran at quick scale; not compared (no checkpoints, over budget)",
                _ => "unchanged",
            }
        } else {
            "WOULD CHANGE"
        };
        tracing::info!("{:<36} {:<11} {:>7.1} s  {verdict}", c.id, c.method.word(), c.seconds);
        checks.push(c);
    }
    let compared = checks.iter().filter(|c| c.method != Method::Quick).count();
    let bad: Vec<&String> = checks.iter().flat_map(|c| &c.differences).collect();
    println!(
        "checked {} items: {compared} re-rendered and compared ({} from checkpoints, {} \
         simulated), {} at quick scale only",
        checks.len(),
        checks.iter().filter(|c| c.method == Method::Checkpoints).count(),
        checks.iter().filter(|c| c.method == Method::Simulated).count(),
        checks.len() - compared
    );
    if bad.is_empty() {
        println!("no committed output would change");
        Ok(())
    } else {
        for b in &bad {
            println!("{b}");
        }
        anyhow::bail!("{} committed file(s) would change (listed above)", bad.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cost_of_an_item_that_shared_points_is_unknown() {
        let m = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        let own = m(r#"{"threads":2,"wall_time_s":10.0,"cpu_time_s":19.0,"shared_points":0}"#);
        assert_eq!(core_seconds(&own), 20.0);
        let resumed = m(r#"{"threads":2,"wall_time_s":1.0,"cpu_time_s":900.0,"cached_points":9}"#);
        assert_eq!(core_seconds(&resumed), 900.0);
        let old = m(r#"{"threads":2,"wall_time_s":10.0}"#);
        assert_eq!(core_seconds(&old), 20.0);
        let shared = m(r#"{"threads":2,"wall_time_s":0.02,"cpu_time_s":0.0,"shared_points":54}"#);
        assert_eq!(core_seconds(&shared), f64::INFINITY);
        assert_eq!(core_seconds(&m("{}")), f64::INFINITY);
    }

    #[test]
    fn rbb23_max_load_is_over_the_ci_budget() {
        // CI's budget is 30 s on 2 threads; rbb23/max_load must not be simulated there.
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("repository root");
        let c = committed(&root.join("results/rbb23/max_load.json")).unwrap();
        assert!(c.core_seconds / 2.0 > 30.0, "{}", c.core_seconds);
    }

    #[test]
    fn reports_compare_above_their_run_section() {
        let a = "# t\n\nbody\n\n## Run\n\nProduced in 1.0 s\n";
        let b = "# t\n\nbody\n\n## Run\n\nProduced in 2.0 s\n";
        assert_eq!(report_body(a), report_body(b));
        assert_ne!(report_body(a), report_body("# t\n\nother\n\n## Run\n"));
    }

    #[test]
    fn json_ignores_only_execution_fields() {
        let a = r#"{"metadata":{"seed":1,"wall_time_s":1.0,"threads":2},"rows":[1]}"#;
        let b = r#"{"metadata":{"seed":1,"wall_time_s":9.0,"threads":1},"rows":[1]}"#;
        let c = r#"{"metadata":{"seed":2,"wall_time_s":1.0,"threads":2},"rows":[1]}"#;
        assert_eq!(without_execution(a), without_execution(b));
        assert_ne!(without_execution(a), without_execution(c));
    }

    #[test]
    fn compare_names_each_changed_or_missing_file() {
        let base = std::env::temp_dir().join(format!("xtask-check-{}", std::process::id()));
        let (old, new) = (base.join("old/p"), base.join("new/p"));
        for d in [&old, &new] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join("i.csv"), "x,y\n1,2\n").unwrap();
            std::fs::write(d.join("i.svg"), "<svg/>").unwrap();
            std::fs::write(d.join("i.json"), r#"{"metadata":{"threads":1},"rows":[]}"#).unwrap();
        }
        std::fs::write(old.join("i.md"), "# r\n\n## Run\n1 s\n").unwrap();
        std::fs::write(new.join("i.md"), "# r\n\n## Run\n2 s\n").unwrap();
        assert!(compare(&base.join("old"), &base.join("new"), "p/i").is_empty());
        std::fs::write(new.join("i.csv"), "x,y\n1,3\n").unwrap();
        std::fs::remove_file(new.join("i.svg")).unwrap();
        let d = compare(&base.join("old"), &base.join("new"), "p/i");
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d[0].contains("i.csv: would change") && d[0].contains("line 2"), "{d:?}");
        assert!(d[1].contains("i.svg: not re-rendered"), "{d:?}");
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn first_difference_is_one_based_and_sees_truncation() {
        assert_eq!(first_line_difference("a\nb\n", "a\nc\n"), 2);
        assert_eq!(first_line_difference("a\nb\n", "a\n"), 2);
        assert_eq!(first_line_difference("x", "y"), 1);
    }
}
