//! How ballast writes files: exclusive temporaries, atomic replacement, output sets, and the
//! clean-up of temporaries left by a crashed run.
//!
//! **Temporaries.** A file `<dir>/<target>` is written to a temporary in the same directory
//! and renamed over `<target>`, so no reader ever sees half of it. The temporary is named
//!
//! ```text
//! .<target>.ballast-tmp-<pid>-<nonce>.tmp
//! ```
//!
//! with `<target>` the exact file name it will replace, `<pid>` the writer's process id and
//! `<nonce>` 16 hexadecimal digits from the operating system's random source, so the name
//! cannot be guessed in advance. It is created with `create_new` (`O_CREAT | O_EXCL`: a file
//! or a symbolic link already at that name makes the creation fail, and a final symbolic
//! link is never followed; another nonce is then drawn), and its writer holds an exclusive
//! lock on it (`flock`) from creation until it is renamed or removed.
//!
//! **Clean-up** ([`remove_stale_temporaries`]) removes a file only when all of these hold:
//! its name has exactly the form above for one of the target names it is given (compared
//! whole: cleaning `a.csv` never touches `.a.b.csv.…` or a user's `.a.x.tmp`); it is a regular
//! file, not a symbolic link or anything else (`lstat`; the file opened for the check must be
//! the one `lstat` saw); and no live process writes it: the lock can be taken (the kernel
//! drops a lock when its holder exits, however it exits). Where the file system has no locks
//! the recorded pid decides: on Linux the file is removed when `/proc/<pid>` does not exist,
//! elsewhere it is kept. Removal is `unlink`, which removes a name and never follows a link.
//! Names of the form `.<target>.<pid>.tmp` written by earlier versions are not recognised
//! and stay.
//!
//! **Output sets** ([`commit_set`]): every destination must be a regular file or absent
//! (checked before anything is written); all new files go to temporaries, each existing
//! destination is copied to a backup temporary, then the temporaries are renamed in turn.
//! When a rename fails, the ones already done are undone (each backup renamed back, a file
//! that did not exist before removed) and the error says so: the set on disk is the old one
//! or the new one, never a mix (short of a crash between two renames).

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::Error;

/// The marker between the target name and the writer's pid in a temporary's name.
const MARKER: &str = ".ballast-tmp-";

/// Attempts at drawing a free temporary name before giving up.
const ATTEMPTS: usize = 32;

/// The name of the temporary for file `target` written by process `pid` with `nonce` (see
/// the module docs).
pub fn temporary_name(target: &str, pid: u32, nonce: u64) -> String {
    format!(".{target}{MARKER}{pid}-{nonce:016x}.tmp")
}

/// The target name and pid of a temporary's name, or `None` when `name` is not exactly of
/// the form [`temporary_name`] writes.
fn parse_temporary_name(name: &str) -> Option<(&str, u32)> {
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (target, tail) = inner.rsplit_once(MARKER)?;
    let (pid, nonce) = tail.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let hex = nonce.len() == 16 && nonce.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if target.is_empty() || !digits(pid) || !hex {
        return None;
    }
    Some((target, pid.parse().ok()?))
}

/// A temporary file being written (see the module docs). Dropped without [`persist`]ing, it
/// is removed.
///
/// [`persist`]: Temporary::persist
#[derive(Debug)]
pub struct Temporary {
    path: PathBuf,
    file: Option<File>,
}

impl Temporary {
    /// Creates a fresh temporary for `target` in its directory, exclusively, and locks it.
    pub fn create(target: &Path) -> Result<Self, Error> {
        let dir = parent_of(target);
        let name =
            target.file_name().map(|n| n.to_string_lossy().into_owned()).ok_or_else(|| {
                Error::Output { path: target.to_path_buf(), message: "not a file name".to_string() }
            })?;
        let mut last = None;
        for _ in 0..ATTEMPTS {
            let nonce = getrandom::u64().map_err(|e| Error::Output {
                path: target.to_path_buf(),
                message: format!("no random name for a temporary: {e}"),
            })?;
            let path = dir.join(temporary_name(&name, std::process::id(), nonce));
            match create_exclusive(&path) {
                Ok(file) => {
                    // Without locks (some network file systems) the clean-up falls back on
                    // the pid in the name.
                    if let Err(e) = file.try_lock() {
                        tracing::debug!("cannot lock {}: {e}", path.display());
                    }
                    return Ok(Self { path, file: Some(file) });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(path),
                Err(e) => return Err(Error::io(&path, e)),
            }
        }
        Err(Error::Output {
            path: last.unwrap_or_else(|| target.to_path_buf()),
            message: format!("{ATTEMPTS} random temporary names were all taken"),
        })
    }

    /// Where the temporary is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `bytes`.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), Error> {
        match self.file.as_mut() {
            Some(f) => f.write_all(bytes).map_err(|e| Error::io(&self.path, e)),
            None => Err(Error::Output {
                path: self.path.clone(),
                message: "temporary already closed".to_string(),
            }),
        }
    }

    /// Renames the temporary to `dest` (replacing a file there). On failure the temporary
    /// is removed.
    pub fn persist(mut self, dest: &Path) -> Result<(), Error> {
        if let Some(f) = self.file.as_mut() {
            f.flush().map_err(|e| Error::io(&self.path, e))?;
        }
        std::fs::rename(&self.path, dest).map_err(|e| Error::io(dest, e))?;
        // Renamed: nothing left to remove; the lock goes with the file handle.
        self.path = PathBuf::new();
        self.file = None;
        Ok(())
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        self.file = None;
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Creates a new file at `path` for writing; fails when anything, a symbolic link included,
/// is there already (the link is not followed).
fn create_exclusive(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().write(true).create_new(true).open(path)
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Writes `bytes` to `path` through a [`Temporary`] in the same directory (created first if
/// missing) and a rename: no reader sees half a file, and nothing at a guessable name is
/// ever opened.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = parent_of(path);
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut tmp = Temporary::create(path)?;
    tmp.write_all(bytes)?;
    tmp.persist(path)
}

/// Removes, in `dir`, the temporaries of files named in `targets` that this program created
/// and whose writer is gone (the rules are in the module docs), logging each.
pub fn remove_stale_temporaries(dir: &Path, targets: &[String]) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let wanted: HashSet<&str> = targets.iter().map(String::as_str).collect();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some((target, pid)) = name.to_str().and_then(parse_temporary_name) else { continue };
        if !wanted.contains(target) {
            continue;
        }
        let path = e.path();
        match writer_gone(&path, pid) {
            Ok(true) => match std::fs::remove_file(&path) {
                Ok(()) => {
                    tracing::info!("removed {} (left by an interrupted run)", path.display())
                }
                Err(err) => tracing::warn!("cannot remove {}: {err}", path.display()),
            },
            Ok(false) => tracing::debug!("{} is being written: kept", path.display()),
            Err(why) => tracing::debug!("{} kept: {why}", path.display()),
        }
    }
}

/// Whether the temporary at `path` is a regular file whose writer (process `pid`) no longer
/// holds it; `Err` says why it is not considered ours.
fn writer_gone(path: &Path, pid: u32) -> Result<bool, String> {
    let seen = std::fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    if !seen.file_type().is_file() {
        return Err("not a regular file".to_string());
    }
    let file = File::open(path).map_err(|e| e.to_string())?;
    let opened = file.metadata().map_err(|e| e.to_string())?;
    if !same_file(&seen, &opened) {
        return Err("replaced while being checked".to_string());
    }
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(_)) => process_gone(pid),
    }
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    b.is_file() && a.len() == b.len()
}

/// Whether process `pid` is known to have exited (Linux's `/proc`; elsewhere unknown).
fn process_gone(pid: u32) -> Result<bool, String> {
    if pid == std::process::id() {
        return Ok(false);
    }
    if Path::new("/proc/self").exists() {
        Ok(!Path::new(&format!("/proc/{pid}")).exists())
    } else {
        Err("no file locks here and no way to tell whether its writer runs".to_string())
    }
}

/// What is at an output path before a set is written.
fn existing(path: &Path) -> Result<bool, Error> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() => Ok(true),
        Ok(m) => {
            let what = if m.is_dir() {
                "a directory"
            } else if m.file_type().is_symlink() {
                "a symbolic link"
            } else {
                "not a regular file"
            };
            Err(Error::Output {
                path: path.to_path_buf(),
                message: format!(
                    "exists and is {what}; outputs replace only regular files (move it away): \
                     nothing was written"
                ),
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// A copy of the regular file at `path` in a [`Temporary`] beside it (the file opened must
/// be the one `lstat` saw).
fn backup_of(path: &Path) -> Result<Temporary, Error> {
    let seen = std::fs::symlink_metadata(path).map_err(|e| Error::io(path, e))?;
    let mut from = File::open(path).map_err(|e| Error::io(path, e))?;
    let opened = from.metadata().map_err(|e| Error::io(path, e))?;
    if !seen.file_type().is_file() || !same_file(&seen, &opened) {
        return Err(Error::Output {
            path: path.to_path_buf(),
            message: "replaced while the outputs were being written".to_string(),
        });
    }
    let mut tmp = Temporary::create(path)?;
    if let Some(f) = tmp.file.as_mut() {
        std::io::copy(&mut from, f).map_err(|e| Error::io(tmp.path(), e))?;
    }
    Ok(tmp)
}

/// Writes a set of files as one: each `(path, bytes)` replaces `path`, and either all of
/// them are replaced or none (see the module docs). Returns the paths written.
pub fn commit_set(files: &[(PathBuf, &[u8])]) -> Result<Vec<PathBuf>, Error> {
    let mut present = Vec::with_capacity(files.len());
    for (path, _) in files {
        present.push(existing(path)?);
    }
    let mut staged = Vec::with_capacity(files.len());
    for (path, bytes) in files {
        let mut tmp = Temporary::create(path)?;
        tmp.write_all(bytes)?;
        staged.push(tmp);
    }
    let mut backups = Vec::with_capacity(files.len());
    for ((path, _), &there) in files.iter().zip(&present) {
        backups.push(if there { Some(backup_of(path)?) } else { None });
    }
    let dests: Vec<&Path> = files.iter().map(|(p, _)| p.as_path()).collect();
    rename_all(&dests, staged, backups)?;
    Ok(files.iter().map(|(p, _)| p.clone()).collect())
}

/// Renames `staged[i]` to `dests[i]` in turn; on a failure, undoes the renames done with
/// `backups` (a destination without a backup is removed) and returns the error.
fn rename_all(
    dests: &[&Path],
    staged: Vec<Temporary>,
    backups: Vec<Option<Temporary>>,
) -> Result<(), Error> {
    let mut done = 0;
    let mut failure = None;
    for (tmp, dest) in staged.into_iter().zip(dests) {
        if let Err(e) = tmp.persist(dest) {
            failure = Some(e);
            break;
        }
        done += 1;
    }
    let Some(err) = failure else { return Ok(()) };
    let mut unrestored = Vec::new();
    for (dest, backup) in dests.iter().zip(backups).take(done).rev() {
        let undone = match backup {
            Some(b) => b.persist(dest),
            None => std::fs::remove_file(dest).map_err(|e| Error::io(*dest, e)),
        };
        if let Err(e) = undone {
            unrestored.push(e.to_string());
        }
    }
    let path = dests.get(done).map_or_else(PathBuf::new, |p| p.to_path_buf());
    let message = if unrestored.is_empty() {
        format!("{err}; the files renamed before it were put back, the previous set is intact")
    } else {
        format!("{err}; and undoing the renames before it failed: {}", unrestored.join("; "))
    };
    Err(Error::Output { path, message })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ballast-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn temporary_names_parse_back_exactly() {
        let n = temporary_name("a.csv", 42, 0xdead_beef);
        assert_eq!(n, ".a.csv.ballast-tmp-42-00000000deadbeef.tmp");
        assert_eq!(parse_temporary_name(&n), Some(("a.csv", 42)));
        let nested = temporary_name("a.b.csv", 7, 1);
        assert_eq!(parse_temporary_name(&nested), Some(("a.b.csv", 7)));
        for other in [
            ".a.csv.42.tmp",
            ".a.x.tmp",
            ".a.csv.ballast-tmp-42-DEADBEEF00000000.tmp",
            ".a.csv.ballast-tmp-42-deadbeef.tmp",
            ".a.csv.ballast-tmp--00000000deadbeef.tmp",
            "a.csv.ballast-tmp-42-00000000deadbeef.tmp",
            "..ballast-tmp-42-00000000deadbeef.tmp",
        ] {
            assert_eq!(parse_temporary_name(other), None, "{other}");
        }
    }

    #[test]
    fn temporaries_are_exclusive_unguessable_and_removed_unless_persisted() {
        let dir = scratch("exclusive");
        let target = dir.join("x.csv");
        let a = Temporary::create(&target).unwrap();
        let b = Temporary::create(&target).unwrap();
        assert_ne!(a.path(), b.path());
        let (pa, pb) = (a.path().to_path_buf(), b.path().to_path_buf());
        drop(a);
        assert!(!pa.exists());
        b.persist(&target).unwrap();
        assert!(!pb.exists() && target.is_file());
        assert_eq!(names(&dir), ["x.csv"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_link_at_every_possible_name_is_never_followed() {
        let dir = scratch("links");
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        // Links at the names of the old scheme (the new names are drawn at random) ...
        for n in [".x.csv.tmp", &format!(".x.csv.{}.tmp", std::process::id())] {
            std::os::unix::fs::symlink(&victim, dir.join(n)).unwrap();
        }
        write_atomically(&dir.join("x.csv"), b"new").unwrap();
        // ... and one at a name of the new scheme, as if it had been guessed.
        let guessed = dir.join(temporary_name("x.csv", std::process::id(), 7));
        std::os::unix::fs::symlink(&victim, &guessed).unwrap();
        let e = create_exclusive(&guessed).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(std::fs::read_to_string(dir.join("x.csv")).unwrap(), "new");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn clean_up_removes_only_dead_writers_temporaries_of_the_exact_targets() {
        let dir = scratch("clean");
        let stale = dir.join(temporary_name("a.csv", 4_000_000_000, 1));
        std::fs::write(&stale, "crashed").unwrap();
        let nested = dir.join(temporary_name("a.b.csv", 4_000_000_000, 2));
        std::fs::write(&nested, "another item's").unwrap();
        let user = dir.join(".a.x.tmp");
        std::fs::write(&user, "mine").unwrap();
        let old = dir.join(".a.csv.4000000000.tmp");
        std::fs::write(&old, "old scheme").unwrap();
        // In flight: the lock is held.
        let live = Temporary::create(&dir.join("a.csv")).unwrap();
        remove_stale_temporaries(&dir, &["a.csv".to_string()]);
        assert!(!stale.exists());
        for kept in [&nested, &user, &old, &live.path().to_path_buf()] {
            assert!(kept.exists(), "{} removed", kept.display());
        }
        #[cfg(unix)]
        {
            let victim = dir.join("victim");
            std::fs::write(&victim, "keep").unwrap();
            let link = dir.join(temporary_name("a.csv", 4_000_000_000, 3));
            std::os::unix::fs::symlink(&victim, &link).unwrap();
            remove_stale_temporaries(&dir, &["a.csv".to_string()]);
            assert!(link.symlink_metadata().is_ok() && victim.exists());
        }
        drop(live);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_rename_puts_the_previous_set_back() {
        let dir = scratch("rollback");
        let (a, b, c) = (dir.join("i.csv"), dir.join("i.json"), dir.join("i.svg"));
        std::fs::write(&a, "old a").unwrap();
        // `c` is a directory: its rename fails after `a` and `b` were renamed.
        std::fs::create_dir_all(c.join("inside")).unwrap();
        let staged: Vec<Temporary> = [&a, &b, &c]
            .iter()
            .map(|p| {
                let mut t = Temporary::create(p).unwrap();
                t.write_all(b"new").unwrap();
                t
            })
            .collect();
        let backups = vec![Some(backup_of(&a).unwrap()), None, None];
        let err = rename_all(&[&a, &b, &c], staged, backups).unwrap_err().to_string();
        assert!(err.contains("put back"), "{err}");
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "old a");
        assert!(!b.exists());
        assert_eq!(names(&dir), ["i.csv", "i.svg"]);
        // The check before writing refuses the directory and writes nothing.
        let files: Vec<(PathBuf, &[u8])> = vec![(a.clone(), b"x"), (c.clone(), b"y")];
        let err = commit_set(&files).unwrap_err().to_string();
        assert!(err.contains("is a directory"), "{err}");
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "old a");
        assert_eq!(names(&dir), ["i.csv", "i.svg"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
