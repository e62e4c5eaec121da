"""The example script reproduces a figure to a PNG."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "plot_fig.py"


def test_plot_fig_writes_a_png(tmp_path):
    out = tmp_path / "fig.png"
    p = subprocess.run(
        [sys.executable, str(EXAMPLE), "--out", str(out)], capture_output=True, text=True
    )
    assert p.returncode == 0, p.stderr
    assert "batched22/fig8_1: 12 rows" in p.stdout
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
