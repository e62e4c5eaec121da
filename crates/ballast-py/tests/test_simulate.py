"""ballast.simulate against `ballast simulate --json`: same seeds, same numbers."""

import json
import threading
import time

import numpy as np
import pytest

import ballast

TIMING = ("ns_per_ball", "wall_s")


def untimed(d):
    return {k: v for k, v in d.items() if k not in TIMING}


# (Python call, the same run on the command line)
CASES = [
    (
        dict(process="d_choice", n=200, m=2000, runs=5, seed=9, d=3),
        ["--process", "d_choice", "--n", "200", "--m", "2000", "--runs", "5", "--seed", "9", "--param", "d=3"],
    ),
    (
        dict(process="one_plus_beta", n=64, m=640, batch=32, runs=3, beta=0.5, tie_break="first"),
        ["--process", "one_plus_beta", "--param", "beta=0.5", "--n", "64", "--m", "640", "--batch", "32", "--runs", "3", "--tie-break", "first"],
    ),
    (
        dict(process="two_choice", n=100, m=1000, runs=4, seed=2, weights="exp", weight_mean=2.0, engine="bins"),
        ["--process", "two_choice", "--n", "100", "--m", "1000", "--runs", "4", "--seed", "2", "--weights", "exp", "--weight-mean", "2", "--engine", "bins"],
    ),
    (
        dict(process="two_choice", n=50, m=500, runs=2, graph="cycle", potentials=["quadratic", "exponential:alpha=0.1"]),
        ["--process", "two_choice", "--n", "50", "--m", "500", "--runs", "2", "--graph", "cycle", "--potential", "quadratic", "--potential", "exponential:alpha=0.1"],
    ),
    (
        dict(process="two_choice", n=100, m=1000, runs=3, tau=4, delay_mode="adversarial"),
        ["--process", "two_choice", "--n", "100", "--m", "1000", "--runs", "3", "--tau", "4", "--delay-mode", "adversarial"],
    ),
    (
        dict(process="two_choice", n=100, m=2000, runs=3, churn="every=100,join_at=average"),
        ["--process", "two_choice", "--n", "100", "--m", "2000", "--runs", "3", "--churn", "every=100,join_at=average"],
    ),
    (
        dict(process="one_plus_beta", n=100, m=2000, runs=3, beta=0.5, dispatchers="k=4,tau=10"),
        ["--process", "one_plus_beta", "--param", "beta=0.5", "--n", "100", "--m", "2000", "--runs", "3", "--dispatchers", "k=4,tau=10"],
    ),
    (
        dict(process="rbb", n=20, m=40, rounds=50, burn_in=5, runs=2),
        ["--process", "rbb", "--n", "20", "--m", "40", "--rounds", "50", "--burn-in", "5", "--runs", "2"],
    ),
    (
        dict(process="leaky_bins", n=20, lambda_=0.5, rounds=30, runs=2, d=2),
        ["--process", "leaky_bins", "--n", "20", "--lambda", "0.5", "--rounds", "30", "--runs", "2", "--param", "d=2"],
    ),
    (
        dict(process=None, n=30, m=60, runs=2, offline=2),
        ["--offline", "2", "--n", "30", "--m", "60", "--runs", "2"],
    ),
]


@pytest.mark.parametrize("kwargs,argv", CASES, ids=[c[0]["process"] or "offline" for c in CASES])
def test_same_numbers_as_the_command_line(kwargs, argv, cli):
    code, out, err = cli("simulate", "--json", *argv)
    assert code == 0, err
    expected = json.loads(out)
    got = ballast.simulate(**kwargs)
    assert untimed(got.raw) == untimed(expected)


def test_result_fields_and_numpy_distributions():
    r = ballast.simulate("two_choice", 1000, 10_000, runs=16, seed=5)
    assert r.process == "two_choice" and r["n"] == 1000 and r["runs"] == 16
    values, fractions = r.gap.distribution
    assert isinstance(values, np.ndarray) and values.dtype == np.int64
    assert isinstance(fractions, np.ndarray) and fractions.dtype == np.float64
    assert np.all(np.diff(values) > 0)
    assert fractions.sum() == pytest.approx(1.0)
    # The mean of the rounded-up gaps is at least the mean gap.
    assert float(values @ fractions) >= r.gap.mean - 1e-12
    assert r.gap.runs == 16 and r.gap.stderr > 0
    assert r.statistic("max_load")[0] == r.statistics["max_load"]["mean"]
    assert r.samples_per_ball == pytest.approx(2.0)
    with pytest.raises(AttributeError):
        r.no_such_field


def test_seed_changes_the_numbers_and_threads_do_not():
    a = ballast.simulate("one_choice", 100, 1000, runs=8, seed=1)
    b = ballast.simulate("one_choice", 100, 1000, runs=8, seed=1, threads=1)
    c = ballast.simulate("one_choice", 100, 1000, runs=8, seed=2)
    assert untimed(a.raw) == untimed(b.raw)
    assert untimed(a.raw) != untimed(c.raw)


def test_print_config_is_the_command_lines(cli):
    text = ballast.simulate("quantile", 100, 1000, runs=3, delta=0.25, print_config=True)
    code, out, _ = cli("simulate", "--process", "quantile", "--param", "delta=0.25", "--n", "100", "--m", "1000", "--runs", "3", "--print-config")
    assert code == 0 and text == out


def test_keywords_map_to_options_and_params():
    argv = ballast._argv(
        {"process": "g_bounded", "n": 10, "m": None, "json": False, "potentials": "quadratic", "param": {"g": 2}},
        {"offset": 1.5, "strict": True},
    )
    assert argv == ["--process", "g_bounded", "--n", "10", "--potential", "quadratic", "--param", "g=2", "--param", "offset=1.5", "--param", "strict=true"]
    ids = {o["id"] for o in ballast.simulate_options()}
    assert {"process", "params", "n", "m", "batch", "runs", "seed", "tie_break", "offline", "potentials", "threads"} <= ids


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        (dict(process="two_chioce", n=10, m=10), "did you mean `two_choice`"),
        (dict(process="two_choice", n=10, m=10, beta=0.5), "unknown parameter `beta`"),
        (dict(process="one_plus_beta", n=10, m=10, beta=1.5), "beta"),
        (dict(process="two_choice", n=10, m=10, runs=0), "--runs"),
        (dict(process="two_choice", n=10, m=10, engine="fast"), "fast"),
        (dict(process="two_choice", n=10, m=10, print_config="yes"), "switch"),
        (dict(process="two_choice", n=10), "--m"),
    ],
)
def test_bad_input_raises_value_error_with_the_message(kwargs, needle, cli):
    with pytest.raises(ValueError) as e:
        ballast.simulate(**kwargs)
    assert needle in str(e.value)


def test_bad_input_message_is_the_command_lines(cli):
    with pytest.raises(ValueError) as e:
        ballast.simulate("one_plus_beta", 10, 10, beta=1.5)
    code, _, err = cli("simulate", "--process", "one_plus_beta", "--param", "beta=1.5", "--n", "10", "--m", "10")
    assert code == 2
    assert err.strip() == "error: " + str(e.value)


def test_the_gil_is_released_during_a_run():
    ticks = 0
    done = threading.Event()

    def work():
        ballast.simulate("two_choice", 1000, 2_000_000, runs=4, seed=1, threads=1)
        done.set()

    t = threading.Thread(target=work)
    t.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    assert ticks > 10


def test_list_parameters_are_python_lists(cli):
    """`p=[0.5, 0.5]` (a list, tuple or numpy array of numbers) is `--param p=0.5,0.5`."""
    argv = ballast._argv({"process": "rank_vector"}, {"p": [0.5, 0.5]})
    assert argv == ["--process", "rank_vector", "--param", "p=0.5,0.5"]
    assert ballast._argv({}, {"f": (1, 2.5)}) == ["--param", "f=1,2.5"]
    assert ballast._argv({}, {"f": np.array([1.0, 3.0])}) == ["--param", "f=1.0,3.0"]
    code, out, err = cli("simulate", "--json", "--process", "rank_vector", "--n", "2", "--m", "100", "--runs", "3", "--param", "p=0.5,0.5")
    assert code == 0, err
    for p in ([0.5, 0.5], (0.5, 0.5), np.array([0.5, 0.5])):
        got = ballast.simulate("rank_vector", 2, 100, runs=3, p=p)
        assert untimed(got.raw) == untimed(json.loads(out))
    got = ballast.simulate("k_threshold", 50, 500, runs=2, f=[0, 1.5])
    assert got["runs"] == 2 and len(got.runs) == 2


def test_k_threshold_with_a_threshold_formula(cli):
    """`k_threshold`'s history form (`k` questions, a `threshold` formula in j, avg, t, n) from
    Python gives the command line's numbers; without `k` it is refused naming `k`."""
    params = ["--param", "k=3", "--param", "threshold=avg + if(t < n, j - 2, j)"]
    code, out, err = cli("simulate", "--json", "--process", "k_threshold", "--n", "50", "--m", "500", "--runs", "2", *params)
    assert code == 0, err
    got = ballast.simulate("k_threshold", 50, 500, runs=2, k=3, threshold="avg + if(t < n, j - 2, j)")
    assert untimed(got.raw) == untimed(json.loads(out))
    with pytest.raises(ValueError) as e:
        ballast.simulate("k_threshold", 50, 500, threshold="avg + j")
    assert "needs `k`" in str(e.value)


@pytest.mark.parametrize(
    "value,needle",
    [([], "non-empty list"), ([0.5, "a"], "list of numbers"), ([[0.5], [0.5]], "list of numbers"), (np.zeros((2, 2)), "2-d array")],
)
def test_bad_list_parameters_raise_value_error(value, needle):
    with pytest.raises(ValueError) as e:
        ballast.simulate("rank_vector", 2, 100, p=value)
    assert needle in str(e.value)
