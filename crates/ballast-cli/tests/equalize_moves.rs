//! `equalize` with `moves` from both front doors: `simulate --param moves=1` gives the runs of
//! the one-point config with `moves = 1` (and other runs than equalize without it), and a bad
//! value (negative, non-integer, or `moves` on a kind without it) exits 2 naming the
//! parameter and its allowed values, writing nothing.

mod common;

use common::{ok, run_in, scratch};

/// A one-point config of `process` (a TOML inline table): n = 40, m = 400, 5 runs.
fn config(process: &str) -> String {
    format!(
        "title = \"t\"\nseed = 7\nseed_item = \"simulate\"\nruns = 5\n\
         x = {{ variable = \"n\" }}\ngrid = {{ n = [40] }}\npoint = {{ m = 400 }}\n\n\
         [[series]]\nname = \"s\"\nprocess = {process}\nstatistic = \"moved_per_ball\"\n"
    )
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `simulate` of equalize{d = 2} with `params`, seed 7, 5 runs: its JSON.
fn simulate(dir: &std::path::Path, params: &[&str]) -> serde_json::Value {
    let mut args = vec!["simulate", "--process", "equalize", "--param", "d=2"];
    for p in params {
        args.extend(["--param", p]);
    }
    args.extend(["--n", "40", "--m", "400", "--runs", "5", "--seed", "7", "--json"]);
    let o = run_in(dir, &args);
    ok(&o);
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn simulate_with_moves_gives_the_runs_of_its_config() {
    let dir = scratch("equalize_moves", "same_runs");
    let path = dir.join("configs/demo/item.toml");
    std::fs::write(&path, config("{ kind = \"equalize\", d = 2, moves = 1 }")).unwrap();
    ok(&run_in(&dir, &["run", path.to_str().unwrap(), "--out", "out", "--no-checkpoint"]));
    let csv = std::fs::read_to_string(dir.join("out/demo/item.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let value: f64 = row[header.iter().position(|h| *h == "value").unwrap()].parse().unwrap();
    let limited = simulate(&dir, &["moves=1"]);
    let got = limited["statistics"]["moved_per_ball"]["mean"].as_f64().unwrap();
    assert!((got - value).abs() < 1e-9, "{csv}\n{limited}");
    // Without `moves` the even spread moves more balls (the remainder is redrawn each step).
    let even = simulate(&dir, &[]);
    assert!(
        even["statistics"]["moved_per_ball"]["mean"].as_f64().unwrap() > got,
        "{even}\n{limited}"
    );
}

#[test]
fn bad_moves_exit_2_naming_the_parameter() {
    let dir = scratch("equalize_moves", "bad");
    let allowed = "`moves` of process `equalize`: expected an integer in 0..=4294967295";
    for bad in ["-1", "1.5", "one"] {
        let p = format!("moves={bad}");
        let args =
            ["simulate", "--process", "equalize", "--param", "d=2", "--param", &p, "--n", "9"];
        let o = run_in(&dir, &args);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert!(stderr(&o).contains(allowed), "{bad}: {}", stderr(&o));
    }
    let path = dir.join("configs/demo/item.toml");
    for (process, needle) in [
        ("{ kind = \"equalize\", d = 2, moves = -1 }", allowed),
        ("{ kind = \"equalize\", d = 2, moves = 0.5 }", allowed),
        (
            "{ kind = \"two_choice\", moves = 1 }",
            "unknown parameter `moves` for process `two_choice`",
        ),
    ] {
        std::fs::write(&path, config(process)).unwrap();
        let o = run_in(&dir, &["run", path.to_str().unwrap(), "--out", "out"]);
        assert_eq!(o.status.code(), Some(2), "{process}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{process}: {}", stderr(&o));
        assert!(!dir.join("out").exists(), "{process}: outputs written");
    }
}
