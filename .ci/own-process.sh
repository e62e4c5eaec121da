#!/usr/bin/env bash
# The example crate of a process of one's own (examples/own-process, not a workspace member;
# docs/own-process.md): built against the crates of this checkout, then its binary lists the
# process, simulates it and runs a small sweep through the runner, whose outputs must all be
# there. Called by `cargo xtask ci`; runs alone too: `bash .ci/own-process.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The workspace's target directory: the ballast crates built there are reused.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
# Its lock file follows the workspace's dependencies; after changing them, refresh it with
# `cargo metadata --format-version 1 --manifest-path examples/own-process/Cargo.toml`.
cargo metadata --format-version 1 --locked --manifest-path examples/own-process/Cargo.toml >/dev/null ||
    { echo "examples/own-process/Cargo.lock is out of date: refresh it with cargo metadata (see above)" >&2; exit 1; }
cargo build --release --locked --manifest-path examples/own-process/Cargo.toml
bin="$CARGO_TARGET_DIR/release/own-process"
"$bin" list | grep -q '^  lighter_by ' || { echo "own-process list: no lighter_by" >&2; exit 1; }
"$bin" simulate --process lighter_by --param k=2 --n 1000 --m 100000 --runs 4 --seed 1
cd examples/own-process
"$bin" run configs/sweep.toml --out "$tmp/out" --threads 2
for ext in csv json svg md; do
    f=$(find "$tmp/out" -name "sweep.$ext" | head -1)
    [ -s "$f" ] || { echo "own-process run: no sweep.$ext" >&2; exit 1; }
    echo "own-process run wrote ${f#"$tmp/"}"
done
"$bin" plot "$(find "$tmp/out" -name sweep.json | head -1)" -o "$tmp/replot.svg"
[ -s "$tmp/replot.svg" ]
echo "own-process: list, simulate, run and plot passed"
