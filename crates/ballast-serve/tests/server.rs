//! The server's routes with a stand-in for the command line: the page and the gallery, files
//! refused outside the results directory, the worker pool's "busy" answer, a job's stop and
//! the request checks (loopback `Host`, JSON content type), over real HTTP where it matters.
//!
//! The stop test raises the runner's process-wide interrupt; the other tests here run no
//! simulation through the runner, so it cannot reach them.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ballast_serve::routes::{route, State};
use ballast_serve::{gallery::Results, Lab, LabError, LabErrorKind, Method, ServeOptions};
use serde_json::{json, Value};

/// A command line that knows `--n` and `--seed`; a run lasts until it is interrupted when its
/// seed is `forever`, and `--n bad` is refused with a message naming `--n`.
struct FakeLab {
    calls: AtomicUsize,
    argv_seen: Mutex<Vec<Vec<String>>>,
}

impl Lab for FakeLab {
    fn simulate(&self, argv: &[String]) -> Result<Value, LabError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.argv_seen.lock().unwrap().push(argv.to_vec());
        let has = |w: &str| argv.iter().any(|a| a == w);
        if has("bad") {
            return Err(LabError {
                kind: LabErrorKind::BadInput,
                message: "invalid value 'bad' for '--n <N>': invalid digit found in string".into(),
            });
        }
        if has("--print-config") {
            return Ok(json!("runs = 1\n"));
        }
        if has("panic") {
            panic!("a stand-in bug");
        }
        if has("forever") {
            while !ballast_runner::interrupt_requested() {
                std::thread::sleep(Duration::from_millis(5));
            }
            return Err(LabError {
                kind: LabErrorKind::Interrupted,
                message: "interrupted".into(),
            });
        }
        Ok(json!({ "gap": { "mean": 2.0 }, "argv": argv }))
    }

    fn simulate_options(&self) -> Value {
        json!([
            { "long": "n", "takes": "value", "default": [], "choices": [], "help": "bins" },
            { "long": "seed", "takes": "value", "default": ["1"], "choices": [], "help": "seed" },
            { "long": "m", "takes": "value", "default": [], "choices": [], "help": "balls" },
            { "long": "batch", "takes": "value", "default": [], "choices": [], "help": "" },
            { "long": "tie-break", "takes": "value", "default": [], "choices": [], "help": "" },
            { "long": "threads", "takes": "value", "default": [], "choices": [], "help": "" },
        ])
    }

    fn listing(&self) -> Value {
        json!({ "processes": [{ "name": "two_choice", "params": [] }] })
    }
}

fn fake() -> Arc<FakeLab> {
    Arc::new(FakeLab { calls: AtomicUsize::new(0), argv_seen: Mutex::new(Vec::new()) })
}

/// A results directory with one item, a non-item JSON, and a secret file beside it.
fn results_dir(name: &str) -> PathBuf {
    let base = std::env::temp_dir().join(format!("ballast-serve-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let res = base.join("results");
    std::fs::create_dir_all(res.join("paper")).unwrap();
    std::fs::write(base.join("secret.txt"), "do not serve").unwrap();
    let meta = json!({ "metadata": { "title": "A title" }, "rows": [] });
    std::fs::write(res.join("paper/item.json"), meta.to_string()).unwrap();
    std::fs::write(
        res.join("paper/item.csv"),
        "series,n,x,statistic,value,stderr\nA,10,1,gap,2.50,0.1\n",
    )
    .unwrap();
    std::fs::write(res.join("paper/item.md"), "## Verdict\n\nOverall: **agrees** here\n").unwrap();
    std::fs::write(res.join("paper/other.json"), "{}").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(base.join("secret.txt"), res.join("paper/link.txt")).unwrap();
    res
}

/// Removes what [`results_dir`] made.
fn cleanup(res: &Path) {
    let _ = std::fs::remove_dir_all(res.parent().unwrap());
}

fn state(res: &Path, lab: Arc<FakeLab>, workers: usize) -> State {
    State::new(Results::open(res).unwrap(), lab, workers, true)
}

fn get(s: &State, url: &str) -> (u16, Vec<u8>) {
    let r = route(s, &Method::Get, url, b"");
    (r.status, r.body)
}

fn post(s: &State, url: &str, body: &Value) -> (u16, Value) {
    let r = route(s, &Method::Post, url, body.to_string().as_bytes());
    (r.status, serde_json::from_slice(&r.body).unwrap())
}

#[test]
fn page_gallery_and_item() {
    let res = results_dir("gallery");
    let s = state(&res, fake(), 2);
    let (status, page) = get(&s, "/");
    assert_eq!(status, 200);
    assert!(String::from_utf8(page).unwrap().contains("/app.js"));
    assert_eq!(get(&s, "/app.js").0, 200);
    let (_, list) = get(&s, "/api/gallery");
    let list: Value = serde_json::from_slice(&list).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1, "one item, the JSON without rows is none");
    assert_eq!(list[0]["id"], "paper/item");
    assert_eq!(list[0]["verdict"], "agrees");
    let (status, item) = get(&s, "/api/item?id=paper%2Fitem");
    assert_eq!(status, 200);
    let item: Value = serde_json::from_slice(&item).unwrap();
    assert_eq!(item["rows"][0][4], "2.50", "the CSV's text as written");
    assert_eq!(
        get(&s, "/files/paper/item.csv").1,
        std::fs::read(res.join("paper/item.csv")).unwrap()
    );
    assert_eq!(get(&s, "/nothing").0, 404);
    cleanup(&res);
}

#[test]
fn no_file_outside_the_results_is_served() {
    let res = results_dir("traversal");
    let s = state(&res, fake(), 2);
    let secret = res.parent().unwrap().join("secret.txt");
    let attempts = [
        "/files/../secret.txt".to_owned(),
        "/files/%2e%2e/secret.txt".to_owned(),
        "/files/paper/%2E%2E/%2E%2E/secret.txt".to_owned(),
        "/files/paper/..%2f..%2fsecret.txt".to_owned(),
        format!("/files/{}", secret.display()),
        format!("/files/%2F{}", secret.display().to_string().trim_start_matches('/')),
        "/files/paper/link.txt".to_owned(),
        "/files/".to_owned(),
        "/files/paper".to_owned(),
    ];
    for url in attempts {
        let (status, body) = get(&s, &url);
        assert_eq!(status, 404, "{url}");
        assert!(!String::from_utf8_lossy(&body).contains("do not serve"), "{url}");
    }
    let (status, _) = get(&s, "/api/item?id=..%2Fsecret");
    assert_eq!(status, 404);
    cleanup(&res);
}

fn wait_phase(s: &State, id: u64, want: &str) -> Value {
    let t = Instant::now();
    loop {
        let (_, body) = get(s, &format!("/api/jobs/{id}"));
        let v: Value = serde_json::from_slice(&body).unwrap();
        if v["phase"] == want {
            return v;
        }
        assert!(t.elapsed() < Duration::from_secs(20), "job {id} is {v}, not {want}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn runs_use_the_lab_and_bad_input_names_its_field() {
    let res = results_dir("runs");
    let lab = fake();
    let s = state(&res, Arc::clone(&lab), 2);
    let ok = json!({ "process": "two_choice", "options": { "n": "10", "seed": "3" } });
    let (status, v) = post(&s, "/api/run", &ok);
    assert_eq!(status, 202, "{v}");
    let done = wait_phase(&s, v["job"].as_u64().unwrap(), "done");
    let run = &done["result"]["runs"][0];
    assert_eq!(run["command"], "ballast simulate --process two_choice --n 10 --seed 3");
    assert_eq!(run["config"], "runs = 1\n");
    let bad = json!({ "process": "two_choice", "options": { "n": "bad" } });
    let (status, v) = post(&s, "/api/run", &bad);
    assert_eq!(status, 400);
    assert_eq!(v["error"]["field"], "n");
    assert!(v["error"]["message"].as_str().unwrap().starts_with("invalid value 'bad'"));
    for refused in [json!({ "threads": "8" }), json!({ "nope": "1" }), json!({ "n": "file:x" })] {
        let (status, v) =
            post(&s, "/api/run", &json!({ "process": "two_choice", "options": refused }));
        assert_eq!(status, 400, "{refused}: {v}");
    }
    let file = json!({ "process": "two_choice", "params": { "p": "file:path=/etc/passwd" } });
    let (status, v) = post(&s, "/api/run", &file);
    assert_eq!(status, 400);
    assert!(v["error"]["message"].as_str().unwrap().contains("read files on the server"));
    cleanup(&res);
}

#[test]
fn the_pool_is_bounded_and_a_stop_ends_only_its_job() {
    let res = results_dir("pool");
    let lab = fake();
    let s = state(&res, Arc::clone(&lab), 2);
    let forever = json!({ "process": "two_choice", "options": { "seed": "forever" } });
    let (_, a) = post(&s, "/api/run", &forever);
    let (_, b) = post(&s, "/api/run", &forever);
    let (a, b) = (a["job"].as_u64().unwrap(), b["job"].as_u64().unwrap());
    let (status, v) = post(&s, "/api/run", &forever);
    assert_eq!(status, 503, "a third job with two workers: {v}");
    assert!(v["error"]["message"].as_str().unwrap().starts_with("busy: 2 runs"));
    let (status, _) = post(&s, "/api/animate", &json!({ "process": "two_choice" }));
    assert_eq!(status, 503, "an animation takes a worker too");
    // Both run; stopping a interrupts b as well, which runs its simulation again.
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(post(&s, &format!("/api/jobs/{a}/stop"), &json!({})).0, 200);
    wait_phase(&s, a, "stopped");
    let t = Instant::now();
    loop {
        let (_, body) = get(&s, &format!("/api/jobs/{b}"));
        let v: Value = serde_json::from_slice(&body).unwrap();
        if v["restarts"].as_u64() == Some(1) {
            assert_eq!(v["phase"], "running");
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(20), "b was not restarted: {v}");
        std::thread::sleep(Duration::from_millis(10));
    }
    // The process-wide interrupt is cleared once the drain is over: b's restart may be seen a
    // moment before the clearing, and other tests of this binary may stop their own jobs.
    let t = Instant::now();
    while ballast_runner::interrupt_requested() {
        assert!(t.elapsed() < Duration::from_secs(20), "not cleared once the drain is over");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(post(&s, &format!("/api/jobs/{b}/stop"), &json!({})).0, 200);
    wait_phase(&s, b, "stopped");
    assert_eq!(post(&s, "/api/jobs/999/stop", &json!({})).0, 404);
    let (status, _) = post(&s, "/api/run", &json!({ "process": "two_choice" }));
    assert_eq!(status, 202, "the workers are free again");
    cleanup(&res);
}

#[test]
fn an_animation_is_frames_of_the_engine_and_its_bounds_name_fields() {
    let res = results_dir("animate");
    let s = state(&res, fake(), 2);
    let body = json!({ "process": "two_choice", "n": "50", "m": "500", "step": "25", "seed": "4" });
    let (status, v) = post(&s, "/api/animate", &body);
    assert_eq!(status, 200, "{v}");
    let frames = v["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 21, "the start and every 25 balls");
    assert_eq!(frames[20]["balls"], json!(500.0));
    let (_, again) = post(&s, "/api/animate", &body);
    assert_eq!(again, v, "the same seed gives the same frames");
    let big = json!({ "process": "two_choice", "n": "20000", "m": "500", "step": "25" });
    let (status, v) = post(&s, "/api/animate", &big);
    assert_eq!(status, 400);
    assert_eq!(v["error"]["field"], "n", "{v}");
    let long = json!({ "process": "two_choice", "n": "50", "m": "500000", "step": "1" });
    let (status, v) = post(&s, "/api/animate", &long);
    assert_eq!(status, 400);
    assert_eq!(v["error"]["field"], "m", "{v}");
    let step = json!({ "process": "two_choice", "n": "50", "m": "500", "step": "x" });
    assert_eq!(post(&s, "/api/animate", &step).1["error"]["field"], "step");
    cleanup(&res);
}

#[test]
fn a_panicking_simulation_fails_its_job_and_frees_its_worker() {
    let res = results_dir("panic");
    let s = state(&res, fake(), 1);
    let (_, v) =
        post(&s, "/api/run", &json!({ "process": "two_choice", "options": { "seed": "panic" } }));
    let failed = wait_phase(&s, v["job"].as_u64().unwrap(), "failed");
    assert!(failed["error"]["message"].as_str().unwrap().contains("a bug"), "{failed}");
    let t = Instant::now();
    loop {
        let (status, v) = post(&s, "/api/run", &json!({ "process": "two_choice" }));
        if status == 202 {
            wait_phase(&s, v["job"].as_u64().unwrap(), "done");
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(20), "the worker was not freed: {v}");
        std::thread::sleep(Duration::from_millis(10));
    }
    cleanup(&res);
}

/// One raw HTTP/1.1 request; the status and body of the answer.
fn http(addr: std::net::SocketAddr, head: &str, body: &str) -> (u16, String) {
    let mut c = TcpStream::connect(addr).unwrap();
    let req =
        format!("{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
    c.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    c.read_to_string(&mut out).unwrap();
    let status = out.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, out.split("\r\n\r\n").nth(1).unwrap_or_default().to_owned())
}

#[test]
fn over_http_hosts_and_content_types_are_checked() {
    let res = results_dir("http");
    let server = ballast_serve::start(ServeOptions::new(0, &res), fake()).unwrap();
    let addr = server.addr();
    assert!(addr.ip().is_loopback());
    let host = format!("Host: 127.0.0.1:{}", addr.port());
    assert_eq!(http(addr, &format!("GET /api/gallery HTTP/1.1\r\n{host}"), "").0, 200);
    let (status, body) = http(addr, "GET /files/../../secret.txt HTTP/1.1\r\nHost: localhost", "");
    assert_eq!(status, 404);
    assert!(!body.contains("do not serve"));
    assert_eq!(http(addr, "GET / HTTP/1.1\r\nHost: evil.example:80", "").0, 403);
    let run = r#"{"process":"two_choice"}"#;
    let form = format!("POST /api/run HTTP/1.1\r\n{host}\r\nContent-Type: text/plain");
    assert_eq!(http(addr, &form, run).0, 415, "a form post of another site is refused");
    let ok = format!("POST /api/run HTTP/1.1\r\n{host}\r\nContent-Type: application/json");
    assert_eq!(http(addr, &ok, run).0, 202);
    server.stop();
    assert!(ballast_serve::start(ServeOptions::new(0, res.join("missing")), fake()).is_err());
    cleanup(&res);
}
