//! The HTTP routes: the page and its assets, the gallery's API and files, the playground's
//! jobs and the animation.
//!
//! | route | answer |
//! | --- | --- |
//! | `GET /`, `/app.js`, `/app.css` | the embedded page ([`crate::assets`]) |
//! | `GET /api/gallery` | every item: id, paper, title, verdict |
//! | `GET /api/item?id=PAPER/ITEM` | one item: metadata, CSV rows as written, report |
//! | `GET /files/PATH` | a file inside the results directory, nothing else |
//! | `GET /api/form` | the options of `ballast simulate` and `ballast list` |
//! | `POST /api/run` | check a run (and its "compare with") and start it as a job |
//! | `GET /api/jobs/ID`, `POST /api/jobs/ID/stop` | a job's status; its Stop |
//! | `POST /api/animate` | the frames of one animated run |
//!
//! A POST must carry `Content-Type: application/json` (a page of another site cannot send
//! that without a preflight this server never grants), and while the server listens on a
//! loopback address it answers only requests whose `Host` is a loopback name.

use std::io::Read as _;
use std::sync::Arc;

use serde_json::{json, Map, Value};
use tiny_http::{Header, Method, Request, Response};

use crate::animation;
use crate::gallery::Results;
use crate::jobs::Jobs;
use crate::playground::{self, error_value, Planned};
use crate::{assets, Lab, LabError, LabErrorKind};

/// The most bytes of a request body.
const MAX_BODY: u64 = 64 * 1024;

/// What every request handler shares.
pub struct State {
    results: Results,
    jobs: Arc<Jobs>,
    lab: Arc<dyn Lab>,
    /// Whether the server listens on a loopback address (then `Host` must be loopback).
    loopback: bool,
}

impl State {
    /// The state of a server over `results` and `lab` with `workers` places.
    pub fn new(results: Results, lab: Arc<dyn Lab>, workers: usize, loopback: bool) -> Self {
        let jobs = Arc::new(Jobs::new(Arc::clone(&lab), workers));
        Self { results, jobs, lab, loopback }
    }
}

/// An answer: status, content type and body.
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Content type.
    pub content_type: &'static str,
    /// Body.
    pub body: Vec<u8>,
}

impl Reply {
    fn json(status: u16, v: &Value) -> Self {
        Self { status, content_type: "application/json", body: v.to_string().into_bytes() }
    }

    fn error(status: u16, message: &str) -> Self {
        Self::json(status, &json!({ "error": { "kind": "request", "message": message } }))
    }

    fn lab_error(e: &LabError) -> Self {
        let status = if e.kind == LabErrorKind::BadInput { 400 } else { 500 };
        Self::json(status, &json!({ "error": error_value(e) }))
    }
}

/// Reads `req`, answers it and logs failures to send.
pub fn answer(state: &State, mut req: Request) {
    let reply = match checked_body(&mut req, state.loopback) {
        Ok(body) => route(state, req.method(), req.url(), &body),
        Err(reply) => reply,
    };
    let headers = [
        ("Content-Type", reply.content_type),
        ("X-Content-Type-Options", "nosniff"),
        ("Cache-Control", "no-store"),
        (
            "Content-Security-Policy",
            "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:",
        ),
    ];
    let mut response = Response::from_data(reply.body).with_status_code(reply.status);
    for (k, v) in headers {
        if let Ok(h) = Header::from_bytes(k.as_bytes(), v.as_bytes()) {
            response.add_header(h);
        }
    }
    if let Err(e) = req.respond(response) {
        tracing::debug!("answering a request: {e}");
    }
}

/// The body of `req` after the host and content-type checks, or the refusal.
fn checked_body(req: &mut Request, loopback: bool) -> Result<Vec<u8>, Reply> {
    let header = |name: &'static str| {
        req.headers()
            .iter()
            .find(|h| h.field.equiv(name))
            .map(|h| h.value.as_str().to_owned())
            .unwrap_or_default()
    };
    if loopback && !host_is_loopback(&header("Host")) {
        return Err(Reply::error(403, "this server answers loopback host names only"));
    }
    if *req.method() == Method::Post && !header("Content-Type").starts_with("application/json") {
        return Err(Reply::error(415, "a POST carries Content-Type: application/json"));
    }
    let mut body = Vec::new();
    let mut reader = req.as_reader().take(MAX_BODY + 1);
    reader.read_to_end(&mut body).map_err(|e| Reply::error(400, &e.to_string()))?;
    if body.len() as u64 > MAX_BODY {
        return Err(Reply::error(413, "request body over 64 KiB"));
    }
    Ok(body)
}

/// Whether a `Host` header names a loopback address (with or without a port).
pub fn host_is_loopback(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The answer to `method url` with `body`.
pub fn route(state: &State, method: &Method, url: &str, body: &[u8]) -> Reply {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    match (method, path) {
        (Method::Get, "/") => asset("index.html"),
        (Method::Get, "/app.js") => asset("app.js"),
        (Method::Get, "/app.css") => asset("app.css"),
        (Method::Get, "/favicon.ico") => {
            Reply { status: 204, content_type: "image/x-icon", body: Vec::new() }
        }
        (Method::Get, "/api/gallery") => Reply::json(200, &json!(state.results.items())),
        (Method::Get, "/api/item") => match param(query, "id") {
            Some(id) => match state.results.item(&id) {
                Ok(v) => Reply::json(200, &v),
                Err(e) => Reply::error(404, &e),
            },
            None => Reply::error(400, "missing ?id=PAPER/ITEM"),
        },
        (Method::Get, p) if p.starts_with("/files/") => file(state, &p["/files/".len()..]),
        (Method::Get, "/api/form") => Reply::json(200, &playground::form(state.lab.as_ref())),
        (Method::Get, "/api/status") => Reply::json(
            200,
            &json!({ "workers": state.jobs.limit(), "running": state.jobs.running() }),
        ),
        (Method::Post, "/api/run") => with_object(body, |o| run(state, o)),
        (Method::Post, "/api/animate") => with_object(body, |o| animate(state, o)),
        (Method::Get, p) if p.starts_with("/api/jobs/") => {
            match p["/api/jobs/".len()..].parse::<u64>().ok().and_then(|id| state.jobs.status(id)) {
                Some(s) => Reply::json(200, &json!(s)),
                None => Reply::error(404, "no such job"),
            }
        }
        (Method::Post, p) if p.starts_with("/api/jobs/") && p.ends_with("/stop") => {
            let id = p["/api/jobs/".len()..p.len() - "/stop".len()].parse::<u64>().ok();
            match id.map(|id| state.jobs.stop(id)) {
                Some(true) => Reply::json(200, &json!({ "stopping": true })),
                _ => Reply::error(404, "no such job"),
            }
        }
        _ => Reply::error(404, "no such page"),
    }
}

fn asset(name: &str) -> Reply {
    match assets::get(name) {
        Some((content_type, text)) => {
            Reply { status: 200, content_type, body: text.as_bytes().to_vec() }
        }
        None => Reply::error(404, "no such asset"),
    }
}

fn file(state: &State, raw: &str) -> Reply {
    let rel = percent_decode(raw);
    let path = match state.results.resolve(&rel) {
        Ok(p) => p,
        Err(e) => return Reply::error(404, &e),
    };
    let content_type = match path.extension().and_then(|x| x.to_str()) {
        Some("svg") => "image/svg+xml",
        Some("csv") => "text/csv; charset=utf-8",
        Some("json") => "application/json",
        Some("md") => "text/markdown; charset=utf-8",
        Some("txt") | Some("toml") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    };
    match std::fs::read(&path) {
        Ok(body) => Reply { status: 200, content_type, body },
        Err(_) => Reply::error(404, &format!("`{rel}`: cannot be read")),
    }
}

/// `%XX` escapes decoded (bytes that are not UTF-8 become U+FFFD, and so match no file).
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (b[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (c, _) => {
                out.push(if c == b'+' { b' ' } else { c });
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn param(query: &str, key: &str) -> Option<String> {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| percent_decode(v))
}

fn with_object(body: &[u8], f: impl FnOnce(&Map<String, Value>) -> Reply) -> Reply {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(o)) => f(&o),
        Ok(_) => Reply::error(400, "the body is not a JSON object"),
        Err(e) => Reply::error(400, &format!("the body is not JSON: {e}")),
    }
}

fn object(o: &Map<String, Value>, key: &str) -> Map<String, Value> {
    o.get(key).and_then(Value::as_object).cloned().unwrap_or_default()
}

fn text<'a>(o: &'a Map<String, Value>, key: &str) -> &'a str {
    o.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// `{process, params, options, compare: {process, params}?}` → a job, after the command
/// line checked every run.
fn run(state: &State, o: &Map<String, Value>) -> Reply {
    let lab = state.lab.as_ref();
    let options = object(o, "options");
    let mut runs: Vec<Planned> = Vec::new();
    let mut sides = vec![(text(o, "process").to_owned(), object(o, "params"))];
    if let Some(c) = o.get("compare").and_then(Value::as_object) {
        sides.push((text(c, "process").to_owned(), object(c, "params")));
    }
    for (which, (process, params)) in sides.iter().enumerate() {
        let planned = playground::argv_of(lab, process, params, &options)
            .and_then(|argv| playground::plan(lab, process, argv));
        match planned {
            Ok(p) => runs.push(p),
            Err(e) => {
                let mut v = error_value(&e);
                v["which"] = json!(which);
                return Reply::json(400, &json!({ "error": v }));
            }
        }
    }
    let label = format!("{} run(s) queued", runs.len());
    match state.jobs.submit(label, playground::work(runs)) {
        Ok(id) => Reply::json(202, &json!({ "job": id })),
        Err(busy) => Reply::json(503, &json!({ "error": { "kind": "busy", "message": busy } })),
    }
}

/// `{process, params, n, m, batch?, step?, tie_break?, seed?}` (values as text) → frames.
fn animate(state: &State, o: &Map<String, Value>) -> Reply {
    let s = |k: &str| o.get(k).map(value_text).unwrap_or_default().trim().to_owned();
    let params: Vec<(String, String)> = object(o, "params")
        .iter()
        .map(|(k, v)| (k.clone(), value_text(v).trim().to_owned()))
        .filter(|(_, v)| !v.is_empty())
        .collect();
    let mut options = Map::new();
    for (key, long) in [("n", "n"), ("m", "m"), ("batch", "batch"), ("tie_break", "tie-break")] {
        options.insert(long.into(), json!(s(key)));
    }
    options.insert("seed".into(), json!(s("seed")));
    let pmap: Map<String, Value> = params.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    let lab = state.lab.as_ref();
    let checked = playground::argv_of(lab, &s("process"), &pmap, &options)
        .and_then(|argv| playground::plan(lab, "animation", argv));
    if let Err(e) = checked {
        return Reply::lab_error(&e);
    }
    let num = |k: &str, default: u64| s(k).parse::<u64>().unwrap_or(default);
    let req = animation::Request {
        process: s("process"),
        params,
        n: num("n", 0),
        m: num("m", 0),
        batch: s("batch").parse().ok(),
        step: num("step", 1),
        tie_break: Some(s("tie_break")).filter(|t| !t.is_empty()).unwrap_or("random".into()),
        seed: num("seed", 1),
    };
    if !s("step").is_empty() && s("step").parse::<u64>().is_err() {
        return animation_error("--step: expected a whole number of balls per frame".into());
    }
    let Ok(_slot) = state.jobs.slot() else {
        let busy = crate::jobs::busy_message(state.jobs.limit());
        return Reply::json(503, &json!({ "error": { "kind": "busy", "message": busy } }));
    };
    match animation::animate(&req) {
        Ok(v) => Reply::json(200, &v),
        Err(e) => animation_error(e),
    }
}

fn animation_error(message: String) -> Reply {
    Reply::lab_error(&LabError { kind: LabErrorKind::BadInput, message })
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for ok in ["127.0.0.1:8765", "localhost:1", "LOCALHOST", "[::1]:80", "127.0.0.2"] {
            assert!(host_is_loopback(ok), "{ok}");
        }
        for bad in
            ["", "evil.example:8765", "10.0.0.1:80", "[fe80::1]:80", "localhost.evil.example"]
        {
            assert!(!host_is_loopback(bad), "{bad}");
        }
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%2Fb%2e%2E+c"), "a/b.. c");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }
}
