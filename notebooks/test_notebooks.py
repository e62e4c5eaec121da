"""Executes the notebooks of this directory (nbclient, a fresh kernel each, from the
repository root) and checks their outputs: no cell fails, each notebook's own assertions
hold, and the lines the text promises are printed. Each notebook's run time is printed.
Run by .ci/python.sh; alone: `python -m pytest notebooks/test_notebooks.py`."""

import os
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
REPO = Path(os.environ.get("BALLAST_REPO", HERE.parent))

# Notebook -> texts its outputs must contain.
EXPECTED = {
    "01_quick_start.ipynb": ["gap ", "90 % quantile of the final gap", "Simulation('two_choice'", "Two-Choice"],
    "02_reproduce_a_figure.ipynb": ["points beyond |z| = 3 per series", "largest |quick − full| / full"],
    "03_explore_a_parameter.ipynb": ["balls until the gap is below 5", "b = 5n"],
}
# A notebook taking longer than this (seconds) fails: they are meant to run in seconds.
BUDGET_S = 120


def outputs(nb) -> str:
    """The text of every stream and text/plain output, in order."""
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream":
                out.append(o.get("text", ""))
            elif "data" in o and "text/plain" in o["data"]:
                out.append(o["data"]["text/plain"])
    return "".join(out)


def test_every_notebook_is_checked():
    assert sorted(p.name for p in HERE.glob("*.ipynb")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_runs_and_prints_what_it_says(name, capsys):
    nb = nbformat.read(HERE / name, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        f"{name} is committed with outputs; clear them"
    )
    t = time.perf_counter()
    NotebookClient(nb, timeout=BUDGET_S, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}).execute()
    elapsed = time.perf_counter() - t
    text = outputs(nb)
    for needle in EXPECTED[name]:
        assert needle in text, f"{name}: no output contains {needle!r}"
    images = sum("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))
    assert images >= 1, f"{name}: no figure drawn"
    assert elapsed < BUDGET_S
    with capsys.disabled():
        print(f"\n{name}: executed in {elapsed:.1f} s, {images} figure(s)")
