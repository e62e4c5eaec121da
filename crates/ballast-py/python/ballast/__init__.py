"""ballast: the balls-into-bins laboratory from Python.

The functions here run the same code as the ``ballast`` command line (the native module
``ballast._native`` is the CLI's library, ``ballast_cli::embed``):

- :func:`simulate` is ``ballast simulate``: keyword arguments become its options
  (``runs=4`` is ``--runs 4``), every other keyword is a process parameter (``d=3`` is
  ``--param d=3``). The result holds what ``ballast simulate --json`` prints, with the
  distributions as numpy arrays, every run's values (``result.runs``, a DataFrame) and,
  where observed, the runs over time (``result.trajectory``). The same seed gives the same
  numbers as the command line.
- :class:`Simulation` runs one process step by step: its load vector (numpy), ``run(m,
  record_every=K)``, its ``history`` (a DataFrame), from a given load vector, seeded as run 0
  of :func:`simulate`.
- :func:`run` is ``ballast run CONFIG``, with ``CONFIG`` a path, an item id, TOML text or a
  dict: the item's tidy table (its CSV) as a pandas DataFrame, with the metadata in
  ``df.attrs``. Nothing is written unless ``out`` is given.
- :func:`registry` (also ``ballast.list``) is ``ballast list``: processes, parameters,
  models, topologies, tie-breaking rules, settings, statistics, potentials, the off-line
  optimum, engines, items, as a dict or as the listing's text.

Bad input raises :class:`ValueError` with the registry's message; Ctrl-C stops a running
call after its runs in progress and raises :class:`KeyboardInterrupt`; other failures raise
:class:`RuntimeError`. Long calls release the GIL, and the runner's progress goes to stderr.

Example::

    import ballast
    r = ballast.simulate("d_choice", n=1000, m=1e4, runs=8, seed=3, d=3)
    print(r.gap.mean, r.gap.stderr, r.runs.final_gap.quantile(0.9))
    sim = ballast.Simulation("two_choice", 1000, seed=3).run(1e5, record_every=1e4)
    print(sim.loads.max(), sim.history.tail(1))
    df = ballast.run("configs/filling22/fig8_1.toml", scale="quick")
"""

from __future__ import annotations

import builtins
import io
import json
import os
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, Mapping, Optional, Sequence, Tuple, Union, overload

import numpy as np

from . import _native

if TYPE_CHECKING:
    import pandas as pd
    from typing import Literal

# `list` stays importable as `ballast.list` (older code), but `from ballast import *` brings
# `registry` only, so the builtin `list` is never shadowed.
__all__ = [
    "simulate",
    "run",
    "registry",
    "Simulation",
    "time_trials",
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
    """A Python value as command-line text (``True`` -> ``true``, floats round-trip: the
    command line accepts ``1e6`` where it is an exact integer and says so where it is not)."""
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

    The per-run fields as tables: :attr:`runs` (every run's values, a DataFrame, from
    ``per_run``) and :attr:`trajectory` (every run at every observation point, with
    ``observe_every`` or ``batch``; the attribute is the table, ``r["trajectory"]`` the JSON
    field). ``r.runs`` is that table; the number of runs is ``r["runs"]``.
    """

    def __init__(self, raw: Dict[str, Any]):
        # ``raw`` is the ``--json`` object as printed (its per-run fields included).
        self._per_run: Dict[str, Any] = raw.get("per_run") or {}
        self._trajectory: Dict[str, Any] = raw.get("trajectory") or {}
        self.raw: Dict[str, Any] = raw
        self._wrapped: Dict[str, Any] = {
            k: Summary(v) if isinstance(v, dict) and "distribution" in v else v
            for k, v in raw.items()
        }

    @property
    def runs(self) -> "pd.DataFrame":
        """The value of every statistic in every run: a pandas DataFrame with one row per run
        (index ``run``, 0 to runs - 1, the order of the seeds) and a column per statistic
        (``final_gap``, ``max_gap``, ``max_load``, ``min_load``, ``empty_bins``, …; a tracked
        potential as ``potential:<spec>``). The gaps are as measured (the distribution rounds
        them up). Empty for round-based models and ``offline=D``, which report means only.

        Note: ``r.runs`` is the table; the number of runs is ``r["runs"]``.
        """
        import pandas as pd

        df = pd.DataFrame({k: np.asarray(v, dtype=np.float64) for k, v in self._per_run.items()})
        df.index.name = "run"
        return df

    @property
    def trajectory(self) -> "pd.DataFrame":
        """The runs over time, where they were observed (``observe_every=K``, or every batch
        with ``batch=B``): one row per run and observation point with the columns ``run``,
        ``balls`` (placed by the process so far), ``balls_per_bin`` (``balls / n``), ``gap``,
        ``max_load``, ``min_load`` (and tracked potentials as ``potential:<spec>``). The last
        point of a run is its end: its ``gap`` is that run's ``final_gap``. Empty without
        observation points. ``r.trajectory.groupby("balls").gap.mean()`` is the mean curve.
        """
        import pandas as pd

        xs = self._trajectory.get("balls_per_bin", [])
        cols = self._trajectory.get("columns", {})
        if not xs or not cols:
            return pd.DataFrame(
                columns=["run", "balls", "balls_per_bin", "gap", "max_load", "min_load"]
            )
        n = int(self.raw.get("n", 1))
        runs = len(next(iter(cols.values()))[0])
        x = np.repeat(np.asarray(xs, dtype=np.float64)[None, :], runs, axis=0).ravel()
        data: Dict[str, Any] = {
            "run": np.repeat(np.arange(runs, dtype=np.int64), len(xs)),
            "balls": np.rint(x * n).astype(np.int64),
            "balls_per_bin": x,
        }
        for name, per_x in cols.items():
            # per_x[j][r]: the value of run r at point j; rows are run-major.
            data[name] = np.asarray(per_x, dtype=np.float64).T.ravel()
        return pd.DataFrame(data)

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
    process: Union[str, Callable[..., int]],
    n: int,
    m: Optional[Union[int, float]] = None,
    batch: Optional[Union[int, float]] = None,
    runs: Union[int, float] = 1,
    seed: int = 1,
    *,
    params: Optional[Mapping[str, Any]] = None,
    **kwargs: Any,
) -> Union[SimulateResult, str]:
    """Runs ``ballast simulate`` and returns its ``--json`` object as a :class:`SimulateResult`.

    ``process`` and ``n`` are required (``process=""`` with ``offline=D``); ``m`` is required
    for allocation processes. Whole numbers may be given as floats when exact (``m=1e6``);
    ``m=1.5`` is refused. ``r.runs`` holds every run's values (a DataFrame) and, with
    ``observe_every=K`` or ``batch=B``, ``r.trajectory`` the runs over time.

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

    A Python function as the rule: ``process=fn`` (``simulate(fn, n=1000, m=10**5, d=2)``,
    ``d`` samples, default 2); see :func:`_rule_kind`. An exception it raises stops the runs
    and is raised here.

    Raises ValueError on bad input (the registry's message), KeyboardInterrupt when
    interrupted (after the runs in progress), RuntimeError on other failures.
    """
    if callable(process):
        kind = _rule_kind(process, kwargs.pop("d", 2))
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
    rule and 1.3-1.6 times that for a ``rule`` formula of the loads and ``u``
    (``simulate("rule", choose="…")``; about 5 times with ``avg`` or ``t``).
    """
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
    """A config path, or an item id (``paper/item``) of :func:`registry`'s items."""
    path = os.fspath(config)
    if os.path.exists(path) or path.endswith(".toml"):
        return path
    for item in json.loads(_native.list_json())["items"]:
        if item["id"] == path:
            return item["path"]
    return path


def _is_toml_text(config: Any) -> bool:
    """Whether a string is a config's text rather than a path or an item id: it names no
    existing file and has a line break or an ``=`` (neither appears in an item id)."""
    return (
        isinstance(config, str)
        and ("\n" in config or "=" in config)
        and not os.path.exists(config)
    )


def run(
    config: Union[str, "os.PathLike[str]", Mapping[str, Any]],
    scale: str = "full",
    *,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    threads: Optional[int] = None,
    reference: Optional[Union[str, "os.PathLike[str]"]] = None,
    checkpoint: Union[None, bool, str, "os.PathLike[str]"] = None,
    cached_only: bool = False,
    id: str = "user/config",  # noqa: A002 (the item id, as in ``ballast run``'s outputs)
) -> "pd.DataFrame":
    """Runs one experiment config as ``ballast run`` and returns its tidy table.

    ``config`` is one of

    - a path ``configs/<paper>/<item>.toml`` or an item id ``<paper>/<item>`` (see
      :func:`registry`);
    - the TOML text of a config (a string with a line break or an ``=``);
    - a dict of the same tables (``{"title": …, "seed": 1, "runs": 4, "x": {"variable":
      "n"}, "grid": {"n": [100]}, "point": {"m": 1000}, "series": [{"name": "Two",
      "process": {"kind": "two_choice"}}]}``), checked exactly as the file would be
      (messages point into its TOML form).

    A text or dict config runs as item ``id`` (``<paper>/<item>``, default
    ``user/config``): the seeds derive from the item id, as for a file, so the same config
    and id give the same numbers as the file ``configs/<paper>/<item>.toml``. Its
    ``[[reference]]`` files are looked for in ``reference`` (default: the nearest
    ``reference/`` above the working directory). ``scale`` is ``"full"``, ``"quick"``
    (``--quick``) or ``"reduced"`` (``--reduced``).

    Files: with ``out=None`` (the default) nothing is written and no checkpoints are read
    or kept; with ``out=DIR`` the outputs go to ``DIR/<paper>/<item>.{csv,json,svg,md}``
    and the finished runs to ``DIR/.checkpoint`` (as the command line). ``checkpoint=DIR``
    keeps checkpoints elsewhere, ``checkpoint=False`` keeps none. ``threads`` is that of
    ``ballast run``; ``cached_only=True`` simulates nothing and fails unless every run is
    checkpointed.

    Returns a pandas DataFrame with the columns of the item's CSV (``series``, the group
    variables, ``n b m x statistic value stderr runs reference z``, …). ``df.attrs`` holds
    ``id``, ``metadata`` (the JSON output's metadata: seed, scale, runs, engine, wall time,
    …), ``notes``, ``warnings``, ``series``, ``reference_labels``, ``x_label``,
    ``y_label``, ``x_log``, ``written`` (paths, empty without ``out``) and ``runs``: every
    run's value behind each row (a DataFrame with ``row``, the index of the row in ``df``,
    its ``series``, ``n``, ``x``, ``statistic``, then ``run`` and ``value``; rows that are not
    a mean over runs, such as distributions, have none).

    Raises ValueError for a missing or invalid config, KeyboardInterrupt when interrupted
    (finished runs stay in the checkpoints, if any), RuntimeError on other failures.
    """
    import pandas as pd

    if scale not in _SCALES:
        raise ValueError(f"unknown scale `{scale}`: expected one of {', '.join(_SCALES)}")
    opts: builtins.list = []
    if scale != "full":
        opts.append("--" + scale)
    if out is not None:
        opts += ["--out", os.fspath(out)]
    if threads is not None:
        opts += ["--threads", _text(threads)]
    if reference is not None:
        opts += ["--reference", os.fspath(reference)]
    if checkpoint is False or (checkpoint is None and out is None):
        opts.append("--no-checkpoint")
    elif checkpoint is not None and checkpoint is not True:
        opts += ["--checkpoint", os.fspath(checkpoint)]
    if cached_only:
        opts.append("--cached-only")
    write = out is not None
    if isinstance(config, Mapping):
        text = json.dumps(config, allow_nan=False)
        # The stand-in path: references are looked for above the working directory.
        argv = [os.path.join(os.getcwd(), "config.toml"), *opts]
        item_id, csv_text, meta, extras = _native.run_text("json", text, id, argv, write)
    elif _is_toml_text(config):
        argv = [os.path.join(os.getcwd(), "config.toml"), *opts]
        item_id, csv_text, meta, extras = _native.run_text("toml", config, id, argv, write)
    else:
        argv = [_resolve_config(config), *opts]
        item_id, csv_text, meta, extras = _native.run(argv, write)
    df = pd.read_csv(io.StringIO(csv_text))
    df.attrs.update({"id": item_id, "metadata": json.loads(meta)})
    extra = json.loads(extras)
    per_run = extra.pop("per_run", [])
    df.attrs.update(extra)
    df.attrs["runs"] = _run_values(df, per_run)
    return df


def _run_values(df: "pd.DataFrame", per_run: builtins.list) -> "pd.DataFrame":
    """The long table of every run's value behind each row of ``df``: ``row`` (its index in
    ``df``), the row's ``series``, ``n``, ``x``, ``statistic``, then ``run`` and ``value``."""
    import pandas as pd

    counts = np.array([len(v) for v in per_run], dtype=np.int64)
    rows = np.repeat(np.arange(len(per_run), dtype=np.int64), counts)
    keys = [c for c in ("series", "n", "x", "statistic") if c in df.columns]
    out = df.loc[rows, keys].reset_index(drop=True) if len(rows) else pd.DataFrame(columns=keys)
    out.insert(0, "row", rows)
    out["run"] = np.concatenate([np.arange(c) for c in counts]) if len(rows) else []
    out["value"] = np.array([_num(v) for vals in per_run for v in vals], dtype=np.float64)
    return out


def time_trials(
    process: str,
    ns: Iterable[Union[int, float]],
    m: Union[int, float, Callable[[int], Union[int, float]]],
    *,
    max_wallclock_time: float = 10.0,
    runs_per_call: int = 8,
    max_runs: Optional[int] = None,
    seed: int = 1,
    **kwargs: Any,
) -> "pd.DataFrame":
    """Per-run values of ``process`` at several ``n`` within a wall-clock budget.

    For each ``n`` in ``ns`` (``m`` a number or a function of ``n``, e.g. ``lambda n: 10 *
    n``) it calls :func:`simulate` with ``runs=runs_per_call`` again and again until that
    ``n``'s share of ``max_wallclock_time`` seconds (the budget divided evenly over ``ns``)
    is spent or ``max_runs`` runs are done; every ``n`` gets at least one call. Other keywords
    go to :func:`simulate` (options and process parameters).

    Returns a DataFrame with a row per run: ``n``, ``m``, ``call``, ``seed``, ``run`` and the
    columns of :attr:`SimulateResult.runs`. Seeds: call ``k`` at every ``n`` is
    ``simulate(..., seed=seed + k)``, so a row is reproducible from its ``seed`` and ``run``;
    only how many calls fit the budget depends on the machine.
    """
    import time

    import pandas as pd

    ns = [_whole("n", n) for n in ns]
    if not ns:
        raise ValueError("ns: expected at least one number of bins")
    if runs_per_call < 1:
        raise ValueError("runs_per_call: expected at least 1")
    share = max_wallclock_time / len(ns)
    frames = []
    for n in ns:
        balls = _whole("m", m(n) if callable(m) else m)
        start, done, call = time.perf_counter(), 0, 0
        while call == 0 or (
            time.perf_counter() - start < share and (max_runs is None or done < max_runs)
        ):
            runs = runs_per_call if max_runs is None else min(runs_per_call, max_runs - done)
            r = simulate(process, n, balls, runs=runs, seed=seed + call, **kwargs)
            df = r.runs.reset_index()
            df.insert(0, "seed", seed + call)
            df.insert(0, "call", call)
            df.insert(0, "m", balls)
            df.insert(0, "n", n)
            frames.append(df)
            done += runs
            call += 1
    return pd.concat(frames, ignore_index=True)


class Simulation:
    """One allocation process run step by step, with its load vector.

    ``Simulation(process, n, seed=1, engine="auto", start=None, batch=None,
    tie_break="random", **params)``: ``params`` are the process parameters (``d=3``,
    ``beta=0.5``), as for :func:`simulate`. ``start`` is a load vector to begin with (a
    sequence or numpy array of ``n`` non-negative integers); by default every bin is empty.
    Unit weights only; not for round-based models, ``offline``, ``graph`` or potentials
    (use :func:`simulate`).

    - ``sim.run(m, record_every=K)`` places ``m`` more balls, observing the loads every
      ``K`` balls (every batch when batched) and at the end; returns ``self``.
    - ``sim.loads`` is the load vector now (numpy int64, a copy).
    - ``sim.history`` is a DataFrame of every observation so far: ``balls`` (placed since
      the start), ``gap``, ``max_load`` and ``min_load``.
    - ``sim.balls`` is the number of balls placed so far.

    Seeds, exactly: the generator is seeded as run 0 of :func:`simulate` with the same
    ``seed`` (``derive_seed(seed, [hash_str("simulate"), 0, 0])``), and the run spec is that
    of ``simulate``'s one-point config. So the first call ``Simulation(p, n, seed=s,
    **params).run(m, record_every=K)`` gives, number for number, run 0 of ``simulate(p, n,
    m, runs=1, seed=s, observe_every=K, **params)``: its gap, max and min load are row 0 of
    ``simulate(...).runs`` and its history the ``trajectory``. The same holds with
    ``start=loads`` and ``simulate(..., start="file:path=<loads file>")``.

    Successive calls continue the same random stream: the generator is never reseeded, and
    each call starts from the loads the previous one left. (They are still separate runs of
    the engine: ``run(a); run(b)`` need not give the numbers of ``run(a + b)``, whose
    observations and draws are scheduled differently.)

    On the level engine (``engine="levels"``, or ``"auto"`` where it is exact), bins are
    interchangeable and ``loads`` is in ascending order; ``engine="bins"`` keeps every
    bin's identity. A call releases the GIL; Ctrl-C is raised when it returns.
    """

    def __init__(
        self,
        process: str,
        n: Union[int, float],
        *,
        seed: int = 1,
        engine: str = "auto",
        start: Optional[Union[Sequence[int], np.ndarray]] = None,
        batch: Optional[Union[int, float]] = None,
        tie_break: str = "random",
        **params: Any,
    ) -> None:
        options = {
            "process": process,
            "n": n,
            # A stand-in for validation (each call sets its own m).
            "m": batch if batch is not None else 1,
            "batch": batch,
            "seed": seed,
            "engine": engine,
            "tie_break": tie_break,
        }
        loads = None if start is None else _load_vector(start)
        self._native = _native.Simulation(_argv(options, params), loads)
        self.process: str = process
        self.seed: int = seed

    def run(self, m: Union[int, float], record_every: Optional[Union[int, float]] = None) -> "Simulation":
        """Places ``m`` more balls (observing every ``record_every`` balls and at the end);
        returns ``self``. ``m=1e6`` is taken as 1000000; a fraction is refused."""
        self._native.run(_whole("m", m), None if record_every is None else _whole("record_every", record_every))
        return self

    @property
    def loads(self) -> np.ndarray:
        """The load of every bin now (numpy int64; ascending on the level engine)."""
        raw = self._native.loads()
        if raw is None:
            raise ValueError("the loads of a random start are drawn by the first run: call run() first")
        return np.frombuffer(raw, dtype="<u8").astype(np.int64)

    @property
    def history(self) -> "pd.DataFrame":
        """Every observation so far: ``balls``, ``gap``, ``max_load``, ``min_load``."""
        import pandas as pd

        rows = self._native.history()
        df = pd.DataFrame(rows, columns=["balls", "gap", "max_load", "min_load"])
        return df.astype({"balls": np.int64, "gap": np.float64, "max_load": np.float64, "min_load": np.float64})

    @property
    def balls(self) -> int:
        """Balls placed by the process so far."""
        return int(self._native.balls)

    @property
    def n(self) -> int:
        """Bins."""
        return int(self._native.n)

    def __repr__(self) -> str:
        return f"Simulation({self.process!r}, n={self.n}, seed={self.seed}, balls={self.balls})"


def _load_vector(start: Any) -> builtins.list:
    """A start load vector as a list of ints: a flat sequence or array of whole numbers (exact
    floats allowed), each at least 0."""
    arr = np.asarray(start)
    bad = ValueError("start: expected a flat sequence of whole numbers, one load per bin")
    if arr.ndim != 1:
        raise bad
    if arr.size and np.issubdtype(arr.dtype, np.floating):
        if not (np.isfinite(arr).all() and (arr == np.rint(arr)).all()):
            raise bad
        arr = arr.astype(np.int64)
    elif arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise bad
    if arr.size and arr.min() < 0:
        raise ValueError("start: loads are at least 0")
    return [int(v) for v in arr]


def _whole(name: str, value: Union[int, float]) -> int:
    """A whole number given as int or exact float (``1e6``); anything else is refused."""
    if isinstance(value, bool):
        raise ValueError(f"`{name}`: expected a whole number, got {value!r}")
    if isinstance(value, (int, np.integer)):
        v = int(value)
    elif isinstance(value, (float, np.floating)) and float(value).is_integer():
        v = int(value)
    else:
        raise ValueError(f"`{name}` = {value!r}: expected a whole number (such as 1000 or 1e6)")
    if v < 0:
        raise ValueError(f"`{name}` = {value!r}: expected a whole number of at least 0")
    return v


@overload
def registry(format: "Literal['dict']" = ...) -> Dict[str, Any]: ...
@overload
def registry(format: "Literal['text']") -> str: ...


def registry(format: str = "dict") -> Union[Dict[str, Any], str]:
    """The content of ``ballast list`` (also reachable as ``ballast.list``, which is not
    exported by ``from ballast import *`` so the builtin ``list`` is never shadowed).

    ``format="dict"`` (default): a dict with ``processes`` (name, doc, params with name,
    doc, type and default, engines, settings, tie_breaks, weights), ``models``,
    ``topologies``, ``tie_breaks``, ``weights``, ``sampling``, ``capacities``, ``starts``,
    ``churn_and_dispatchers``, ``engines``,
    ``settings``, ``delay_modes``, ``stops``, ``statistics`` (allocation series),
    ``measures`` (other item kinds), ``potentials`` (each entry: name, form, doc, needs),
    ``offline`` (``simulate --offline D``), ``configs_dir`` and ``items`` (id, path).
    ``format="text"``: the listing's text, as printed.
    """
    if format == "text":
        return _native.list_text()
    if format == "dict":
        return json.loads(_native.list_json())
    raise ValueError(f"unknown format `{format}`: expected dict or text")


#: ``ballast list``: the same function as :func:`registry` (kept for existing code).
list = registry  # noqa: A001


def request_interrupt() -> None:
    """Asks running calls (in any thread) to stop after their runs in progress."""
    _native.request_interrupt()


def clear_interrupt() -> None:
    """Clears an interrupt request, so the next call runs."""
    _native.clear_interrupt()
