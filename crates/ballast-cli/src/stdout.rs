//! The binary's standard output: every subcommand writes its result through [`print`], so a
//! failed write is an error, never a panic (as `print!` panics) and never silent.
//!
//! - A broken pipe (the reader is gone, as in `ballast list | head -1`) is
//!   [`crate::StdoutClosed`]: the binary exits quietly with status 141, the status a shell
//!   reports for a program killed by SIGPIPE, so a pipeline under `set -o pipefail` still
//!   sees that the output was cut.
//! - Any other failure (a full disk, `/dev/full`, an I/O error) is an error "cannot write to
//!   standard output: …" with exit status 1.

use std::io::Write as _;

use crate::error::StdoutClosed;

/// Writes `text` to standard output and flushes it.
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(|e| {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            anyhow::Error::new(StdoutClosed)
        } else {
            anyhow::anyhow!("cannot write to standard output: {e}")
        }
    })
}

/// [`print`] of `text` and a newline.
pub fn println(text: &str) -> anyhow::Result<()> {
    print(&format!("{text}\n"))
}
