"""Bin capacities from Python: `capacities=` is `--capacities` (the option list is read from
clap), with the command line's numbers and messages."""

import json

import pytest

import ballast

TIMING = ("ns_per_ball", "wall_s")


def untimed(d):
    return {k: v for k, v in d.items() if k not in TIMING}


def test_capacities_keyword_gives_the_command_lines_numbers(cli):
    caps = "two_class:factor=8"
    code, out, err = cli("simulate", "--json", "--process", "two_choice", "--n", "100", "--m", "10000", "--runs", "4", "--capacities", caps)
    assert code == 0, err
    got = ballast.simulate("two_choice", n=100, m=10_000, runs=4, capacities=caps)
    assert untimed(got.raw) == untimed(json.loads(out))
    assert got["capacities"].startswith("two_class")
    # Uniform samples cannot give the large half its share 8/9: the gap is about
    # (m/n)(f - 3)/(2(f + 1)) = 100 * 5/18, about 28.
    assert got.gap.mean > 20
    proportional = ballast.simulate("two_choice", n=100, m=10_000, runs=4, capacities=caps + ",sampling=proportional")
    assert proportional.gap.mean < 5
    assert "capacities" in {o["id"] for o in ballast.simulate_options()}
    assert len(ballast.list()["capacities"]) == 4


def test_bad_capacities_raise_value_error():
    with pytest.raises(ValueError) as e:
        ballast.simulate("two_choice", n=10, m=10, capacities="lognormal:mu=1")
    assert "unknown parameter `mu` for capacity law `lognormal`" in str(e.value)
