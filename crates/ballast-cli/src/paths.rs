//! Files the command line writes where the user said: the one check that no output names an
//! input or another output ([`distinct`]), and the atomic write of one file
//! ([`write_atomic`]).
//!
//! Two paths name the same file when their canonical forms are equal (so `./x`, `x`,
//! `dir/../x` and a symbolic link to `x` are one file; for a path that does not exist yet
//! its directory is canonicalised and its name appended), or, when both exist, when they
//! are on the same device with the same inode (so a hard link is caught too). A clash is bad
//! input (exit 2) naming both paths and their roles, found before anything is written.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::error::BadInput;

/// What identifies a file: its canonical path (or the best guess for one that does not
/// exist) and, if it exists, its device and inode.
struct Identity {
    canonical: PathBuf,
    inode: Option<(u64, u64)>,
}

#[cfg(unix)]
fn inode(p: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn inode(_: &Path) -> Option<(u64, u64)> {
    None
}

fn identity(p: &Path) -> Identity {
    let absolute = || std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let canonical = std::fs::canonicalize(p).unwrap_or_else(|_| {
        // Not there yet: its directory's canonical form and its name.
        match (p.parent(), p.file_name()) {
            (Some(dir), Some(name)) => {
                let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
                std::fs::canonicalize(dir).map_or_else(|_| absolute(), |d| d.join(name))
            }
            _ => absolute(),
        }
    });
    Identity { canonical, inode: inode(p) }
}

fn same(a: &Identity, b: &Identity) -> bool {
    a.canonical == b.canonical || (a.inode.is_some() && a.inode == b.inode)
}

/// Refuses (as bad input) an output that names one of the `inputs` or another output. Each
/// path comes with its role for the message (`"-o"`, `"the config"`, …).
pub fn distinct(inputs: &[(&str, &Path)], outputs: &[(&str, &Path)]) -> Result<(), BadInput> {
    let ins: Vec<Identity> = inputs.iter().map(|(_, p)| identity(p)).collect();
    let outs: Vec<Identity> = outputs.iter().map(|(_, p)| identity(p)).collect();
    for (i, (role, path)) in outputs.iter().enumerate() {
        let clash =
            inputs.iter().zip(&ins).map(|(named, id)| (named, id, "input")).chain(
                outputs[..i].iter().zip(&outs[..i]).map(|(named, id)| (named, id, "output")),
            );
        for ((other_role, other), id, kind) in clash {
            if same(&outs[i], id) {
                return Err(BadInput::new(format!(
                    "output `{}` ({role}) is the same file as the {kind} `{}` ({other_role}): \
                     it would be overwritten; write the output somewhere else",
                    path.display(),
                    other.display()
                )));
            }
        }
    }
    Ok(())
}

/// Refuses an item's outputs `<out>/<paper>/<item>.{csv,json,svg,md}` (what `ballast run`
/// and `ballast merge` write for `exp`) when one names an input (the config, a shard file).
pub fn item_outputs(
    exp: &ballast_runner::Experiment,
    out: &Path,
    inputs: &[(&str, &Path)],
) -> Result<(), BadInput> {
    let dir = out.join(exp.paper());
    let files: Vec<PathBuf> = ["csv", "json", "svg", "md"]
        .iter()
        .map(|e| dir.join(format!("{}.{e}", exp.item())))
        .collect();
    let outputs: Vec<(&str, &Path)> = files.iter().map(|p| ("--out", p.as_path())).collect();
    distinct(inputs, &outputs)
}

/// A name no one can guess for a temporary beside a file: the process id and 64 bits from
/// the standard library's per-process random hash keys, the time and a counter.
fn unguessable() -> String {
    use std::hash::{BuildHasher as _, Hasher as _};
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(nanos);
    h.write_u64(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    format!("{}.{:016x}", std::process::id(), h.finish())
}

/// Writes `bytes` to `path` so that no reader ever sees a partial file: a new temporary
/// beside it, created exclusively (`create_new`: it fails rather than open an existing file
/// or follow a symbolic link planted at that name) under an unguessable name, written,
/// synced, then renamed over `path`. On failure the temporary is removed and `path` is
/// untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "the path names no file")
    })?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut attempts = 0;
    let (tmp, mut file) = loop {
        let tmp = dir.join(format!(".{}.{}.tmp", name.to_string_lossy(), unguessable()));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempts < 8 => {
                attempts += 1;
            }
            Err(e) => return Err(e),
        }
    };
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ballast-paths-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_same_file_under_other_names_is_caught() {
        let d = scratch("same");
        let x = d.join("x.csv");
        std::fs::write(&x, "a").unwrap();
        std::fs::hard_link(&x, d.join("hard.csv")).unwrap();
        let dotted = d.join(".").join("sub").join("..").join("x.csv");
        std::fs::create_dir_all(d.join("sub")).unwrap();
        for other in [x.clone(), dotted, d.join("hard.csv")] {
            let e = distinct(&[("RESULT", &x)], &[("-o", &other)]).unwrap_err().to_string();
            assert!(e.contains("x.csv") && e.contains(&*other.to_string_lossy()), "{e}");
        }
        // A new file beside it, and two outputs naming one new file.
        let new = d.join("y.svg");
        assert!(distinct(&[("RESULT", &x)], &[("-o", &new)]).is_ok());
        let again = d.join("sub/../y.svg");
        assert!(distinct(&[], &[("a", &new), ("b", &again)]).is_err());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn an_atomic_write_replaces_a_planted_link_not_its_target() {
        let d = scratch("atomic");
        let target = d.join("target");
        std::fs::write(&target, "keep").unwrap();
        let out = d.join("out.sh");
        #[cfg(unix)]
        std::os::unix::fs::symlink(&target, &out).unwrap();
        write_atomic(&out, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "new");
        let left: Vec<_> =
            std::fs::read_dir(&d).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(left.len(), 2, "a temporary was left: {left:?}");
        // A directory in the way: an error, and no temporary left.
        std::fs::create_dir_all(d.join("dir")).unwrap();
        assert!(write_atomic(&d.join("dir"), b"x").is_err());
        let left = std::fs::read_dir(&d).unwrap().count();
        assert_eq!(left, 3);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
