"""Biased bin sampling from Python: `sampling=` is `--sampling` (the option list is read from
clap), with the command line's numbers and messages."""

import json

import pytest

import ballast

TIMING = ("ns_per_ball", "wall_s")


def untimed(d):
    return {k: v for k, v in d.items() if k not in TIMING}


def test_sampling_keyword_gives_the_command_lines_numbers(cli):
    law = "two_class:fraction=0.5,factor=4"
    code, out, err = cli("simulate", "--json", "--process", "two_choice", "--n", "100", "--m", "10000", "--runs", "4", "--sampling", law)
    assert code == 0, err
    got = ballast.simulate("two_choice", n=100, m=10_000, runs=4, sampling=law)
    assert untimed(got.raw) == untimed(json.loads(out))
    assert got["sampling"] == "two_class" and got["sampling_params"] == {"factor": 4.0, "fraction": 0.5}
    # The bias makes Two-Choice's gap grow with m/n (about 0.28 m/n here).
    assert got.gap.mean > 20
    assert "sampling" in {o["id"] for o in ballast.simulate_options()}


def test_bad_sampling_raises_value_error():
    with pytest.raises(ValueError) as e:
        ballast.simulate("two_choice", n=10, m=10, sampling="zipf:t=1")
    assert "unknown parameter `t` for sampling law `zipf`" in str(e.value)
