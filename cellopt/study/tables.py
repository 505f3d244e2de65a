"""The tables a run writes: per-method frames stacked, their CSV form, the power patterns.

A run's per-user and per-cell tables are :meth:`Drop.frames <cellopt.Drop.frames>` of
each method's solution one under the other, with a ``method`` column first
(:func:`stack`); as CSV, the point geometry is written as ``x_m``, ``y_m`` (:func:`plain`).
The power-pattern table (:func:`power_patterns`) has one row per (method, pattern, cell):
its columns are declared in :data:`POWER_PATTERN_COLUMNS` as the result columns of
:mod:`cellopt.drop` are, and :data:`RESULT_TABLES` lists every declared table of a run's
outputs (docs/conventions.md shows them:
``cellopt.drop.result_columns_markdown(RESULT_TABLES)``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

import geopandas as gpd
import numpy as np
import pandas as pd

from cellopt.drop import CELL_RESULT_COLUMNS, USER_RESULT_COLUMNS, Drop
from cellopt.parameters import Quantity
from cellopt.solution import Solution
from cellopt.study.gis import ASSOCIATION_COLUMNS

__all__ = ["POWER_PATTERN_COLUMNS", "RESULT_TABLES", "plain", "power_patterns", "stack",
           "write_csv"]

#: The columns of the power-pattern table (``power_patterns.csv`` after ``method``, and the
#: ``power_patterns_<m>`` layers of ``results.gpkg``), in order.
POWER_PATTERN_COLUMNS: tuple[Quantity, ...] = (
    Quantity("cell_id", "cell id", "the cell"),
    Quantity("pattern", "index", "the pattern's number, 0 first"),
    Quantity("pattern_share", "share", "θ_s, the share of the band the pattern gets (the "
                 "shares of a method's patterns sum to 1)"),
    Quantity("tier", "tier", "the cell's tier"),
    Quantity("power_dbm", "dBm", "the cell's transmit power in the pattern; -inf when off "
                 "(null in results.gpkg)"),
    Quantity("off", "bool", "the cell is off in the pattern"),
)
#: Every declared table of a run's outputs, by what docs/conventions.md calls it.
RESULT_TABLES: dict[str, tuple[Quantity, ...]] = {
    "users": USER_RESULT_COLUMNS,
    "cells": CELL_RESULT_COLUMNS,
    "power patterns": POWER_PATTERN_COLUMNS,
    "association lines": ASSOCIATION_COLUMNS,
}


def stack(frames: dict[str, gpd.GeoDataFrame]) -> gpd.GeoDataFrame:
    """Per-method frames one under the other, with a ``method`` column first."""
    parts = [f.assign(method=label)[["method", *f.columns]] for label, f in frames.items()]
    first = next(iter(frames.values()))
    return gpd.GeoDataFrame(pd.concat(parts, ignore_index=True), geometry="geometry", crs=first.crs)


def plain(frame: gpd.GeoDataFrame) -> pd.DataFrame:
    """A frame for CSV: the point geometry as ``x_m``, ``y_m`` (in the network's CRS)."""
    table = pd.DataFrame(frame.drop(columns="geometry"))
    at = table.columns.get_loc("method") + 2  # after method and the id
    table.insert(at, "x_m", frame.geometry.x.to_numpy())
    table.insert(at + 1, "y_m", frame.geometry.y.to_numpy())
    return table


def write_csv(f: IO[str], chunks: Iterator[gpd.GeoDataFrame]) -> None:
    """Write frames one under the other as one CSV (the header once), in their CSV form."""
    for i, chunk in enumerate(chunks):
        plain(chunk).to_csv(f, index=False, header=i == 0)


def power_patterns(drop: Drop, solutions: dict[str, Solution]) -> gpd.GeoDataFrame | None:
    """Every cell's power in every pattern of each power solution (None: there is none).

    One row per (method, pattern, cell), at the cell's position: ``method``, then
    :data:`POWER_PATTERN_COLUMNS`.
    """
    cells = drop.network.cells.reset_index(drop=True)
    frames = {}
    for label, sol in solutions.items():
        if sol.power is None:
            continue
        n_patterns, n_cells = sol.power.patterns.shape
        pattern = np.repeat(np.arange(n_patterns), n_cells)
        at = np.tile(np.arange(n_cells), n_patterns)
        power_dbm = sol.power.patterns.ravel()
        frames[label] = gpd.GeoDataFrame({
            "cell_id": cells["cell_id"].to_numpy()[at], "pattern": pattern,
            "pattern_share": sol.power.pattern_share[pattern], "tier": cells["tier"].to_numpy()[at],
            "power_dbm": power_dbm, "off": np.isneginf(power_dbm)},
            geometry=cells.geometry.to_numpy()[at], crs=cells.crs)
    return stack(frames) if frames else None
