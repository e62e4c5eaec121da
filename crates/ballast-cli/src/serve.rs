//! `ballast serve`: its options, and the adapter through which the web server
//! (`ballast-serve`) uses this crate. Every call of the server into the command line is
//! here: [`ballast_serve::Lab`] implemented with [`crate::embed`], so a playground run is
//! `ballast simulate` itself, with its validation and messages.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use anyhow::Context as _;
use ballast_serve::{Lab, LabError, LabErrorKind};
use serde_json::Value;

use crate::embed::{self, ErrorKind};

/// Options of `ballast serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Port to listen on (0: any free port, printed at start)
    #[arg(long, default_value_t = ballast_serve::DEFAULT_PORT)]
    pub port: u16,
    /// Address to listen on; the default is loopback only. Another address exposes the
    /// playground's CPU to the network: there is no authentication
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// Results directory shown by the gallery (the only directory files are served from)
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Playground runs and animations at once, 1 to 64 (more: a "busy" answer)
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub workers: u16,
}

/// The command line as the server's [`Lab`].
struct CliLab {
    options: OnceLock<Value>,
    listing: OnceLock<Value>,
}

impl Lab for CliLab {
    fn simulate(&self, argv: &[String]) -> Result<Value, LabError> {
        embed::simulate(argv).map_err(|e| {
            let kind = match embed::error_kind(&e) {
                ErrorKind::BadInput => LabErrorKind::BadInput,
                ErrorKind::Interrupted => LabErrorKind::Interrupted,
                ErrorKind::Failure => LabErrorKind::Failure,
            };
            LabError { kind, message: format!("{e:#}") }
        })
    }

    fn simulate_options(&self) -> Value {
        self.options
            .get_or_init(|| serde_json::to_value(embed::simulate_options()).unwrap_or_default())
            .clone()
    }

    fn listing(&self) -> Value {
        self.listing.get_or_init(embed::list).clone()
    }
}

/// The server's [`Lab`] (for the tests of the server with the real command line).
pub fn lab() -> Arc<dyn Lab> {
    Arc::new(CliLab { options: OnceLock::new(), listing: OnceLock::new() })
}

/// Runs the server until the process is ended (Ctrl-C).
pub fn main(args: &ServeArgs) -> anyhow::Result<()> {
    let mut opts = ballast_serve::ServeOptions::new(args.port, &args.results);
    opts.addr.set_ip(args.bind);
    opts.workers = usize::from(args.workers);
    let server = match ballast_serve::start(opts, lab()) {
        Ok(server) => server,
        Err(e @ ballast_serve::StartError::Results(_)) => {
            return Err(crate::BadInput::new(format!("--results: {e}")).into())
        }
        Err(e) => return Err(anyhow::anyhow!("{e}")).context("ballast serve"),
    };
    crate::stdout::print(&format!("ballast serve: http://{}/\n", server.addr()))?;
    server.wait();
    Ok(())
}
