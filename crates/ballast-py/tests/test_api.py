"""The Python API beyond the command line: per-run values, trajectories, configs as text or
dict, and the step-by-step Simulation with its seeds."""

import json

import numpy as np
import pandas as pd
import pytest

import ballast

CONFIG = {
    "title": "Two-Choice from a dict",
    "seed": 7,
    "runs": 3,
    "x": {"variable": "n"},
    "grid": {"n": [50, 100]},
    "point": {"m": 1000},
    "series": [{"name": "Two-Choice", "process": {"kind": "two_choice"}}],
}

TOML = """
title = "Two-Choice from a dict"
seed = 7
runs = 3
x = { variable = "n" }
grid = { n = [50, 100] }
point = { m = 1000 }

[[series]]
name = "Two-Choice"
process = { kind = "two_choice" }
"""


def test_per_run_values_are_the_summary_s(cli):
    r = ballast.simulate("two_choice", 100, 2000, runs=7, seed=4)
    runs = r.runs
    assert isinstance(runs, pd.DataFrame) and len(runs) == 7 and runs.index.name == "run"
    for col in ("final_gap", "max_gap", "max_load", "min_load", "empty_bins"):
        assert col in runs.columns
    # The summary is over exactly these values.
    assert runs.final_gap.mean() == pytest.approx(r.gap.mean, rel=1e-12)
    assert runs.final_gap.std(ddof=1) == pytest.approx(r.gap.sd, rel=1e-12)
    assert runs.max_load.mean() == pytest.approx(r.statistics["max_load"]["mean"], rel=1e-12)
    # Without observation points there is no trajectory.
    assert r.trajectory.empty


def test_graphical_runs_have_per_run_values_too():
    r = ballast.simulate("two_choice", 50, 500, runs=3, seed=2, graph="cycle")
    assert len(r.runs) == 3
    assert r.runs.final_gap.mean() == pytest.approx(r.gap.mean, rel=1e-12)
    assert r.runs.max_gap.max() >= r.runs.final_gap.max()


def test_trajectory_ends_at_each_run_s_final_gap():
    r = ballast.simulate("two_choice", 100, 1000, runs=3, seed=2, observe_every=250)
    t = r.trajectory
    assert list(t.columns[:6]) == ["run", "balls", "balls_per_bin", "gap", "max_load", "min_load"]
    assert len(t) == 3 * 4 and sorted(set(t.balls)) == [250, 500, 750, 1000]
    last = t[t.balls == 1000].set_index("run").gap
    np.testing.assert_array_equal(last.to_numpy(), r.runs.final_gap.to_numpy())
    assert (t.max_load - t.min_load >= t.gap).all()
    # Batched: one point per batch.
    b = ballast.simulate("two_choice", 100, 1000, batch=200, runs=2)
    assert sorted(set(b.trajectory.balls)) == [200, 400, 600, 800, 1000]


def test_whole_numbers_as_floats():
    a = ballast.simulate("two_choice", 1e2, 1e3, runs=2.0, seed=3)
    b = ballast.simulate("two_choice", 100, 1000, runs=2, seed=3)
    assert a.raw["m"] == 1000 and a.gap.mean == b.gap.mean
    with pytest.raises(ValueError, match="not a whole number"):
        ballast.simulate("two_choice", 100, 1.5e0)


def test_run_takes_a_dict_a_toml_string_and_a_file(tmp_path, cli, repo):
    from_dict = ballast.run(CONFIG, id="demo/two")
    from_text = ballast.run(TOML, id="demo/two")
    pd.testing.assert_frame_equal(from_dict, from_text)
    assert from_dict.attrs["id"] == "demo/two" and from_dict.attrs["written"] == []
    path = tmp_path / "configs" / "demo" / "two.toml"
    path.parent.mkdir(parents=True)
    path.write_text(TOML)
    pd.testing.assert_frame_equal(ballast.run(path), from_dict)
    # A file whose name has an `=` is still a path.
    odd = tmp_path / "configs" / "demo" / "a=b.toml"
    odd.write_text(TOML)
    assert ballast.run(str(odd)).attrs["id"] == "demo/a=b"
    # The command line on the same file: the same CSV (the seeds derive from the id).
    code, out, err = cli("run", str(path), "--no-checkpoint", "--out", str(tmp_path / "o"))
    assert code == 0, err
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "o" / "demo" / "two.csv"), from_dict)
    # Nothing was written by the text and dict runs.
    assert not (tmp_path / "out").exists()


def test_run_carries_every_run_s_values():
    df = ballast.run(CONFIG, id="demo/two")
    runs = df.attrs["runs"]
    assert list(runs.columns) == ["row", "series", "n", "x", "statistic", "run", "value"]
    assert len(runs) == len(df) * 3
    means = runs.groupby("row").value.mean()
    np.testing.assert_allclose(means.to_numpy(), df.value.to_numpy(), rtol=1e-8)


def test_run_text_errors_are_value_errors():
    bad = dict(CONFIG, series=[{"name": "x", "process": {"kind": "two_chioce"}}])
    with pytest.raises(ValueError, match="two_choice"):
        ballast.run(bad)
    with pytest.raises(ValueError, match="<paper>/<item>"):
        ballast.run(CONFIG, id="nopaper")
    with pytest.raises(ValueError):
        ballast.run({"title": None})


@pytest.mark.parametrize("engine", ["bins", "levels"])
@pytest.mark.parametrize("every", [None, 300])
def test_simulation_first_call_is_run_0_of_simulate(engine, every):
    sim = ballast.Simulation("two_choice", 100, seed=11, engine=engine)
    sim.run(1500, record_every=every)
    r = ballast.simulate("two_choice", 100, 1500, runs=1, seed=11, engine=engine, observe_every=every)
    h = sim.history
    row = r.runs.iloc[0]
    # Byte for byte: the same floats, not approximately.
    assert h.gap.iloc[-1] == row.final_gap and h.gap.max() == row.max_gap
    assert h.max_load.iloc[-1] == row.max_load and h.min_load.iloc[-1] == row.min_load
    loads = sim.loads
    assert loads.dtype == np.int64 and loads.sum() == 1500 and len(loads) == 100
    assert loads.max() == row.max_load and (loads == 0).sum() == row.empty_bins
    if every:
        t = r.trajectory
        np.testing.assert_array_equal(h.balls.to_numpy(), t.balls.to_numpy())
        np.testing.assert_array_equal(h.gap.to_numpy(), t.gap.to_numpy())


def test_simulation_from_a_load_vector_is_simulate_from_a_file(tmp_path):
    start = np.zeros(50, dtype=np.int64)
    start[:5] = 20
    f = tmp_path / "loads.txt"
    f.write_text("\n".join(str(v) for v in start) + "\n")
    sim = ballast.Simulation("two_choice", 50, seed=5, engine="bins", start=start)
    np.testing.assert_array_equal(sim.loads, start)
    sim.run(500)
    r = ballast.simulate("two_choice", 50, 500, runs=1, seed=5, engine="bins", start=f"file:path={f}")
    assert sim.history.gap.iloc[-1] == r.runs.final_gap.iloc[0]
    assert sim.loads.sum() == 600 and sim.balls == 500


def test_simulation_continues_its_stream():
    a = ballast.Simulation("two_choice", 64, seed=2, engine="bins").run(640).run(640)
    b = ballast.Simulation("two_choice", 64, seed=2, engine="bins").run(640).run(640)
    np.testing.assert_array_equal(a.loads, b.loads)
    assert a.balls == 1280 and a.loads.sum() == 1280
    assert list(a.history.balls) == [640, 1280]
    # The second call does not start the stream again: it differs from a fresh first call
    # from the same loads.
    c = ballast.Simulation("two_choice", 64, seed=2, engine="bins").run(640)
    fresh = ballast.Simulation("two_choice", 64, seed=2, engine="bins", start=c.loads).run(640)
    assert not np.array_equal(fresh.loads, a.loads)


def test_simulation_errors():
    with pytest.raises(ValueError, match="Simulation"):
        ballast.Simulation("rbb", 10)
    with pytest.raises(ValueError, match="loads for n"):
        ballast.Simulation("two_choice", 10, start=[1, 2])
    for bad in ([[1, 2]], [1.5, 2.0], [float("inf"), 1.0], [True, False], ["1", "2"]):
        with pytest.raises(ValueError, match="whole numbers"):
            ballast.Simulation("two_choice", 2, start=bad)
    with pytest.raises(ValueError, match="at least 0"):
        ballast.Simulation("two_choice", 2, start=[-1, 3])
    sim = ballast.Simulation("two_choice", 2, engine="bins", start=np.array([3.0, 1.0]))
    np.testing.assert_array_equal(sim.loads, [3, 1])
    with pytest.raises(ValueError, match="whole number"):
        ballast.Simulation("two_choice", 10).run(2.5)
    with pytest.raises(ValueError, match="two_choice"):
        ballast.Simulation("two_chioce", 10)


def test_exports_and_help():
    assert "list" not in ballast.__all__ and "registry" in ballast.__all__
    assert ballast.list is ballast.registry
    ns = {}
    exec("from ballast import *", ns)
    assert "list" not in ns and "Simulation" in ns
    for obj in (ballast.simulate, ballast.run, ballast.Simulation, ballast.Simulation.run, ballast.registry):
        assert obj.__doc__ and len(obj.__doc__) > 80, obj
    assert "same random stream" in ballast.Simulation.__doc__
    assert json.loads(ballast._native.list_json())["items"] is not None


def test_time_trials_are_calls_of_simulate_within_a_budget():
    df = ballast.time_trials("two_choice", [50, 1e2], lambda n: 10 * n, max_wallclock_time=0.5, runs_per_call=3, max_runs=6)
    assert set(df.n) == {50, 100} and set(df.m) == {500, 1000}
    per_n = df.groupby("n").size()
    assert ((per_n >= 3) & (per_n <= 6)).all()
    # A row is run `run` of simulate(..., seed=seed): reproducible from its seed.
    row = df[(df.n == 100)].iloc[-1]
    again = ballast.simulate("two_choice", 100, 1000, runs=3, seed=int(row.seed)).runs
    assert again.final_gap.iloc[int(row.run)] == row.final_gap
    with pytest.raises(ValueError, match="at least one"):
        ballast.time_trials("two_choice", [], 10)
