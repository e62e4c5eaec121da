"""ballast: the balls-into-bins laboratory from Python.

The functions here run the same code as the ``ballast`` command line (the native module
``ballast._native`` is the CLI's library, ``ballast_cli::embed``):

- :func:`simulate` is ``ballast simulate``: keyword arguments become its options
  (``runs=4`` is ``--runs 4``), every other keyword is a process parameter (``d=3`` is
  ``--param d=3``). The result holds what ``ballast simulate --json`` prints, with the
  distributions as numpy arrays. The same seed gives the same numbers as the command line.
- :func:`run` is ``ballast run CONFIG``: the item's tidy table (its CSV) as a pandas
  DataFrame, with the metadata in ``df.attrs``. Nothing is written unless ``out`` is given.
- :func:`list` is ``ballast list``: the registry (processes, parameters, models,
  topologies, tie-breaking rules, engines, items) as a dict, or as the listing's text.

Bad input raises :class:`ValueError` with the registry's message; Ctrl-C stops a running
call after its runs in progress and raises :class:`KeyboardInterrupt`; other failures raise
:class:`RuntimeError`. Long calls release the GIL, and the runner's progress goes to stderr.

Example::

    import ballast
    r = ballast.simulate("d_choice", n=1000, m=10_000, runs=8, seed=3, d=3)
    print(r.gap.mean, r.gap.stderr)
    values, fractions = r.gap.distribution      # numpy arrays
    df = ballast.run("configs/filling22/fig8_1.toml", scale="quick")
"""

from __future__ import annotations

import builtins
import io
import json
import os
from typing import TYPE_CHECKING, Any, Dict, Iterable, Mapping, Optional, Tuple, Union, overload

import numpy as np

from . import _native

if TYPE_CHECKING:
    import pandas as pd
    from typing import Literal

__all__ = [
    "simulate",
    "run",
    "list",
    "simulate_options",
    "SimulateResult",
    "Summary",
    "request_interrupt",
    "clear_interrupt",
    "__version__",
]

__version__: str = _native.__version__

_OPTIONS: builtins.list = json.loads(_native.simulate_options())
# Python keyword -> option spec: the clap id (``tie_break``, ``potentials``) and the long flag
# with underscores (``tie_break``, ``potential``) both name an option.
_BY_KEYWORD: Dict[str, Dict[str, Any]] = {}
for _spec in _OPTIONS:
    _BY_KEYWORD[_spec["id"]] = _spec
    _BY_KEYWORD[_spec["long"].replace("-", "_")] = _spec
del _spec


def simulate_options() -> builtins.list:
    """The options of ``ballast simulate`` as clap defines them.

    Each is a dict with ``id`` (the Python keyword), ``long`` (the flag without dashes),
    ``takes`` (``"flag"``, ``"value"`` or ``"list"``), ``value_name``, ``default``,
    ``choices`` and ``help``. Any keyword of :func:`simulate` that is not one of these is a
    process parameter.
    """
    return [dict(o) for o in _OPTIONS]


def _text(value: Any) -> str:
    """A Python value as command-line text (``True`` -> ``true``, floats round-trip)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return str(value)


def _param_text(key: str, value: Any) -> str:
    """A process parameter as ``--param`` text: a list, tuple or 1-d numpy array of numbers
    (``p=[0.5, 0.5]``) becomes ``0.5,0.5``, the command line's list; anything else as
    :func:`_text`."""
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise ValueError(f"`{key}`: expected a flat list of numbers, got a {value.ndim}-d array")
        value = value.tolist()
    if not isinstance(value, (builtins.list, tuple)):
        return _text(value)
    if not value:
        raise ValueError(f"`{key}` = []: expected a non-empty list of numbers")
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise ValueError(f"`{key}`: expected a list of numbers, got the entry {v!r}")
    return ",".join(_text(v) for v in value)


def _items(value: Any) -> Iterable[Any]:
    """A list option's values: one value, or any iterable of them."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        return [value]
    return value


def _argv(options: Mapping[str, Any], params: Mapping[str, Any]) -> builtins.list:
    """The ``ballast simulate`` arguments for these keywords (``None`` and ``False`` omit an
    option)."""
    argv: builtins.list = []
    for key, value in options.items():
        if value is None:
            continue
        spec = _BY_KEYWORD[key]
        flag = "--" + spec["long"]
        if spec["takes"] == "flag":
            if not isinstance(value, bool):
                raise ValueError(f"`{key}` is a switch ({flag}): pass True or False, not {value!r}")
            if value:
                argv.append(flag)
        elif spec["takes"] == "list":
            if spec["id"] == "params" and isinstance(value, Mapping):
                value = [f"{k}={_param_text(k, v)}" for k, v in value.items()]
            for v in _items(value):
                argv += [flag, _text(v)]
        else:
            argv += [flag, _text(value)]
    for key, value in params.items():
        if value is not None:
            argv += ["--param", f"{key}={_param_text(key, value)}"]
    return argv


class Summary:
    """A statistic over runs: mean, standard error, sd, runs and the distribution of the
    rounded values (``values``, ``fractions``: numpy arrays, ascending values)."""

    __slots__ = ("mean", "stderr", "sd", "runs", "rounding", "values", "fractions")

    def __init__(self, raw: Mapping[str, Any]):
        self.mean: float = _num(raw.get("mean"))
        self.stderr: float = _num(raw.get("stderr"))
        self.sd: float = _num(raw.get("sd"))
        self.runs: int = int(raw.get("runs", 0))
        self.rounding: Optional[str] = raw.get("rounding")
        dist = sorted((int(k), _num(v)) for k, v in raw.get("distribution", {}).items())
        self.values: np.ndarray = np.array([k for k, _ in dist], dtype=np.int64)
        self.fractions: np.ndarray = np.array([v for _, v in dist], dtype=np.float64)

    @property
    def distribution(self) -> Tuple[np.ndarray, np.ndarray]:
        """``(values, fractions)``: each rounded value and the fraction of runs with it."""
        return self.values, self.fractions

    def __repr__(self) -> str:
        return f"Summary(mean={self.mean!r}, stderr={self.stderr!r}, runs={self.runs})"


def _num(v: Any) -> float:
    """A JSON number as float (``null``, the JSON of NaN, as NaN)."""
    return float("nan") if v is None else float(v)


class SimulateResult(Mapping):
    """What ``ballast simulate --json`` prints, for Python.

    Every field of the JSON object is an attribute and a key (``r.gap``, ``r["n"]``);
    ``raw`` is the object itself. Fields with a distribution (``gap``, ``max_gap``) are
    :class:`Summary` objects with numpy arrays. Which fields exist depends on the kind:
    allocation processes report ``gap``, ``max_gap``, ``statistics``, ``samples_per_ball``…;
    round-based models and ``offline=D`` report ``statistics`` (name -> mean, stderr).
    """

    def __init__(self, raw: Dict[str, Any]):
        self.raw: Dict[str, Any] = raw
        self._wrapped: Dict[str, Any] = {
            k: Summary(v) if isinstance(v, dict) and "distribution" in v else v
            for k, v in raw.items()
        }

    def __getitem__(self, key: str) -> Any:
        return self._wrapped[key]

    def __iter__(self):
        return iter(self._wrapped)

    def __len__(self) -> int:
        return len(self._wrapped)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_wrapped"][name]
        except KeyError:
            raise AttributeError(name) from None

    def statistic(self, name: str) -> Tuple[float, float]:
        """``(mean, stderr)`` of a statistic: ``gap``, ``max_gap`` or one of ``statistics``."""
        if name in ("gap", "max_gap") and name in self._wrapped:
            s = self._wrapped[name]
            return s.mean, s.stderr
        s = self.raw.get("statistics", {})[name]
        return _num(s["mean"]), _num(s["stderr"])

    def __repr__(self) -> str:
        head = {k: self.raw[k] for k in ("process", "offline", "n", "m", "runs", "seed") if k in self.raw}
        return f"SimulateResult({head})"


def simulate(
    process: Optional[str] = None,
    n: Optional[int] = None,
    m: Optional[int] = None,
    batch: Optional[int] = None,
    runs: int = 1,
    seed: int = 1,
    *,
    params: Optional[Mapping[str, Any]] = None,
    **kwargs: Any,
) -> Union[SimulateResult, str]:
    """Runs ``ballast simulate`` and returns its ``--json`` object as a :class:`SimulateResult`.

    Every option of ``ballast simulate`` is a keyword (its clap id or its long flag with
    ``_``: ``tie_break="first"``, ``engine="bins"``, ``weights="exp"``, ``weight_mean=2``,
    ``observe_every=100``, ``tau=8``, ``delay_mode="adversarial"``, ``offline=2``,
    ``graph="cycle"``, ``potentials=["quadratic"]``, ``stop="finish"``, ``lambda_=0.9`` for
    ``--lambda``, ``rounds=100``, ``burn_in=10``, ``threads=2``, ``print_config=True``; see
    :func:`simulate_options`). ``None`` leaves an option out; a list repeats a repeatable
    one. Every other keyword is a process parameter (``d=3`` is ``--param d=3``; a list,
    tuple or numpy array of numbers is a list parameter, ``p=[0.5, 0.5]`` is
    ``--param p=0.5,0.5``), and ``params={"d": 3}`` passes parameters whatever their names.

    Runs ``r`` use ``derive_seed(seed, [hash_str("simulate"), 0, r])``, as the command line:
    the same arguments give the same numbers as ``ballast simulate --json``.

    With ``print_config=True`` the one-point config (TOML text) is returned instead.

    A Python function as the rule: ``rule=fn`` instead of ``process`` (with ``d=`` samples,
    default 2); see :func:`_rule_kind`. An exception it raises stops the runs and is raised
    here.

    Raises ValueError on bad input (the registry's message), KeyboardInterrupt when
    interrupted (after the runs in progress), RuntimeError on other failures.
    """
    rule = kwargs.pop("rule", None)
    if rule is not None:
        if process is not None:
            raise ValueError("give either `process` or `rule`, not both")
        kind = _rule_kind(rule, kwargs.pop("d", 2))
        return _with_rule_errors(
            lambda: simulate(kind, n, m, batch, runs, seed, params=params, **kwargs)
        )
    if "lambda_" in kwargs:
        kwargs["lambda"] = kwargs.pop("lambda_")
    options: Dict[str, Any] = {
        "process": process,
        "n": n,
        "m": m,
        "batch": batch,
        "runs": runs,
        "seed": seed,
    }
    proc_params: Dict[str, Any] = {}
    for key, value in kwargs.items():
        if key in _BY_KEYWORD:
            options[key] = value
        else:
            proc_params[key] = value
    if params:
        proc_params.update(params)
    out = json.loads(_native.simulate(_argv(options, proc_params)))
    if isinstance(out, str):
        return out
    return SimulateResult(out)


_RULES: Dict[Tuple[Any, int], str] = {}


def _rule_kind(rule: Any, d: Any) -> str:
    """The process kind of a Python rule over ``d`` samples, registered on first use.

    ``rule(loads)`` gets the tuple of the ``d`` sampled bins' loads in draw order (and, if it
    takes parameters so named, ``avg`` = W/n, ``t`` = balls placed before this one and ``n``)
    and returns the 0-based position of the sample that gets the ball. Samples are drawn by
    the run's sampling law from the run's random numbers, so the same seed gives the same
    numbers. The function is called once per ball with the GIL taken by the run's worker
    thread: about 15 µs per ball (measured at n = 1000, m = 2·10⁵, on 1 or 2 threads: the
    GIL is taken and given back at every ball), against a few nanoseconds for a built-in
    rule or a ``rule`` formula (``simulate("rule", choose="…")``).
    """
    if not callable(rule):
        raise TypeError(f"`rule` must be a function of the sampled loads, not {rule!r}")
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
        raise ValueError(f"`d` = {d!r}: expected an integer number of samples in 1..=8")
    key = (rule, int(d))
    if key not in _RULES:
        import inspect

        try:
            names = set(inspect.signature(rule).parameters)
        except (TypeError, ValueError):
            names = set()
        extra = [k for k in ("avg", "t", "n") if k in names]

        def call(loads: Tuple[float, ...], avg: float, t: int, n: int) -> Any:
            given = {"avg": avg, "t": t, "n": n}
            return rule(loads, **{k: given[k] for k in extra})

        _RULES[key] = _native.register_rule(call, int(d))
    return _RULES[key]


def _with_rule_errors(work: Any) -> Any:
    """Runs ``work`` and raises the first exception a Python rule raised during it."""
    try:
        out = work()
    except KeyboardInterrupt:
        err = _native.take_rule_error()
        if err is not None:
            raise err from None
        raise
    err = _native.take_rule_error()
    if err is not None:
        raise err
    return out


_SCALES = ("full", "quick", "reduced")


def _resolve_config(config: Union[str, "os.PathLike[str]"]) -> str:
    """A config path, or an item id (``paper/item``) of :func:`list`'s items."""
    path = os.fspath(config)
    if os.path.exists(path) or path.endswith(".toml"):
        return path
    for item in json.loads(_native.list_json())["items"]:
        if item["id"] == path:
            return item["path"]
    return path


def run(
    config: Union[str, "os.PathLike[str]"],
    scale: str = "full",
    *,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    threads: Optional[int] = None,
    reference: Optional[Union[str, "os.PathLike[str]"]] = None,
    checkpoint: Union[None, bool, str, "os.PathLike[str]"] = None,
    cached_only: bool = False,
) -> "pd.DataFrame":
    """Runs one experiment config as ``ballast run`` and returns its tidy table.

    ``config`` is a path ``configs/<paper>/<item>.toml`` or an item id ``<paper>/<item>``
    (see :func:`list`). ``scale`` is ``"full"``, ``"quick"`` (``--quick``) or
    ``"reduced"`` (``--reduced``).

    Files: with ``out=None`` (the default) nothing is written and no checkpoints are read
    or kept; with ``out=DIR`` the outputs go to ``DIR/<paper>/<item>.{csv,json,svg,md}``
    and the finished runs to ``DIR/.checkpoint`` (as the command line). ``checkpoint=DIR``
    keeps checkpoints elsewhere, ``checkpoint=False`` keeps none. ``threads`` and
    ``reference`` (the reference CSV directory) are those of ``ballast run``;
    ``cached_only=True`` simulates nothing and fails unless every run is checkpointed.

    Returns a pandas DataFrame with the columns of the item's CSV (``series``, the group
    variables, ``n b m x statistic value stderr runs reference z``, …). ``df.attrs`` holds
    ``id``, ``metadata`` (the JSON output's metadata: seed, scale, runs, engine, wall time,
    …), ``notes``, ``warnings``, ``series``, ``reference_labels``, ``x_label``,
    ``y_label``, ``x_log`` and ``written`` (paths, empty without ``out``).

    Raises ValueError for a missing or invalid config, KeyboardInterrupt when interrupted
    (finished runs stay in the checkpoints, if any), RuntimeError on other failures.
    """
    import pandas as pd

    if scale not in _SCALES:
        raise ValueError(f"unknown scale `{scale}`: expected one of {', '.join(_SCALES)}")
    argv = [_resolve_config(config)]
    if scale != "full":
        argv.append("--" + scale)
    if out is not None:
        argv += ["--out", os.fspath(out)]
    if threads is not None:
        argv += ["--threads", _text(threads)]
    if reference is not None:
        argv += ["--reference", os.fspath(reference)]
    if checkpoint is False or (checkpoint is None and out is None):
        argv.append("--no-checkpoint")
    elif checkpoint is not None and checkpoint is not True:
        argv += ["--checkpoint", os.fspath(checkpoint)]
    if cached_only:
        argv.append("--cached-only")
    item_id, csv_text, meta, extras = _native.run(argv, out is not None)
    df = pd.read_csv(io.StringIO(csv_text))
    df.attrs.update({"id": item_id, "metadata": json.loads(meta)})
    df.attrs.update(json.loads(extras))
    return df


@overload
def list(format: "Literal['dict']" = ...) -> Dict[str, Any]: ...  # noqa: A001
@overload
def list(format: "Literal['text']") -> str: ...  # noqa: A001


def list(format: str = "dict") -> Union[Dict[str, Any], str]:  # noqa: A001 (ballast.list)
    """The content of ``ballast list``.

    ``format="dict"`` (default): a dict with ``processes`` (name, doc, params with name,
    doc, type and default, engines, settings, tie_breaks, weights), ``models``,
    ``topologies``, ``tie_breaks``, ``settings``, ``weights``, ``engines``, ``configs_dir``
    and ``items`` (id, path). ``format="text"``: the listing's text, as printed.
    """
    if format == "text":
        return _native.list_text()
    if format == "dict":
        return json.loads(_native.list_json())
    raise ValueError(f"unknown format `{format}`: expected dict or text")


def request_interrupt() -> None:
    """Asks running calls (in any thread) to stop after their runs in progress."""
    _native.request_interrupt()


def clear_interrupt() -> None:
    """Clears an interrupt request, so the next call runs."""
    _native.clear_interrupt()
