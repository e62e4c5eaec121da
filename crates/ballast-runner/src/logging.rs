//! The log of the command-line tools: one `tracing` subscriber on stderr, chosen by
//! `-v`/`-q`, `RUST_LOG` and `--log-format`, that never tears a progress bar.
//!
//! The libraries of the workspace only emit `tracing` spans and events (an `item` span around
//! each item, `point` and `checkpoint` events at debug level, warnings, progress lines at
//! info level); the binaries call [`install_logging`] once. Three shapes:
//!
//! - **plain** (the default, at info level and without `RUST_LOG`): each event is its bare
//!   message on one line, warnings prefixed `warning: ` and errors `error: `, as a person
//!   reads them in a terminal;
//! - **detailed** (`-v`, `-vv`, or any `RUST_LOG`): level, module, the spans (`item{id=…}`)
//!   and the fields, one line per event;
//! - **json** (`--log-format json`): one JSON object per line with the level, the message,
//!   the fields and the span list, for cluster log collectors.
//!
//! `RUST_LOG` (the `tracing-subscriber` `EnvFilter` syntax, e.g. `ballast_runner=debug`)
//! overrides `-v`/`-q`. Progress bars are drawn through one shared [`MultiProgress`]; every
//! log line is written while the bars are suspended, so a line never lands inside a bar.

use std::io::Write;
use std::sync::OnceLock;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget};
use tracing_subscriber::fmt::{format::Writer, FmtContext, FormatEvent, FormatFields, MakeWriter};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum LogFormat {
    /// Lines for a person: bare messages at the default level, details with `-v`.
    #[default]
    Text,
    /// One JSON object per event.
    Json,
}

/// What the user asked of the log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogOptions {
    /// `-v` count minus `-q` count: 0 is info, 1 debug, 2 or more trace, −1 warn, −2 or less
    /// error only.
    pub verbosity: i8,
    /// Text or JSON lines.
    pub format: LogFormat,
}

/// The `-v`/`-q`/`--log-format` flags, for the binaries' `clap` parsers (feature `clap`).
#[cfg(feature = "clap")]
#[derive(Clone, Copy, Debug, Default, clap::Args)]
pub struct LogArgs {
    /// More log detail: `-v` debug (spans, checkpoints), `-vv` trace. `RUST_LOG` overrides it.
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Less log: `-q` warnings and errors only, `-qq` errors only.
    #[arg(short = 'q', long = "quiet", action = clap::ArgAction::Count, global = true,
          conflicts_with = "verbose")]
    pub quiet: u8,
    /// Log line format: `text` or `json` (one object per line, for cluster logs).
    #[arg(long, value_enum, default_value_t = LogFormat::Text, global = true)]
    pub log_format: LogFormat,
}

#[cfg(feature = "clap")]
impl LogArgs {
    /// The options these flags ask for.
    pub fn options(&self) -> LogOptions {
        let v = i16::from(self.verbose) - i16::from(self.quiet);
        LogOptions { verbosity: v.clamp(-2, 2) as i8, format: self.log_format }
    }
}

/// The level filter `-v`/`-q` ask for, as an `EnvFilter` directive.
fn level_directive(verbosity: i8) -> &'static str {
    match verbosity {
        i8::MIN..=-2 => "error",
        -1 => "warn",
        0 => "info",
        1 => "debug",
        _ => "trace",
    }
}

/// The progress bars of this process, drawn to stderr; log lines suspend them.
pub fn progress_bars() -> &'static MultiProgress {
    static BARS: OnceLock<MultiProgress> = OnceLock::new();
    BARS.get_or_init(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()))
}

/// Starts drawing `bar` on stderr, below the other bars of this process.
pub fn show_bar(bar: &ProgressBar) {
    progress_bars().add(bar.clone());
}

/// A stderr writer that writes each formatted event while the progress bars are hidden.
#[derive(Clone, Copy)]
struct BarSafeStderr;

/// One event's bytes, written when the formatter is done with it.
struct EventBuffer(Vec<u8>);

impl Write for EventBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for EventBuffer {
    fn drop(&mut self) {
        if !self.0.is_empty() {
            let bytes = std::mem::take(&mut self.0);
            progress_bars().suspend(|| {
                // A log line that cannot be written has nowhere else to go.
                let _ = std::io::stderr().lock().write_all(&bytes);
            });
        }
    }
}

impl<'a> MakeWriter<'a> for BarSafeStderr {
    type Writer = EventBuffer;

    fn make_writer(&'a self) -> Self::Writer {
        EventBuffer(Vec::new())
    }
}

/// The plain event format: the message and fields, warnings and errors prefixed.
struct Plain;

impl<S, N> FormatEvent<S, N> for Plain
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut w: Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        match *event.metadata().level() {
            tracing::Level::ERROR => w.write_str("error: ")?,
            tracing::Level::WARN => w.write_str("warning: ")?,
            _ => {}
        }
        ctx.format_fields(w.by_ref(), event)?;
        writeln!(w)
    }
}

/// Installs the stderr log of the command-line tools (see the module docs). A second call
/// (tests running several commands in one process) does nothing. A `RUST_LOG` that does not
/// parse is reported as a warning and the `-v`/`-q` level is used.
pub fn install_logging(opts: LogOptions) {
    let env = std::env::var("RUST_LOG").ok().filter(|s| !s.trim().is_empty());
    let (filter, bad_env) = match env.as_deref().map(EnvFilter::try_new) {
        Some(Ok(f)) => (f, None),
        Some(Err(e)) => (EnvFilter::new(level_directive(opts.verbosity)), Some(e)),
        None => (EnvFilter::new(level_directive(opts.verbosity)), None),
    };
    let detailed = opts.verbosity > 0 || (env.is_some() && bad_env.is_none());
    let builder = tracing_subscriber::fmt().with_writer(BarSafeStderr).with_env_filter(filter);
    let installed = match (opts.format, detailed) {
        (LogFormat::Json, _) => {
            builder.json().with_current_span(true).with_span_list(true).try_init()
        }
        (LogFormat::Text, true) => builder.with_target(true).try_init(),
        (LogFormat::Text, false) => builder.event_format(Plain).try_init(),
    };
    if let (Ok(()), Some(e)) = (installed, bad_env) {
        tracing::warn!("RUST_LOG is not a valid filter ({e}); using the -v/-q level");
    }
}

/// [`install_logging`] with the default options (plain lines, info level, `RUST_LOG` read).
pub fn install_stderr_logging() {
    install_logging(LogOptions::default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbosity_maps_to_levels_and_clamps() {
        assert_eq!(level_directive(-5), "error");
        assert_eq!(level_directive(-1), "warn");
        assert_eq!(level_directive(0), "info");
        assert_eq!(level_directive(1), "debug");
        assert_eq!(level_directive(9), "trace");
    }
}
