//! Files the command line writes where the user said: the one check that no output names an
//! input or another output ([`distinct`]). The files themselves are written by
//! `ballast_runner::files` (exclusive temporaries, atomic renames).
//!
//! Two paths name the same file when their canonical forms are equal (so `./x`, `x`,
//! `dir/../x` and a symbolic link to `x` are one file; for a path that does not exist yet
//! its directory is canonicalised and its name appended), or, when both exist, when they
//! are on the same device with the same inode (so a hard link is caught too). A clash is bad
//! input (exit 2) naming both paths and their roles, found before anything is written.

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
}
