//! The playground: the form of `ballast simulate`, a form's values as its arguments, and the
//! runs (one process, or two compared on the same seeds).
//!
//! The form is built from the command line's own option list and registry listing, so every
//! process, parameter, setting, weight law and engine it knows appears with its help text.
//! Submitted values become the argument words of `ballast simulate` ([`argv_of`]) and the
//! command line's library validates them: a refused value comes back with its message, and
//! [`field_of`] finds the form field that message names. Only what a terminal user of the
//! server's own machine could not be refused is refused here: options that change the
//! server's process rather than the run (`--threads`, `--json`, logging) and values that
//! would read a file on the server (`file:` kinds of `--start`, `--sampling`, `--graph`).

use serde_json::{json, Map, Value};

use crate::jobs::{JobCtx, Work};
use crate::{Lab, LabError, LabErrorKind};

/// Options of `ballast simulate` the form does not offer: the server's own concerns, and
/// `--print-config`, which the result shows anyway.
const SERVER_OPTIONS: &[&str] =
    &["threads", "json", "print-config", "verbose", "quiet", "log-format", "help"];

/// The form: the command line's options (without the server's own) and its listing.
pub fn form(lab: &dyn Lab) -> Value {
    let options: Vec<Value> = lab
        .simulate_options()
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|o| {
                    let long = o.get("long").and_then(Value::as_str).unwrap_or_default();
                    !SERVER_OPTIONS.contains(&long) && long != "process" && long != "param"
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    json!({ "options": options, "listing": lab.listing() })
}

fn bad(message: String) -> LabError {
    LabError { kind: LabErrorKind::BadInput, message }
}

/// The arguments of `ballast simulate` for `process` with `params` (name → value text) and
/// `options` (long flag → value text; `true`/`false` for switches; lines for repeatable
/// options). Empty values are left out; unknown or server-only options and `file:` values
/// are refused with a message naming the option.
pub fn argv_of(
    lab: &dyn Lab,
    process: &str,
    params: &Map<String, Value>,
    options: &Map<String, Value>,
) -> Result<Vec<String>, LabError> {
    let known = lab.simulate_options();
    let known = known.as_array().cloned().unwrap_or_default();
    let mut argv = vec!["--process".to_owned(), process.to_owned()];
    for (name, v) in params {
        let v = text(v);
        if !v.trim().is_empty() {
            refuse_file(&format!("--param {name}"), &v)?;
            argv.extend(["--param".to_owned(), format!("{name}={}", v.trim())]);
        }
    }
    for (long, v) in options {
        let spec = known.iter().find(|o| o.get("long").and_then(Value::as_str) == Some(long));
        let takes = spec.and_then(|o| o.get("takes")).and_then(Value::as_str);
        if SERVER_OPTIONS.contains(&long.as_str()) || long == "process" || long == "param" {
            return Err(bad(format!("--{long}: not an option of the playground's form")));
        }
        let Some(takes) = takes else {
            return Err(bad(format!("--{long}: unknown option of `ballast simulate`")));
        };
        let v = text(v);
        match takes {
            "flag" if v == "true" => argv.push(format!("--{long}")),
            "flag" if v.is_empty() || v == "false" => {}
            "flag" => return Err(bad(format!("--{long}: expected true or false, not {v:?}"))),
            "list" => {
                for line in v.lines().map(str::trim).filter(|l| !l.is_empty()) {
                    refuse_file(&format!("--{long}"), line)?;
                    argv.extend([format!("--{long}"), line.to_owned()]);
                }
            }
            _ if v.trim().is_empty() => {}
            _ => {
                refuse_file(&format!("--{long}"), &v)?;
                argv.extend([format!("--{long}"), v.trim().to_owned()]);
            }
        }
    }
    Ok(argv)
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Refuses a value that would make the server read one of its files.
fn refuse_file(what: &str, v: &str) -> Result<(), LabError> {
    let kind = v.trim().split(':').next().unwrap_or_default();
    if v.contains(':') && kind.trim() == "file" {
        return Err(bad(format!(
            "{what}: `file:` values read files on the server and are not offered in the \
             playground; run `ballast simulate` on the command line for them"
        )));
    }
    Ok(())
}

/// A lab error as the page shows it: kind, message and the form field it names.
pub fn error_value(e: &LabError) -> Value {
    let kind = match e.kind {
        LabErrorKind::BadInput => "bad_input",
        LabErrorKind::Interrupted => "interrupted",
        LabErrorKind::Failure => "failure",
    };
    json!({ "kind": kind, "message": e.message, "field": field_of(&e.message) })
}

/// The form field a command-line message names: `param:NAME` for a process parameter
/// ("parameter `beta`"), else the long option it mentions first (`n` for `--n <N>` or
/// "(set by --n)"), else `process`.
pub fn field_of(message: &str) -> String {
    if let Some(rest) = message.split("parameter `").nth(1) {
        if let Some(name) = rest.split('`').next().filter(|n| !n.is_empty()) {
            return format!("param:{name}");
        }
    }
    let mut rest = message;
    while let Some(at) = rest.find("--") {
        let tail = &rest[at + 2..];
        let long: String =
            tail.chars().take_while(|c| c.is_ascii_lowercase() || *c == '-').collect();
        if !long.is_empty() && !long.starts_with('-') {
            return long;
        }
        rest = tail;
    }
    "process".into()
}

/// `ballast simulate ARGS` with each word quoted for a POSIX shell where needed.
pub fn command_line(argv: &[String]) -> String {
    let quote = |w: &String| {
        let plain = !w.is_empty()
            && w.chars().all(|c| c.is_ascii_alphanumeric() || "_-=.,:/+@%".contains(c));
        if plain {
            w.clone()
        } else {
            format!("'{}'", w.replace('\'', r"'\''"))
        }
    };
    let words: Vec<String> = argv.iter().map(quote).collect();
    format!("ballast simulate {}", words.join(" "))
}

/// One run of a playground request: its arguments, command and config (checked).
pub struct Planned {
    /// The process name, for the page.
    pub label: String,
    /// The arguments of `ballast simulate`.
    pub argv: Vec<String>,
    /// The config `--print-config` prints.
    pub config: String,
}

/// Checks one run's arguments with the command line (`--print-config`: validation without
/// simulating) and keeps its config.
pub fn plan(lab: &dyn Lab, label: &str, argv: Vec<String>) -> Result<Planned, LabError> {
    let mut check = argv.clone();
    check.push("--print-config".into());
    let config = lab.simulate(&check)?;
    let config = config.as_str().map(str::to_owned).unwrap_or_else(|| config.to_string());
    Ok(Planned { label: label.to_owned(), argv, config })
}

/// The job of planned runs: each simulated in turn, the results in order; an error names
/// the run (`which`: 0 or 1).
pub fn work(runs: Vec<Planned>) -> Work {
    Box::new(move |ctx: &JobCtx<'_>| {
        let total = runs.len();
        let mut out = Vec::new();
        for (i, run) in runs.into_iter().enumerate() {
            ctx.step(format!("simulation {} of {total}: {}", i + 1, run.label));
            // One worker thread per run, so the pool's runs share the machine; the numbers
            // do not depend on the thread count.
            let mut argv = run.argv.clone();
            argv.extend(["--threads".to_owned(), "1".to_owned()]);
            let result = ctx.simulate(&argv).map_err(|e| {
                let mut v = error_value(&e);
                v["which"] = json!(i);
                v
            })?;
            out.push(json!({
                "label": run.label,
                "argv": run.argv,
                "command": command_line(&run.argv),
                "config": run.config,
                "result": result,
            }));
        }
        Ok(json!({ "runs": out }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_named_by_messages() {
        let cases = [
            ("invalid value 2 for parameter `beta` of process `one_plus_beta`", "param:beta"),
            ("invalid value 'abc' for '--n <N>': invalid digit found in string", "n"),
            ("invalid value 0 for `b`: expected an integer >= 1 (set by --batch)", "batch"),
            ("`--m` (the number of balls) is required", "m"),
            ("--weights: unknown weight law `foo`", "weights"),
            ("invalid value zzz for `tie_break` (set by --tie-break)", "tie-break"),
            ("something else", "process"),
        ];
        for (m, f) in cases {
            assert_eq!(field_of(m), f, "{m}");
        }
    }

    #[test]
    fn commands_are_quoted() {
        let argv: Vec<String> =
            ["--process", "two_choice", "--param", "p=1 2"].iter().map(|s| s.to_string()).collect();
        assert_eq!(command_line(&argv), "ballast simulate --process two_choice --param 'p=1 2'");
    }

    #[test]
    fn file_values_are_refused() {
        assert!(refuse_file("--start", "file:path=/etc/passwd").is_err());
        assert!(refuse_file("--graph", " file : x").is_err());
        assert!(refuse_file("--start", "uniform:k=5").is_ok());
    }
}
