"""Messages name settings as Python keywords, the words a Python user typed."""

import pytest

import ballast


def test_advice_names_python_keywords():
    with pytest.raises(ValueError) as e:
        ballast.simulate("memory", n=10, m=10, k=2, engine="levels")
    assert 'use engine="bins"' in str(e.value) and "--engine" not in str(e.value)
    with pytest.raises(ValueError) as e:
        ballast.simulate("one_choice", n=10, m=10, tie_break="first")
    assert 'tie_break="first"` would be ignored' in str(e.value)
