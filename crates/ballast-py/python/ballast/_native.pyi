"""Type stubs of the native module ``ballast._native`` (PyO3, ``crates/ballast-py/src``).

Use the functions of :mod:`ballast`; these take command-line words and return JSON text.
"""

from typing import Callable, List, Optional, Tuple

__version__: str

def simulate(argv: List[str]) -> str:
    """Runs ``ballast simulate ARGV...``; the ``--json`` object as JSON text (a JSON string
    holding the config with ``--print-config``). Raises ValueError, KeyboardInterrupt or
    RuntimeError."""

def simulate_options() -> str:
    """The options of ``ballast simulate`` as JSON text (a list of objects)."""

def run(argv: List[str], write: bool) -> Tuple[str, str, str, str]:
    """Runs ``ballast run ARGV...`` (no ``--shard``); (item id, CSV text, metadata JSON,
    extras JSON). Writes the outputs to ``--out`` only if ``write``."""

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
