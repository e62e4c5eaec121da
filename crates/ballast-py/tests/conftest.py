"""Shared fixtures: the repository root and the `ballast` binary to compare against."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def ballast_bin() -> str:
    """The `ballast` binary: $BALLAST_BIN (must exist when set, as in .ci/python.sh), else
    `ballast` on PATH or the repository's target/release/ballast; the test is skipped when
    none exists."""
    env = os.environ.get("BALLAST_BIN")
    if env:
        assert Path(env).is_file(), f"BALLAST_BIN={env} does not exist"
        return env
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    for cand in [shutil.which("ballast"), target / "release" / "ballast"]:
        if cand and Path(cand).is_file():
            return str(cand)
    pytest.skip("no ballast binary (set BALLAST_BIN or cargo build --release -p ballast-cli)")


@pytest.fixture
def cli(ballast_bin, repo):
    """Runs `ballast ARGS...` in the repository root and returns (exit code, stdout, stderr)."""

    def run(*args: str):
        p = subprocess.run(
            [ballast_bin, *args], cwd=repo, capture_output=True, text=True, check=False
        )
        return p.returncode, p.stdout, p.stderr

    return run
