//! `ballast run` on bad configs: exit code 2, every problem of the file in the message (file,
//! line and column, field, allowed values, a suggestion), and no output files.

mod common;
use common::{run_in, scratch};

const CONFIG: &str = r#"title = "Two-Choice, batched (test)"
seed = 7
runs = 3
x = { variable = "k", label = "b/n" }
grid = { k = [1, 2] }
point = { n = 50, b = "k*n", batches = 4 }

[[series]]
name = "Two-Choice"
process = { kind = "two_choice" }

[[series]]
name = "beta"
process = { kind = "one_plus_beta", beta = 0.5 }
"#;

/// Runs `ballast run` on `bytes` written to configs/demo/bad.toml; asserts exit code 2, no
/// outputs, and every needle in stderr; returns stderr.
fn rejected(name: &str, bytes: &[u8], needles: &[&str]) -> String {
    let dir = scratch("cli-validation", name);
    std::fs::write(dir.join("configs/demo/bad.toml"), bytes).unwrap();
    let o = run_in(&dir, &["run", "configs/demo/bad.toml", "--out", "out"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{name}: stderr {err}");
    for n in needles {
        assert!(err.contains(n), "{name}: `{n}` not in stderr:\n{err}");
    }
    assert!(!dir.join("out").exists(), "{name}: outputs written despite the error");
    std::fs::remove_dir_all(&dir).unwrap();
    err
}

#[test]
fn the_base_config_runs() {
    let dir = scratch("cli-validation", "good");
    std::fs::write(dir.join("configs/demo/good.toml"), CONFIG).unwrap();
    let o = run_in(&dir, &["run", "configs/demo/good.toml", "--out", "out"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn malformed_toml() {
    rejected(
        "malformed",
        CONFIG.replace("runs = 3", "runs = = 3").as_bytes(),
        &["configs/demo/bad.toml:3:8:", "invalid string"],
    );
    rejected("unclosed", b"title = \"x\n", &["configs/demo/bad.toml:1:"]);
}

#[test]
fn several_unknown_fields_are_all_reported() {
    let src = CONFIG
        .replace("seed = 7", "seeed = 7\ncolour = \"red\"")
        .replace("label = \"b/n\"", "lable = \"b/n\"")
        .replace("beta = 0.5", "betta = 0.5");
    let err = rejected(
        "unknown",
        src.as_bytes(),
        &[
            "configs/demo/bad.toml:2:1: unknown field `seeed`",
            "did you mean `seed`?",
            "configs/demo/bad.toml:3:1: unknown field `colour`, expected one of",
            "configs/demo/bad.toml:5:23: x: unknown field `lable`, expected one of `variable`, \
             `label`, `log`; did you mean `label`?",
            "configs/demo/bad.toml:15:45: series `beta` at k = 1: unknown parameter `betta` for \
             process `one_plus_beta`; did you mean `beta`?",
        ],
    );
    assert!(!err.contains("missing field"), "{err}");
}

#[test]
fn unknown_names_suggest_the_nearest() {
    rejected(
        "kind",
        CONFIG.replace("\"two_choice\"", "\"tow_choice\"").as_bytes(),
        &[
            "bad.toml:10:20: series `Two-Choice` at k = 1: unknown process `tow_choice`",
            "did you mean `two_choice`?",
        ],
    );
    rejected(
        "statistic",
        CONFIG.replace("name = \"beta\"", "name = \"beta\"\nstatistic = \"finalgap\"").as_bytes(),
        &[
            "bad.toml:14:13: series[1].statistic: unknown variant `finalgap`",
            "did you mean `final_gap`?",
        ],
    );
    rejected(
        "tie",
        CONFIG.replace("name = \"beta\"", "name = \"beta\"\ntie_break = \"frist\"").as_bytes(),
        &[
            "bad.toml:14:13:",
            "`tie_break`",
            "random, first, lowest_index, position",
            "did you mean `first`?",
        ],
    );
    rejected(
        "engine",
        CONFIG.replace("seed = 7", "seed = 7\nengine = \"bin\"").as_bytes(),
        &["bad.toml:3:10:", "`engine`", "auto, bins, levels", "did you mean `bins`?"],
    );
}

#[test]
fn out_of_range_values() {
    rejected(
        "beta",
        CONFIG.replace("beta = 0.5", "beta = 1.5").as_bytes(),
        &["bad.toml:14:44:", "series `beta`", "`beta`", "[0, 1]"],
    );
    rejected(
        "n",
        CONFIG.replace("n = 50", "n = 0").as_bytes(),
        &["bad.toml:6:15:", "`n`", "1..=4294967295"],
    );
    rejected(
        "b",
        CONFIG.replace("b = \"k*n\"", "b = 0").as_bytes(),
        &["bad.toml:6:23:", "`b`", ">= 1"],
    );
    rejected(
        "nan",
        CONFIG.replace("beta = 0.5", "beta = \"0/0\"").as_bytes(),
        &["bad.toml:14:44:", "`beta`", "NaN"],
    );
    // Two problems in two series and one in [quick]: all reported.
    let src = format!(
        "{}\n[quick]\nruns = 0\n",
        CONFIG.replace("beta = 0.5", "beta = -1").replace("two_choice\" }", "d_choice\", d = 0 }")
    );
    rejected(
        "several",
        src.as_bytes(),
        &[
            "bad.toml:10:36:",
            "`d`",
            "1..=1024",
            "bad.toml:14:44:",
            "`beta`",
            "bad.toml:17:8:",
            "`runs`",
        ],
    );
}

#[test]
fn unreadable_files() {
    // A directory where the config should be.
    let dir = scratch("cli-validation", "dir");
    std::fs::create_dir_all(dir.join("configs/demo/dir.toml")).unwrap();
    let o = run_in(&dir, &["run", "configs/demo/dir.toml", "--out", "out"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("configs/demo/dir.toml") && err.contains("is a directory"), "{err}");
    assert!(!dir.join("out").exists());
    std::fs::remove_dir_all(&dir).unwrap();
    // Not UTF-8: the place of the first bad byte.
    let mut bytes = CONFIG.as_bytes().to_vec();
    let at = CONFIG.find("Two-Choice, batched").unwrap();
    bytes[at + 3] = 0xff;
    rejected("utf8", &bytes, &["configs/demo/bad.toml:1:13:", "invalid UTF-8"]);
}
