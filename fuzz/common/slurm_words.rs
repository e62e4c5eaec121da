//! The check that a Slurm script written by `ballast slurm` means what it should, whatever
//! the names in it: shared by the fuzz target `slurm_script` and the test of
//! `crates/ballast-cli/tests/hostile.rs` that runs it over random names.
//!
//! The script for a spec whose every text value is a distinct placeholder word is cut into
//! its fixed text and its slots (each placeholder, quoted or bare). The script for the spec
//! under test must then be the same fixed text, with, at each quoted slot, one bash word
//! (single quotes, `$'…'`, backslash escapes) that a small parser written here from bash's
//! rules decodes to exactly the value, on one line; and at each bare slot (the `#SBATCH`
//! lines, read without a shell) the value itself, free of white space, control characters,
//! quotes, `$`, `` ` ``, `\` and `%`. A spec is refused exactly when a value cannot be
//! written: a NUL, a path for an `#SBATCH` line with one of those characters, a partition or
//! account outside letters, digits and `- _ : . , +`.

use ballast_cli::{render_slurm_script, SlurmScriptSpec};

/// What a slot holds.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Value {
    Id,
    Paper,
    Item,
    JobName,
    Config,
    Out,
    Logs,
    Workdir,
    Ballast,
    Partition,
    Account,
}

/// The placeholder spec: every text value a distinct word no template text contains; the
/// scale and which of partition and account are set as in `like`.
fn placeholders(like: &SlurmScriptSpec) -> SlurmScriptSpec {
    SlurmScriptSpec {
        id: "zq90qz/zq91qz".into(),
        config: "zq01qz".into(),
        out: "zq02qz".into(),
        logs: "zq03qz".into(),
        workdir: "zq04qz".into(),
        ballast: "zq05qz".into(),
        shards: 3,
        cpus: 2,
        mem: "4G".into(),
        time: "04:00:00".into(),
        partition: like.partition.as_ref().map(|_| "zq06qz".into()),
        account: like.account.as_ref().map(|_| "zq07qz".into()),
        scale: like.scale,
    }
}

/// The placeholder texts, quoted ones first and longer before shorter.
fn patterns() -> Vec<(String, bool, Value)> {
    let plain = [
        ("zq90qz/zq91qz", Value::Id),
        ("ballast-zq90qz-zq91qz", Value::JobName),
        ("zq90qz", Value::Paper),
        ("zq91qz", Value::Item),
        ("zq01qz", Value::Config),
        ("zq02qz", Value::Out),
        ("zq03qz", Value::Logs),
        ("zq04qz", Value::Workdir),
        ("zq05qz", Value::Ballast),
        ("zq06qz", Value::Partition),
        ("zq07qz", Value::Account),
    ];
    let mut v: Vec<(String, bool, Value)> =
        plain.iter().map(|(t, s)| (format!("'{t}'"), true, *s)).collect();
    v.extend(plain.iter().map(|(t, s)| (t.to_string(), false, *s)));
    v
}

/// A piece of the template: fixed text, or a slot (quoted or bare).
#[derive(Debug)]
enum Piece {
    Text(String),
    Slot(bool, Value),
}

fn template(like: &SlurmScriptSpec) -> Vec<Piece> {
    let script = render_slurm_script(&placeholders(like)).expect("the placeholder spec renders");
    let pats = patterns();
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut rest = script.as_str();
    'outer: while let Some(c) = rest.chars().next() {
        for (p, quoted, value) in &pats {
            if let Some(after) = rest.strip_prefix(p.as_str()) {
                pieces.push(Piece::Text(std::mem::take(&mut text)));
                pieces.push(Piece::Slot(*quoted, *value));
                rest = after;
                continue 'outer;
            }
        }
        text.push(c);
        rest = &rest[c.len_utf8()..];
    }
    pieces.push(Piece::Text(text));
    for p in &pieces {
        if let Piece::Text(t) = p {
            assert!(!t.contains("zq"), "a placeholder outside the slots: {t:?}");
        }
    }
    pieces
}

/// One bash word at the start of `s`, made of `'…'`, `$'…'` and `\c` parts: its bytes and
/// its length, or `None` if `s` does not start with such a word (or uses an escape this
/// parser does not know).
fn bash_word(s: &str) -> Option<(Vec<u8>, usize)> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        if b[i..].starts_with(b"$'") {
            i += 2;
            loop {
                match *b.get(i)? {
                    b'\'' => break,
                    b'\\' => {
                        let (bytes, used) = ansi_escape(&b[i + 1..])?;
                        out.extend(bytes);
                        i += 1 + used;
                    }
                    c => {
                        out.push(c);
                        i += 1;
                    }
                }
            }
            i += 1;
        } else if b[i] == b'\'' {
            let end = i + 1 + b[i + 1..].iter().position(|&c| c == b'\'')?;
            out.extend(&b[i + 1..end]);
            i = end + 1;
        } else if b[i] == b'\\' && i + 1 < b.len() && b[i + 1] != b'\n' {
            let c = s[i + 1..].chars().next()?;
            out.extend(c.to_string().bytes());
            i += 1 + c.len_utf8();
        } else {
            break;
        }
    }
    (i > 0).then_some((out, i))
}

/// A backslash escape inside `$'…'` (after the backslash): its bytes and its length.
fn ansi_escape(b: &[u8]) -> Option<(Vec<u8>, usize)> {
    let hex = |c: u8| (c as char).to_digit(16);
    let simple = match *b.first()? {
        b'a' => 7,
        b'b' => 8,
        b'e' | b'E' => 27,
        b'f' => 12,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'v' => 11,
        b'\\' => b'\\',
        b'\'' => b'\'',
        b'"' => b'"',
        b'?' => b'?',
        b'x' => {
            let digits: Vec<u32> = b[1..].iter().take(2).map_while(|&c| hex(c)).collect();
            if digits.is_empty() {
                return None;
            }
            let v = digits.iter().fold(0, |a, d| a * 16 + d);
            return Some((vec![v as u8], 1 + digits.len()));
        }
        // Octal, \u, \U and \c are never written by `quote`: refuse rather than guess.
        _ => return None,
    };
    Some((vec![simple], 1))
}

fn directive_ok(v: &str) -> bool {
    !v.is_empty()
        && !v.chars().any(|c| c.is_whitespace() || c.is_control() || "'\"$`\\%".contains(c))
}

fn plain_ok(v: &str) -> bool {
    !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || "-_:.,+".contains(c))
}

/// Whether the spec holds a value that cannot be written (see the module docs).
fn must_refuse(spec: &SlurmScriptSpec) -> bool {
    let texts = [&spec.id, &spec.config, &spec.out, &spec.logs, &spec.workdir, &spec.ballast];
    texts.iter().any(|t| t.contains('\0'))
        || !directive_ok(&spec.logs)
        || !directive_ok(&spec.workdir)
        || spec.partition.as_deref().is_some_and(|p| !plain_ok(p))
        || spec.account.as_deref().is_some_and(|a| !plain_ok(a))
}

fn expected(spec: &SlurmScriptSpec, v: Value) -> Option<&str> {
    let (paper, item) = spec.id.rsplit_once('/').unwrap_or(("", &spec.id));
    Some(match v {
        Value::Id => &spec.id,
        Value::Paper => paper,
        Value::Item => item,
        Value::JobName => return None,
        Value::Config => &spec.config,
        Value::Out => &spec.out,
        Value::Logs => &spec.logs,
        Value::Workdir => &spec.workdir,
        Value::Ballast => &spec.ballast,
        Value::Partition => spec.partition.as_deref()?,
        Value::Account => spec.account.as_deref()?,
    })
}

/// Checks the script of `spec` (`mem`, `time`, `shards` and `cpus` as in the placeholder
/// spec: 4G, 04:00:00, 3, 2) as the module docs say. `Err` describes the first mismatch.
pub fn check(spec: &SlurmScriptSpec) -> Result<(), String> {
    let script = match render_slurm_script(spec) {
        Err(_) if must_refuse(spec) => return Ok(()),
        Err(e) => return Err(format!("refused a spec that can be written: {e}")),
        Ok(_) if must_refuse(spec) => return Err("wrote a spec that cannot be written".into()),
        Ok(s) => s,
    };
    let mut rest = script.as_str();
    let mut job_name: Option<String> = None;
    for piece in template(spec) {
        match piece {
            Piece::Text(t) => {
                rest = rest.strip_prefix(t.as_str()).ok_or_else(|| {
                    format!("fixed text {t:?} expected, found {:?}", &rest[..rest.len().min(80)])
                })?;
            }
            Piece::Slot(quoted, value) => {
                let (got, len) = if quoted {
                    let (bytes, len) = bash_word(rest)
                        .ok_or_else(|| format!("{value:?}: no quoted word at {rest:.80?}"))?;
                    if rest[..len].chars().any(char::is_control) {
                        return Err(format!(
                            "{value:?}: a control character in {:?}",
                            &rest[..len]
                        ));
                    }
                    let got = String::from_utf8(bytes).map_err(|e| format!("{value:?}: {e}"))?;
                    (got, len)
                } else {
                    let len = match expected(spec, value) {
                        Some(want) if rest.starts_with(want) => want.len(),
                        Some(want) => return Err(format!("{value:?}: {want:?} expected bare")),
                        None => rest
                            .find(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c)))
                            .unwrap_or(rest.len()),
                    };
                    (rest[..len].to_string(), len)
                };
                match expected(spec, value) {
                    Some(want) if got != want => {
                        return Err(format!("{value:?}: {got:?} where {want:?} was meant"))
                    }
                    Some(want) if !quoted && !directive_ok(want) => {
                        return Err(format!("{value:?}: {want:?} on an #SBATCH line"))
                    }
                    Some(_) => {}
                    None => {
                        let ok = got.strip_prefix("ballast-").is_some_and(|n| {
                            n.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
                        });
                        if !ok || job_name.get_or_insert_with(|| got.clone()) != &got {
                            return Err(format!("job name {got:?}"));
                        }
                    }
                }
                rest = &rest[len..];
            }
        }
    }
    if rest.is_empty() {
        Ok(())
    } else {
        Err(format!("text after the script: {rest:.80?}"))
    }
}
