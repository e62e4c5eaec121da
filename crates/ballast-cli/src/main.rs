//! `ballast`: the command line of the ballast balls-into-bins laboratory.
//!
//! - `ballast simulate --process KIND [--param k=v]... --n N --m M [--batch B] [--runs R] ...`:
//!   ad-hoc runs with a summary (or one JSON object with `--json`);
//! - `ballast run CONFIG.toml [--quick] [--out DIR] [--threads N]`: one experiment config
//!   through `ballast-runner`;
//! - `ballast run CONFIG.toml --shard I/K`: one shard of it (a deterministic subset of the
//!   (point, run) units), and `ballast merge CONFIG.toml SHARD...`: the shards combined into
//!   the same outputs as one run;
//! - `ballast slurm CONFIG.toml --shards K`: a Slurm script that runs the shards as a job
//!   array and merges them;
//! - `ballast plot RESULT... [-o FILE.svg] [--series S] [--log-x] [--log-y]`: the figure of
//!   one or several results re-drawn from their outputs (overlaid, some series, log axes);
//! - `ballast list`: processes, parameters, tie-breaking rules, settings, weights, items;
//! - `ballast serve [--port P] [--results DIR]`: the results gallery, a playground and a
//!   load-vector animation as a local web page (loopback only by default; `ballast-serve`).
//!
//! Bad input exits with code 2 and a message naming the field and the allowed values; an
//! interrupted run (Ctrl-C) exits with code 130 after saving its finished runs. Standard
//! output that cannot be written is an error (exit 1, "cannot write to standard output: …"),
//! except a pipe whose reader has gone: then the program exits quietly with 141, the status
//! of a program killed by SIGPIPE.
//!
//! The subcommands live in the library `ballast_cli`, which the Python package shares.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

fn main() {
    ballast_cli::main_with(&[])
}
