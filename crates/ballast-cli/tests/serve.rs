//! `ballast serve` with the real command line behind it: a playground run is `ballast
//! simulate` (same numbers, same messages, the field of a refused value found), and the
//! subcommand refuses a results directory that is not one with exit code 2.

mod common;

use std::time::{Duration, Instant};

use ballast_cli::embed;
use ballast_serve::gallery::Results;
use ballast_serve::routes::{route, State};
use ballast_serve::Method;
use serde_json::{json, Value};

fn state() -> State {
    let results = common::scratch("serve", "results");
    State::new(Results::open(&results).unwrap(), ballast_cli::serve::lab(), 2, true)
}

fn post(s: &State, url: &str, body: &Value) -> (u16, Value) {
    let r = route(s, &Method::Post, url, body.to_string().as_bytes());
    (r.status, serde_json::from_slice(&r.body).unwrap())
}

fn finished(s: &State, id: u64) -> Value {
    let t = Instant::now();
    loop {
        let r = route(s, &Method::Get, &format!("/api/jobs/{id}"), b"");
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        if v["phase"] != "running" {
            return v;
        }
        assert!(t.elapsed() < Duration::from_secs(60), "job {id} still running");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_playground_run_is_ballast_simulate() {
    let s = state();
    let body = json!({
        "process": "one_plus_beta", "params": { "beta": "0.5" },
        "options": { "n": "200", "m": "20000", "runs": "6", "seed": "11", "batch": "400" },
        "compare": { "process": "two_choice", "params": {} },
    });
    let (status, v) = post(&s, "/api/run", &body);
    assert_eq!(status, 202, "{v}");
    let done = finished(&s, v["job"].as_u64().unwrap());
    assert_eq!(done["phase"], "done", "{done}");
    for (i, kind) in ["one_plus_beta", "two_choice"].into_iter().enumerate() {
        let mut argv = vec!["--process", kind];
        if i == 0 {
            argv.extend(["--param", "beta=0.5"]);
        }
        argv.extend([
            "--batch", "400", "--m", "20000", "--n", "200", "--runs", "6", "--seed", "11",
        ]);
        let want = embed::simulate(&argv).unwrap();
        let got = &done["result"]["runs"][i]["result"];
        assert_eq!(got["gap"], want["gap"], "{kind}");
        assert_eq!(got["statistics"]["max_load"], want["statistics"]["max_load"], "{kind}");
        let command = done["result"]["runs"][i]["command"].as_str().unwrap();
        assert_eq!(command, format!("ballast simulate {}", argv.join(" ")));
    }
}

#[test]
fn refused_values_get_the_command_lines_messages() {
    let s = state();
    let cases = [
        (json!({ "beta": "2" }), json!({ "n": "10", "m": "10" }), "param:beta"),
        (json!({ "beta": "0.5" }), json!({ "n": "abc", "m": "10" }), "n"),
        (json!({ "beta": "0.5" }), json!({ "n": "10", "m": "10", "batch": "0" }), "batch"),
        (json!({ "beta": "0.5" }), json!({ "n": "10" }), "m"),
    ];
    for (params, options, field) in cases {
        let body = json!({ "process": "one_plus_beta", "params": params, "options": options });
        let (status, v) = post(&s, "/api/run", &body);
        assert_eq!(status, 400, "{v}");
        let mut argv = vec!["--process".to_owned(), "one_plus_beta".to_owned()];
        for (k, v) in params.as_object().unwrap() {
            argv.extend(["--param".to_owned(), format!("{k}={}", v.as_str().unwrap())]);
        }
        for (k, v) in options.as_object().unwrap() {
            argv.extend([format!("--{k}"), v.as_str().unwrap().to_owned()]);
        }
        let e = embed::simulate(&argv).unwrap_err();
        assert_eq!(v["error"]["message"], format!("{e:#}"));
        assert_eq!(v["error"]["field"], field, "{e:#}");
    }
}

#[test]
fn an_animations_values_are_checked_by_the_command_line_too() {
    let s = state();
    let body = json!({ "process": "one_plus_beta", "params": { "beta": "7" }, "n": "100",
                       "m": "1000", "step": "10" });
    let (status, v) = post(&s, "/api/animate", &body);
    assert_eq!(status, 400, "{v}");
    let e = embed::simulate(&[
        "--process",
        "one_plus_beta",
        "--param",
        "beta=7",
        "--m",
        "1000",
        "--n",
        "100",
        "--print-config",
    ])
    .unwrap_err();
    assert_eq!(v["error"]["message"], format!("{e:#}"));
    assert_eq!(v["error"]["field"], "param:beta");
    let ok = json!({ "process": "one_plus_beta", "params": { "beta": "0.5" }, "n": "100",
                     "m": "1000", "batch": "100" });
    let (status, v) = post(&s, "/api/animate", &ok);
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["frames"].as_array().unwrap().len(), 11, "the start and every batch end");
}

#[test]
fn serve_refuses_a_missing_results_directory() {
    let dir = common::scratch("serve", "missing");
    let o = common::run_in(&dir, &["serve", "--port", "0", "--results", "no-such-dir"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--results") && err.contains("no-such-dir"), "{err}");
}
