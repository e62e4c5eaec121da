"""The README's Python example runs as written (from the repository root)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_example_runs(repo, monkeypatch, capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "a ```python block in the README"
    monkeypatch.chdir(repo)
    exec(compile(blocks[0], str(README), "exec"), {})
    out = capsys.readouterr().out
    assert "gap " in out and "did you mean `two_choice`" in out and "Three-Choice" in out
