"""A Python function as the rule of a process (``ballast.simulate(fn, n=..., m=...)``)."""

import math

import pytest

import ballast


def two_choice(loads):
    """Two-Choice with ties to the first sample."""
    return 0 if loads[0] <= loads[1] else 1


def test_a_function_has_the_law_of_the_built_in():
    # The same law as two_choice (ties between equal loads do not change the law of the
    # loads): the mean final gap over 200 runs each, n = 1000, m = 10^4, within 4 standard
    # errors of the difference (a two-sided z-test at about 6e-5).
    mine = ballast.simulate(two_choice, d=2, n=1000, m=10_000, runs=200, seed=3)
    built = ballast.simulate("two_choice", n=1000, m=10_000, runs=200, seed=9)
    se = math.hypot(mine.gap.stderr, built.gap.stderr)
    assert abs(mine.gap.mean - built.gap.mean) < 4 * se + 1e-9, (mine.gap, built.gap)


def test_same_seed_same_numbers_and_extra_arguments():
    a = ballast.simulate(two_choice, n=50, m=500, runs=3, seed=1)
    b = ballast.simulate(two_choice, n=50, m=500, runs=3, seed=1)
    assert (a.gap.mean, a.gap.sd, a.max_gap.mean) == (b.gap.mean, b.gap.sd, b.max_gap.mean)
    seen = []

    def thinning(loads, avg, t):
        seen.append(t)
        return 0 if loads[0] <= avg else 1

    r = ballast.simulate(thinning, n=10, m=20, runs=1)
    assert r.gap.mean >= 0 and sorted(seen) == list(range(20))


def test_errors_in_the_function_are_raised():
    def broken(loads):
        if loads[0] > 2:
            raise ZeroDivisionError("my rule failed")
        return 0

    with pytest.raises(ZeroDivisionError, match="my rule failed"):
        ballast.simulate(broken, n=10, m=1000, runs=2)
    with pytest.raises(ValueError, match="expected a position in 0..2"):
        ballast.simulate(lambda loads: 5, n=10, m=10)
    with pytest.raises(ValueError, match="expected an integer number of samples"):
        ballast.simulate(two_choice, n=10, m=10, d="two")
    # After an error the next run is not interrupted.
    assert ballast.simulate(two_choice, n=10, m=100).gap.mean >= 0


def test_formula_kinds_from_python():
    # A Filling rule as a formula places more than one ball per sample (Twinning: 2 below
    # the average); a threshold formula `k` draws what the affine per_probe = 1 draws (the
    # bin engine, the same seed: the same numbers).
    r = ballast.simulate("filling_rule", n=100, m=10_000, runs=2, balls="if(x < avg, 2, 1)")
    assert r.balls_per_sample > 1.0
    common = dict(n=100, m=10_000, runs=3, seed=4, engine="bins")
    a = ballast.simulate("adaptive", params={"tau.formula": "k", "cap": 8}, **common)
    b = ballast.simulate("adaptive", params={"tau.per_probe": 1, "cap": 8}, **common)
    assert (a.gap.mean, a.samples_per_ball) == (b.gap.mean, b.samples_per_ball)
    with pytest.raises(ValueError, match="required with tau.formula"):
        ballast.simulate("adaptive", n=10, m=100, params={"tau.formula": "k"})
