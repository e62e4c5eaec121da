"""Type stubs of the native module ``ballast._native`` (PyO3, ``crates/ballast-py/src``).

Use the functions of :mod:`ballast`; these take command-line words and return JSON text.
"""

from typing import Callable, List, Optional, Tuple

__version__: str

def simulate(argv: List[str]) -> str:
    """Runs ``ballast simulate ARGV...``; the ``--json`` object as JSON text (a JSON string
    holding the config with ``--print-config``), plus ``per_run`` and ``trajectory`` for
    allocation processes. Raises ValueError, KeyboardInterrupt or RuntimeError."""

def simulate_options() -> str:
    """The options of ``ballast simulate`` as JSON text (a list of objects)."""

def run(argv: List[str], write: bool) -> Tuple[str, str, str, str]:
    """Runs ``ballast run ARGV...`` (no ``--shard``); (item id, CSV text, metadata JSON,
    extras JSON). Writes the outputs to ``--out`` only if ``write``."""

def run_text(kind: str, text: str, id: str, argv: List[str], write: bool) -> Tuple[str, str, str, str]:
    """Runs a config given as text (``kind``: ``toml`` or ``json``) as item ``id``; ``argv``
    is a stand-in config path and the options of ``ballast run``. Returns what :func:`run`
    returns."""

def list_text() -> str:
    """The text of ``ballast list``."""

def list_json() -> str:
    """The content of ``ballast list`` as JSON text."""

def request_interrupt() -> None:
    """Asks running calls to stop after their runs in progress."""

def clear_interrupt() -> None:
    """Clears an interrupt request."""
def register_rule(func: Callable[[Tuple[float, ...], float, int, int], int], d: int) -> str: ...
def take_rule_error() -> Optional[BaseException]: ...

class Simulation:
    """An allocation process run step by step (see :class:`ballast.Simulation`)."""

    def __init__(self, argv: List[str], start: Optional[List[int]] = None) -> None: ...
    def run(self, m: int, every: Optional[int] = None) -> List[Tuple[int, float, float, float]]:
        """Places ``m`` more balls; the (balls, gap, max load, min load) observations."""
    def loads(self) -> Optional[bytes]:
        """The loads as little-endian u64 bytes (``None`` before a random start is drawn)."""
    def history(self) -> List[Tuple[int, float, float, float]]:
        """Every observation so far."""
    @property
    def balls(self) -> int: ...
    @property
    def n(self) -> int: ...
    @property
    def engine(self) -> str: ...
