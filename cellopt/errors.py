"""Exceptions raised at cellopt's input boundary, and the memory guard every builder uses."""

from __future__ import annotations

import os
from collections.abc import Sequence

__all__ = ["CelloptError", "ResourceLimitError", "StoreError", "ValidationError",
           "check_memory", "max_memory_bytes"]

#: Environment variable that overrides the memory a single allocation may plan for [GB].
MEMORY_ENV = "CELLOPT_MAX_MEMORY_GB"
#: Offending rows that :func:`describe_rows` lists by default (the others are counted).
ROWS_LISTED = 10


class CelloptError(Exception):
    """Base class of every error cellopt raises on purpose (bad input, limits, damaged stores)."""


class ValidationError(CelloptError, ValueError):
    """Input that cellopt refuses, with the offending rows and how to fix them.

    Parameters
    ----------
    problems : sequence of str
        One line per problem. Each line names the table, the offending rows (by
        position and by id) and the fix.
    """

    def __init__(self, problems: Sequence[str] | str):
        if isinstance(problems, str):
            problems = [problems]
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


class ResourceLimitError(ValidationError):
    """Counts whose arrays would not fit the memory cellopt may use (see :func:`check_memory`)."""


class StoreError(CelloptError):
    """A results folder that cannot be resumed as it is (missing or foreign metadata)."""


def max_memory_bytes() -> int:
    """The memory one planned allocation may use [bytes].

    ``CELLOPT_MAX_MEMORY_GB`` if set, else 80 % of the machine's physical memory.
    """
    env = os.environ.get(MEMORY_ENV)
    if env is not None:
        try:
            value = float(env)
        except ValueError:
            raise ValidationError(f"{MEMORY_ENV}={env!r}; fix: give a number of GB, e.g. 16") from None
        if not value > 0:
            raise ValidationError(f"{MEMORY_ENV}={env!r}; fix: give a number of GB > 0, e.g. 16")
        return int(value * 2**30)
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX: assume 16 GB
        total = 16 * 2**30
    return int(0.8 * total)


def check_memory(n_bytes: float, what: str, fix: str) -> None:
    """Refuse, before allocating, work whose arrays need more than :func:`max_memory_bytes`.

    Parameters
    ----------
    n_bytes : float
        Estimated peak memory of the step [bytes].
    what : str
        The counts that imply it, e.g. ``"1e9 users"``.
    fix : str
        How to ask for less.

    Raises
    ------
    ResourceLimitError
        With the estimate, the limit and how to override it.
    """
    limit = max_memory_bytes()
    if n_bytes > limit:
        raise ResourceLimitError(
            f"{what} need about {n_bytes / 2**30:.3g} GB, more than the {limit / 2**30:.3g} GB "
            f"cellopt may use; fix: {fix}, or raise the limit with the environment variable "
            f"{MEMORY_ENV} (GB)")


def describe_rows(positions: Sequence[int], ids: Sequence | None = None, limit: int = ROWS_LISTED,
                  total: int | None = None) -> str:
    """Render offending rows as ``rows [3, 17] (ids ['a', 'b'])``, shortened past `limit`.

    `total` is the number of offending rows when `positions` (and `ids`) hold only the
    first of them (at least `limit`, or all): a reader that gathers problems over a file
    too large to hold keeps the first :data:`ROWS_LISTED` rows of each and their count.
    """
    positions = [int(p) for p in positions]
    total = len(positions) if total is None else int(total)
    more = f" and {total - limit} more" if total > limit else ""
    text = f"rows {positions[:limit]}{more}"
    if ids is not None:
        shown = [v.item() if hasattr(v, "item") else v for v in list(ids)[:limit]]
        text += f" (ids {shown}{more})"
    return text
