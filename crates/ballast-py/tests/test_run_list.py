"""ballast.run (an item into a DataFrame) and ballast.list against the command line."""

import io
import json
from pathlib import Path

import pandas as pd
import pytest

import ballast

CONFIG = """
title = "demo: Two-Choice vs One-Choice"
seed = 11
runs = 3
x = { variable = "n", label = "bins" }
grid = { n = [10, 100] }
point = { m = "10 * n" }

[[series]]
name = "Two"
process = { kind = "two_choice" }

[[series]]
name = "One"
process = { kind = "one_choice" }
statistic = "final_gap"

[quick]
runs = 2
grid = { n = [10] }
"""


@pytest.fixture
def config(tmp_path) -> Path:
    (tmp_path / "configs" / "demo").mkdir(parents=True)
    (tmp_path / "reference").mkdir()
    p = tmp_path / "configs" / "demo" / "two.toml"
    p.write_text(CONFIG)
    return p


def test_run_gives_the_csv_as_a_dataframe(config, tmp_path, cli):
    df = ballast.run(config)
    out = tmp_path / "cli-out"
    code, _, err = cli("run", str(config), "--out", str(out), "--no-checkpoint")
    assert code == 0, err
    expected = pd.read_csv(out / "demo" / "two.csv")
    pd.testing.assert_frame_equal(df, expected)
    assert list(df["series"]) == ["Two", "Two", "One", "One"]
    assert set(df["statistic"]) == {"max_gap", "final_gap"}
    assert df.attrs["id"] == "demo/two"
    meta = df.attrs["metadata"]
    assert meta["seed"] == 11 and meta["runs"] == 3 and meta["quick"] is False
    assert meta == {**json.loads((out / "demo" / "two.json").read_text())["metadata"], **{k: meta[k] for k in ("command", "threads", "wall_time_s", "cpu_time_s", "git_revision") if k in meta}}
    assert df.attrs["series"] == ["Two", "One"] and df.attrs["x_label"] == "bins"
    assert df.attrs["written"] == []
    assert not (tmp_path / "configs" / "demo" / "results").exists()


def test_scales_and_outputs(config, tmp_path):
    quick = ballast.run(config, scale="quick")
    assert len(quick) == 2 and set(quick["runs"]) == {2}
    assert quick.attrs["metadata"]["quick"] is True
    out = tmp_path / "out"
    df = ballast.run(config, "quick", out=out, threads=1)
    written = [Path(p).name for p in df.attrs["written"]]
    assert sorted(written) == ["two.csv", "two.json", "two.md", "two.svg"]
    assert (out / ".checkpoint").is_dir()
    pd.testing.assert_frame_equal(df, pd.read_csv(out / "demo" / "two.csv"))
    # Resumed from the checkpoints: the same table without simulating.
    again = ballast.run(config, "quick", out=out, cached_only=True)
    pd.testing.assert_frame_equal(again, df)


def test_run_errors(config, tmp_path):
    with pytest.raises(ValueError, match="not found"):
        ballast.run(tmp_path / "missing.toml")
    with pytest.raises(ValueError, match="scale"):
        ballast.run(config, scale="tiny")
    bad = config.with_name("bad.toml")
    bad.write_text(CONFIG.replace("two_choice", "two_chioce"))
    with pytest.raises(ValueError, match="two_choice"):
        ballast.run(bad)


def test_a_repository_item_by_id(repo):
    df = ballast.run("batched22/fig8_1", scale="quick")
    assert df.attrs["id"] == "batched22/fig8_1"
    assert {"Two-Choice", "Three-Choice"} <= set(df["series"])
    assert df["reference"].notna().any() and df["z"].notna().any()


def test_list_is_the_registry(cli, repo, monkeypatch):
    monkeypatch.chdir(repo)
    code, out, _ = cli("list")
    assert code == 0
    assert ballast.list("text") == out
    d = ballast.list()
    names = [p["name"] for p in d["processes"]]
    assert "two_choice" in names and "one_plus_beta" in names
    for p in d["processes"]:
        assert f"  {p['name']:<19} {p['doc']}" in out
        for param in p["params"]:
            assert param["doc"] in out
    assert [m["name"] for m in d["models"]] and all(m["name"] in out for m in d["models"])
    assert "batched22/fig8_1" in {i["id"] for i in d["items"]}
    # Settings (with the delay modes), stopping rules, statistics, potentials and the
    # off-line optimum: every entry of the dict is a line of the text, from the same data.
    assert [s["name"] for s in d["settings"]] == ["sequential", "batched", "delay"]
    assert {m["name"] for m in d["delay_modes"]} == {"random", "adversarial"}
    assert {s["name"] for s in d["stops"]} == {"truncate", "finish"}
    stats = {s["name"] for s in d["statistics"]}
    assert {"max_gap", "recovery_time", "potential_trajectory"} <= stats
    assert {"offline_optimum", "greedy_max_load"} <= {m["name"] for m in d["measures"]}
    assert [p["name"] for p in d["potentials"]] == ["exponential", "hyperbolic", "quadratic", "absolute"]
    for key in ["settings", "delay_modes", "stops", "statistics", "measures", "potentials"]:
        for e in d[key]:
            assert f"{e['name']:<23} {e['doc']}" in out, (key, e)
    assert d["offline"]["doc"] in out and "--offline D" in d["offline"]["form"]
    for p in d["processes"]:
        assert set(p["settings"]) <= {s["name"] for s in d["settings"]}
    with pytest.raises(ValueError):
        ballast.list("yaml")
