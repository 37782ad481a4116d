"""What every ``nicsim`` subcommand module shares: the console it prints to.

rich is imported with the first table or message: ``nicsim run --json``
prints without it.
"""

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["console"]


@functools.cache
def console() -> "Console":
    """Return the console that tables and messages go to."""
    from rich.console import Console

    return Console()
