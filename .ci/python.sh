#!/usr/bin/env bash
# The Python package (crates/ballast-py) as a user installs it: maturin builds one abi3 wheel
# (CPython >= 3.9; the release profile and the target directory of the rest of CI, so the
# workspace's crates are not built twice), which is installed into a fresh virtualenv whose
# PATH has no cargo and no rustc; its pytest tests and the notebooks (notebooks/, executed by
# nbclient with assertions on their outputs) run there. Called by .ci/run (`cargo xtask ci`);
# runs alone too: `bash .ci/python.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
pip_q=(--quiet --disable-pip-version-check)

echo "::group::python package: abi3 wheel (maturin)"
python3 --version
python3 -m venv "$tmp/build"
"$tmp/build/bin/python" -m pip install "${pip_q[@]}" "maturin>=1.5,<2"
"$tmp/build/bin/maturin" build --release --locked --manifest-path crates/ballast-py/Cargo.toml \
    --interpreter python3 --out "$tmp/wheels"
wheel=$(ls "$tmp"/wheels/ballast-*.whl)
echo "wheel: $(basename "$wheel")"
case "$wheel" in
    *-cp39-abi3-*) ;;
    *) echo "not an abi3 wheel for CPython >= 3.9: $wheel" >&2; exit 1 ;;
esac
# The binary the tests compare against (same sources and profile as the extension).
cargo build --release --locked -p ballast-cli
echo "::endgroup::"

echo "::group::python package: install the wheel without a Rust toolchain"
python3 -m venv "$tmp/venv"
# Only the venv and the system's directories: no ~/.cargo/bin, no rustup.
clean_path="$tmp/venv/bin:/usr/local/bin:/usr/bin:/bin"
for tool in cargo rustc; do
    if PATH="$clean_path" command -v "$tool" >/dev/null; then
        echo "$tool is on the clean PATH ($(PATH="$clean_path" command -v "$tool"))" >&2
        exit 1
    fi
done
run() { env -u CARGO_TARGET_DIR PATH="$clean_path" "$@"; }
run python -m pip install "${pip_q[@]}" "$wheel" pytest matplotlib nbclient nbformat ipykernel
run python -c 'import ballast, shutil; print("ballast", ballast.__version__, "from", ballast.__file__, "| cargo:", shutil.which("cargo"), "| rustc:", shutil.which("rustc"))'
echo "::endgroup::"

echo "::group::python package: pytest and notebooks (no cargo on PATH)"
export BALLAST_BIN="$CARGO_TARGET_DIR/release/ballast"
# From the temp dir, so `import ballast` is the installed package.
cd "$tmp"
run env BALLAST_BIN="$BALLAST_BIN" BALLAST_REPO="$root" \
    python -m pytest -q -p no:cacheprovider "$root/crates/ballast-py/tests" "$root/notebooks/test_notebooks.py"
echo "::endgroup::"
