"""The README's Python examples run as written (from the repository root)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 2, "the README's ```python blocks"
    return blocks


def test_readme_example_runs(repo, monkeypatch, capsys):
    monkeypatch.chdir(repo)
    exec(compile(_blocks()[0], str(README), "exec"), {})
    out = capsys.readouterr().out
    assert "gap " in out and "did you mean `two_choice`" in out and "Three-Choice" in out


def test_readme_python_rule_example_runs(repo, monkeypatch, capsys):
    monkeypatch.chdir(repo)
    scope = {}
    exec(compile(_blocks()[1], str(README), "exec"), scope)
    out = capsys.readouterr().out
    for name in ("Python function", "rule formula", "built-in two_choice"):
        assert name in out, out
    table = scope["table"]
    assert list(table.columns) == ["rule", "gap", "stderr", "ns per ball"]
    assert (table["ns per ball"] > 0).all() and (table["gap"] > 0).all()
    # Same seed, same random numbers, same choices: the three are the same runs.
    finals = [r.runs["final_gap"].tolist() for r in scope["results"].values()]
    assert finals[0] == finals[1] == finals[2], finals
