"""`equalize` with `moves` from Python: the keyword is `--param moves=…`, with the command
line's numbers and messages, and `ballast.list()` declares it."""

import json

import pytest

import ballast

TIMING = ("ns_per_ball", "wall_s")


def untimed(d):
    return {k: v for k, v in d.items() if k not in TIMING}


def test_moves_keyword_gives_the_command_lines_numbers(cli):
    args = ["--process", "equalize", "--param", "d=2", "--param", "moves=1", "--n", "50", "--m", "2000", "--runs", "4"]
    code, out, err = cli("simulate", "--json", *args)
    assert code == 0, err
    got = ballast.simulate("equalize", n=50, m=2000, runs=4, d=2, moves=1)
    assert untimed(got.raw) == untimed(json.loads(out))
    # The even spread (no `moves`) redraws the remainder's bins and moves more balls.
    even = ballast.simulate("equalize", n=50, m=2000, runs=4, d=2)
    moved = lambda r: r.raw["statistics"]["moved_per_ball"]["mean"]
    assert 0 < moved(got) < moved(even)
    assert "moves" in json.dumps(ballast.list())


@pytest.mark.parametrize("bad", [-1, 1.5, "one"])
def test_bad_moves_raise_value_error(bad):
    with pytest.raises(ValueError) as e:
        ballast.simulate("equalize", n=10, m=10, d=2, moves=bad)
    assert "parameter `moves` of process `equalize`" in str(e.value)
