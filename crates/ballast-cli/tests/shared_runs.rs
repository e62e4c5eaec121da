//! Two dynamic items that report different statistics of the same runs (`seed_item` with
//! `seed_by = "values"`, as rbb23/max_load and rbb23/empty_bins): the second reads the runs
//! of the points it shares with the first from the checkpoints, and its outputs are
//! byte-identical to simulating everything itself. Points it does not share are simulated.

mod common;
use ballast_testkit::fixtures::{RBB_SHARED_FIRST as FIRST, RBB_SHARED_SECOND as SECOND};
use common::{ok, run_in, scratch};

fn cached_points(json: &std::path::Path) -> u64 {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).expect("metadata JSON");
    v["metadata"]["cached_points"].as_u64().expect("cached_points")
}

#[test]
fn the_second_item_reads_the_shared_points_and_gives_the_same_bytes() {
    let dir = scratch("shared-runs", "values");
    std::fs::write(dir.join("configs/demo/first.toml"), FIRST).unwrap();
    std::fs::write(dir.join("configs/demo/second.toml"), SECOND).unwrap();
    let ckpt = ["--checkpoint", "ckpt"];
    let run = |cfg: &str, out: &str, extra: &[&str]| {
        let mut args = vec!["run", cfg, "--out", out];
        args.extend_from_slice(extra);
        ok(&run_in(&dir, &args));
    };
    run("configs/demo/first.toml", "a", &ckpt);
    assert_eq!(cached_points(&dir.join("a/demo/first.json")), 0);
    run("configs/demo/second.toml", "a", &ckpt);
    // k = 2 and 3 come from the first item's checkpoints, k = 4 is simulated.
    assert_eq!(cached_points(&dir.join("a/demo/second.json")), 2);
    run("configs/demo/second.toml", "b", &["--no-checkpoint"]);
    assert_eq!(cached_points(&dir.join("b/demo/second.json")), 0);
    let csv = |d: &str| std::fs::read(dir.join(format!("{d}/demo/second.csv"))).unwrap();
    assert!(csv("a") == csv("b"), "shared runs changed the second item's values");

    // Power: without the shared seed item the second item's runs are its own, so nothing is
    // read from the first item's checkpoints and the values differ.
    let own = SECOND.replace("seed_item = \"demo/first\"\n", "");
    std::fs::write(dir.join("configs/demo/second.toml"), own).unwrap();
    run("configs/demo/second.toml", "c", &ckpt);
    assert_eq!(cached_points(&dir.join("c/demo/second.json")), 0);
    assert!(csv("c") != csv("b"), "independent seeds gave the same values");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `seed_by = "values"` shares runs between items reporting different statistics: graph
/// items (whose checkpoints name the statistic) refuse it, naming the field.
#[test]
fn shared_seeds_are_refused_outside_dynamic_items() {
    let dir = scratch("shared-runs", "refused");
    let graph = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../configs/graphs/gap_vs_topology.toml"),
    )
    .unwrap();
    let graph = graph.replacen("\nseed = ", "\nseed_by = \"values\"\nseed = ", 1);
    std::fs::write(dir.join("configs/demo/graph.toml"), graph).unwrap();
    let o = run_in(&dir, &["run", "configs/demo/graph.toml", "--quick", "--out", "out"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("`seed_by` is supported by dynamic items only"), "{err}");
    assert!(!dir.join("out").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// By values a point is named by its series name, so two series of one name are refused.
#[test]
fn series_names_must_be_unique_when_seeding_by_values() {
    let dir = scratch("shared-runs", "names");
    let twice = format!(
        "{FIRST}\n[[series]]\nname = \"RBB\"\nprocess = {{ kind = \"rbb\", d = 2 }}\nstatistic = \"avg_max_load\"\n"
    );
    std::fs::write(dir.join("configs/demo/twice.toml"), twice).unwrap();
    let o = run_in(&dir, &["run", "configs/demo/twice.toml", "--out", "out"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("series names must be unique"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
