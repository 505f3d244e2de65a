"""The checks of :func:`~cellopt.study.report.render_report`'s arguments, and the methods of the frames.

Each check returns the problems it finds as sentences with a fix; the page refuses them all
at once (:class:`~cellopt.errors.ValidationError`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from cellopt.study.report.coverage import CoverageLayer


def check_frames(users: Any, cells: Any) -> list[str]:
    """Problems of the two frames themselves: type, required columns, geometry, CRS, duplicate cells."""
    problems: list[str] = []
    for name, frame, required in (("users", users, ("user_id", "serving_cell_id")),
                                  ("cells", cells, ("cell_id", "tier"))):
        if not isinstance(frame, gpd.GeoDataFrame):
            problems.append(f"{name} is a {type(frame).__name__}; fix: give a geopandas.GeoDataFrame")
            continue
        missing = [c for c in required if c not in frame.columns]
        if missing:
            problems.append(f"{name} table lacks columns {missing}; fix: add them")
        if len(frame) == 0:
            continue
        geom = frame.geometry
        bad = (geom.isna() | (geom.geom_type != "Point")).to_numpy().copy()
        bad[~bad] = geom[~bad].is_empty.to_numpy()
        if bad.any():
            rows = np.flatnonzero(bad)
            problems.append(f"{name} table: rows {rows[:10].tolist()} have no Point geometry; fix: give "
                            f"one non-empty Point per row")
        crs = frame.crs
        if crs is not None and crs.is_geographic:
            problems.append(f"{name} table is in the geographic CRS {crs.name!r} (degrees); fix: project "
                            f"it to metres, e.g. frame.to_crs(frame.estimate_utm_crs())")
    if problems:
        return problems
    key = ["method", "cell_id"] if "method" in cells.columns else ["cell_id"]
    if "cell_id" in cells.columns and cells.duplicated(subset=key).any():
        dup = cells.loc[cells.duplicated(subset=key), "cell_id"].unique()[:10].tolist()
        within = " within a method" if len(key) > 1 else ""
        problems.append(f"cells table: duplicate cell_id {dup}{within}; fix: give each cell a unique id")
    if len(users) and len(cells) and users.crs is not None and cells.crs is not None \
            and users.crs != cells.crs:
        problems.append(f"users CRS {users.crs.name!r} differs from cells CRS {cells.crs.name!r}; fix: "
                        f"users.to_crs(cells.crs)")
    return problems


def check_extras(users: gpd.GeoDataFrame, cells: gpd.GeoDataFrame, selected_method: Any,
                 areas: Mapping[str, Any] | None, coverage: Sequence[Any] | None) -> list[str]:
    """Problems of the method columns, `selected_method`, the line ends, `areas` and `coverage`."""
    problems: list[str] = []
    has_xy = ["serving_x_m" in users.columns, "serving_y_m" in users.columns]
    if any(has_xy) and not all(has_xy):
        problems.append("users table has only one of serving_x_m, serving_y_m; fix: give both or neither")
    if "method" in cells.columns and "method" not in users.columns:
        problems.append("cells table has a method column and users table none; fix: give users a method "
                        "column too, or drop the cells' one")
    if "method" in users.columns:
        for name, frame in (("users", users), ("cells", cells)):
            if "method" in frame.columns and frame["method"].isna().any():
                rows = np.flatnonzero(frame["method"].isna().to_numpy())[:10].tolist()
                problems.append(f"{name} table: rows {rows} have no method; fix: give every row its method")
        if users["user_id"].isna().any():
            rows = np.flatnonzero(users["user_id"].isna().to_numpy())[:10].tolist()
            problems.append(f"users table: rows {rows} have no user_id; fix: give every user an id")
        dup = users.duplicated(subset=["method", "user_id"])
        if dup.any():
            problems.append(f"users table: user_id {users.loc[dup, 'user_id'].unique()[:10].tolist()} "
                            f"repeated within a method; fix: one row per user and method")
    if problems:
        return problems
    methods = frame_methods(users, cells)
    if selected_method is not None:
        if not methods:
            problems.append(f"selected_method {selected_method!r} given, but users table has no method "
                            f"column; fix: give no selected_method, or a method column")
        elif str(selected_method) not in methods:
            problems.append(f"selected_method {selected_method!r} is not a method of the tables; fix: "
                            f"one of {methods}")
    for name, geom in (areas or {}).items():
        try:
            as_geometry(geom)
        except TypeError:
            problems.append(f"area {name!r} is a {type(geom).__name__}; fix: give a shapely geometry")
    for layer in coverage or ():
        if not isinstance(layer, CoverageLayer):
            problems.append(f"coverage holds a {type(layer).__name__}; fix: give CoverageLayer objects")
    return problems


def method_names(frame: pd.DataFrame) -> list[str]:
    """The distinct values of `frame`'s ``method`` column as text, in order of appearance."""
    if "method" not in frame.columns:
        return []
    return list(dict.fromkeys(frame["method"].astype(str)))


def frame_methods(users: pd.DataFrame, cells: pd.DataFrame) -> list[str]:
    """The methods of the stacked frames (the users', then any other of the cells'), or [] when
    `users` has no ``method`` column."""
    if "method" not in users.columns:
        return []
    return list(dict.fromkeys(method_names(users) + method_names(cells)))


def as_geometry(value: Any) -> shapely.Geometry:
    """`value` as one shapely geometry (a GeoSeries or GeoDataFrame: the union of its shapes)."""
    if isinstance(value, gpd.GeoDataFrame | gpd.GeoSeries):
        return value.geometry.union_all()
    if isinstance(value, shapely.Geometry):
        return value
    raise TypeError(type(value).__name__)
