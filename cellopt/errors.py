"""Exceptions raised at cellopt's input boundary."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["ValidationError"]


class ValidationError(ValueError):
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


def describe_rows(positions: Sequence[int], ids: Sequence | None = None, limit: int = 10) -> str:
    """Render offending rows as ``rows [3, 17] (ids ['a', 'b'])``, shortened past `limit`."""
    positions = [int(p) for p in positions]
    more = f" and {len(positions) - limit} more" if len(positions) > limit else ""
    text = f"rows {positions[:limit]}{more}"
    if ids is not None:
        shown = [v.item() if hasattr(v, "item") else v for v in list(ids)[:limit]]
        text += f" (ids {shown}{more})"
    return text
