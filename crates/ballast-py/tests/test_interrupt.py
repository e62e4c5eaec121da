"""Ctrl-C (SIGINT) stops a long call with KeyboardInterrupt, and the next call runs."""

import os
import signal
import threading
import time

import pytest

import ballast


def _sigint_after(seconds: float) -> threading.Timer:
    t = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    t.start()
    return t


@pytest.mark.parametrize("extra", [{}, {"graph": "cycle"}], ids=["pipeline", "graph"])
def test_sigint_raises_keyboard_interrupt_soon(extra):
    # Thousands of short runs: minutes uninterrupted, well under a second after the signal.
    timer = _sigint_after(0.5)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        ballast.simulate("two_choice", 1000, 200_000, runs=100_000, seed=1, **extra)
    elapsed = time.monotonic() - start
    timer.join()
    assert 0.4 < elapsed < 10, elapsed
    # The request was cleared: the next call runs to the end.
    r = ballast.simulate("two_choice", 100, 1000, runs=2)
    assert r.gap.runs == 2


def test_request_interrupt_from_another_thread():
    t = threading.Timer(0.3, ballast.request_interrupt)
    t.start()
    with pytest.raises(KeyboardInterrupt):
        ballast.simulate("two_choice", 1000, 200_000, runs=100_000)
    t.join()
    ballast.clear_interrupt()
    assert ballast.simulate("one_choice", 10, 10).gap.runs == 1
