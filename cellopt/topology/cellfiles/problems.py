"""The problem report of a cell file: the rows each check finds, and the lines naming them.

Every check of a file adds its offending rows to a :class:`_Report`; the report keeps,
per check, the first :data:`~cellopt.errors.ROWS_LISTED` rows (by their row in the file
and their id) and their count, and composes one line per check that found rows: what is
wrong and its fix. The reports of the chunks of one file share their findings, so that
a check's rows in every chunk make one line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from cellopt.errors import ROWS_LISTED, ValidationError, describe_rows


def _plain_numbers(col: str, degrees: bool = False) -> str:
    """The fix of values of column `col` that are not numbers: what a number in a cell file
    looks like, and the usual ways a spreadsheet export breaks it (the same words for every
    chunk of a file, so that its rows make one line)."""
    fix = (f"give plain numbers in '{col}': no unit or sign such as ° or dBm in the value (the "
           "unit goes in the column name, e.g. 'Power_W'), no thousands separator, a decimal "
           "point (or a decimal comma throughout a file not separated by commas)")
    if degrees:
        fix += (", decimal degrees, not degrees-minutes-seconds (48°08'14\"N is "
                "48 + 8/60 + 14/3600 = 48.1372)")
    return fix


def _no_data_rows(name: str) -> ValidationError:
    return ValidationError(f"{name}: the file has no data rows; fix: give at least one cell")



@dataclasses.dataclass
class _Rows:
    """The offending rows of one check: the first :data:`ROWS_LISTED`, and their count."""

    pos: list[int] = dataclasses.field(default_factory=list)
    ids: list | None = None
    count: int = 0

    def add(self, pos: np.ndarray, ids: np.ndarray | None) -> None:
        room = max(ROWS_LISTED - len(self.pos), 0)
        self.pos += pos[:room].tolist()
        if ids is not None:
            self.ids = (self.ids or []) + list(ids[:room])
        self.count += len(pos)


class _Report:
    """Collects problem lines naming rows by file position and id.

    One line per check (what is wrong and its fix), in the order the checks are made.
    The reports of the chunks of one file share `found`, so that a check's rows in
    every chunk make one line.
    """

    def __init__(self, frame: pd.DataFrame, name: str, id_col: str | None,
                 found: dict[tuple[str, str], _Rows] | None = None):
        self.name = name
        self.pos = frame.index.to_numpy()
        self.ids = frame[id_col].to_numpy(object) if id_col else None
        self.found = {} if found is None else found

    def __call__(self, bad: np.ndarray | pd.Series, what: str, fix: str) -> None:
        bad = np.asarray(bad, bool)
        rows = self.found.setdefault((what, fix), _Rows())  # its place in the order
        if bad.any():
            rows.add(self.pos[bad], None if self.ids is None else self.ids[bad])

    @property
    def problems(self) -> list[str]:
        return _problem_lines(self.name, self.found)


def _problem_lines(name: str, found: dict[tuple[str, str], _Rows],
                   show_ids: Callable[[list], Sequence] | None = None) -> list[str]:
    """The lines of the checks that found rows; `show_ids` converts the ids listed."""
    lines = []
    for (what, fix), rows in found.items():
        if rows.count:
            ids = rows.ids if rows.ids is None or show_ids is None else show_ids(rows.ids)
            lines.append(f"{name}: {describe_rows(rows.pos, ids, total=rows.count)}: {what}; "
                         f"fix: {fix}")
    return lines
