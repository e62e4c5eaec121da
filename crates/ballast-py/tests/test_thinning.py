"""The thinning and multi-ball kinds of issue 42 (process items of the registry) from Python:
they reach ``ballast.simulate`` as every built-in does, list parameters included."""

import pytest

import ballast


def test_thinning_and_multi_ball_kinds_from_python():
    # d_thinning with d = 2, f = [0] draws what mean_thinning draws (bin engine, same seed).
    common = dict(n=100, m=10_000, runs=2, seed=3, engine="bins")
    a = ballast.simulate("d_thinning", f=[0.0], **common)
    b = ballast.simulate("mean_thinning", **common)
    assert (a.gap.mean, a.samples_per_ball) == (b.gap.mean, b.samples_per_ball)
    # kd_choice: d = 3 distinct samples per round of k = 2 balls (a repeated draw is redrawn).
    r = ballast.simulate("kd_choice", n=100, m=10_000, runs=2, k=2, d=3)
    assert 1.5 <= r.samples_per_ball < 1.6
    # always_go_left with random ties: one sample per group.
    r = ballast.simulate("always_go_left", n=100, m=10_000, d=2, ties="random")
    assert r.samples_per_ball == 2.0
    with pytest.raises(ValueError, match="d = 3 samples need d - 1 = 2"):
        ballast.simulate("d_thinning", n=10, m=100, d=3, f=[0.0])
