#!/usr/bin/env bash
# Browser tests of `ballast serve` (crates/ballast-serve/browser-tests/test.mjs): Debian's
# chromium, driven by playwright-core from npm, against the release binary serving the
# committed results/ on a free loopback port. Installs chromium (apt-get, as root on a fresh
# machine) and the npm package (from the committed package-lock.json) when missing.
# SCREENS=DIR keeps screenshots of the three views there.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x /usr/bin/chromium ]; then
    echo "installing Debian's chromium"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "installing Debian's nodejs and npm"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 18 ]; then
    echo "node $(node --version) is too old for playwright-core (18 or newer)" >&2
    exit 1
fi

cargo build --release --locked -p ballast-cli
target="${CARGO_TARGET_DIR:-target}"
binary="$(cd "$target/release" && pwd)/ballast"

tests=crates/ballast-serve/browser-tests
(cd "$tests" && npm ci --no-audit --no-fund --loglevel=error)

# The server listens on loopback; no proxy stands between the browser and it.
export NO_PROXY='127.0.0.1,localhost' no_proxy='127.0.0.1,localhost'
# A hung browser fails the step after 15 minutes instead of holding CI.
BALLAST="$binary" RESULTS="$(pwd)/results" timeout --kill-after=30 900 node "$tests/test.mjs"
