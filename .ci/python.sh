#!/usr/bin/env bash
# The Python package (crates/ballast-py): a fresh virtualenv in a temporary directory, the
# package installed from the repository with pip (maturin builds the extension), plus numpy,
# pandas, pytest and matplotlib; then its pytest tests, which compare against the `ballast`
# binary built here. Called by .ci/run; runs alone too: `bash .ci/python.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "::group::python package: venv and pip install"
python3 --version
python3 -m venv "$tmp/venv"
py="$tmp/venv/bin/python"
"$py" -m pip install --quiet --disable-pip-version-check ./crates/ballast-py numpy pandas pytest matplotlib
"$py" -c 'import ballast; print("ballast", ballast.__version__, "from", ballast.__file__)'
echo "::endgroup::"

echo "::group::python package: pytest"
# The binary the tests compare against (same sources, release as the extension).
cargo build --release --locked -p ballast-cli
export BALLAST_BIN="${CARGO_TARGET_DIR:-$root/target}/release/ballast"
# From the temp dir, so `import ballast` is the installed package.
cd "$tmp"
"$py" -m pytest -q -p no:cacheprovider "$root/crates/ballast-py/tests"
echo "::endgroup::"
