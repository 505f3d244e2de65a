"""The layers of ``results.gpkg``: per method, users, cells and association lines; sector
wedges; the study area and region; a table of the methods.

:func:`gis_layers` says what the layers are (each made a chunk at a time when written),
:func:`write_geopackage` writes them. Layers are named per method with
:func:`layer_suffixes`; ±inf in a number is written as null (:func:`gis_nulls`), since
GIS tools take an infinite REAL for a number. The layers are described in
docs/scenarios.md, "The GeoPackage".
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import shapely
from scipy.spatial import cKDTree

from cellopt.drop import Drop
from cellopt.network import Network
from cellopt.parameters import Quantity

__all__ = ["ASSOCIATION_COLUMNS", "DEFAULT_BEAMWIDTH_DEG", "FALLBACK_SITE_DISTANCE_M",
           "SECTOR_RADIUS_SHARE", "gis_layers", "gis_nulls", "layer_suffixes", "sector_wedges",
           "write_geopackage"]

#: Radius of the wedges of the ``sectors`` layer, as a share of the median distance from
#: each sectorised site to its nearest other one (a third: the wedges of neighbouring
#: sites facing each other stay apart).
SECTOR_RADIUS_SHARE = 1.0 / 3.0
#: The site distance a network with fewer than two sectorised sites is drawn with [m]
#: (TR 36.814's urban macro inter-site distance).
FALLBACK_SITE_DISTANCE_M = 500.0
#: Opening of a wedge [°] when neither the cell (``beamwidth_deg``) nor the radio model
#: gives a horizontal half-power beamwidth: the TR 38.901 antenna element's.
DEFAULT_BEAMWIDTH_DEG = 65.0
#: Points on the arc of a wedge.
_ARC_POINTS = 17
#: The widest wedge drawn [°] (a full turn would close the arc on itself).
_MAX_OPENING_DEG = 359.0
#: The columns of the ``association_<m>`` layers, in order: one row per served user, whose
#: line runs from the user to its serving cell's nearest wraparound image.
ASSOCIATION_COLUMNS: tuple[Quantity, ...] = (
    Quantity("user_id", "user id", "the user (a served one: users without a serving cell "
                 "have no line)"),
    Quantity("serving_cell_id", "cell id", "its serving cell, at the line's other end"),
    Quantity("serving_tier", "tier", "tier of the serving cell"),
    Quantity("rate_mbps", "Mbit/s", "the user's rate"),
    Quantity("length_m", "m", "the line's length: from the user to the copy of its serving "
                 "cell nearest to it (the cell itself without wraparound)"),
)


class _Layer(NamedTuple):
    """One layer of ``results.gpkg``: how to make its rows, and what it is."""

    chunks: Callable[[], Iterator[pd.DataFrame]]
    """Its rows, a chunk at a time (GeoDataFrames; plain DataFrames for a table)."""
    geometry_type: str | None
    """``"Point"``, ``"LineString"``, ``"Polygon"``, ...; None for a table without geometry."""
    description: str
    """What the layer holds (the ``description`` of its row in ``gpkg_contents``)."""


def layer_suffixes(labels: Iterable[str]) -> dict[str, str]:
    """The suffix of each method's layers in ``results.gpkg`` (``users_<suffix>``, ...).

    The label lowercased, every run of characters other than ``a``–``z`` and ``0``–``9``
    replaced by one underscore, underscores at either end stripped (``"RE 6 dB"`` →
    ``re_6_db``, ``"power (ipm)"`` → ``power_ipm``; ``method`` if nothing is left). A
    suffix already taken by an earlier label gets ``_2``, ``_3``, ... (the first free).

    Parameters
    ----------
    labels : iterable of str
        The method labels, in the run's order.

    Returns
    -------
    dict of str to str
        Suffix by label, in the same order.
    """
    out: dict[str, str] = {}
    for label in labels:
        base = re.sub(r"[^a-z0-9]+", "_", str(label).lower()).strip("_") or "method"
        suffix, k = base, 1
        while suffix in out.values():
            k += 1
            suffix = f"{base}_{k}"
        out[label] = suffix
    return out


def gis_layers(drop: Drop, columns: dict[str, dict[str, Any]], cells: gpd.GeoDataFrame,
               patterns: gpd.GeoDataFrame | None, chunk_users: int) -> dict[str, _Layer]:
    """The layers of ``results.gpkg``, by name, in the order written.

    Parameters
    ----------
    drop : Drop
    columns : dict of str to dict
        :meth:`Drop.user_columns` of each method's solution, by label.
    cells : geopandas.GeoDataFrame
        One row per (method, cell), with a ``method`` column (``RunResult.cells``).
    patterns : geopandas.GeoDataFrame or None
        the power patterns: one row per (method, pattern, cell), with a ``method``
        column; None without a power run.

    Returns
    -------
    dict of str to _Layer
        Per method (suffixes of :func:`layer_suffixes`): ``users_<m>``, ``cells_<m>``,
        ``association_<m>``, ``power_patterns_<m>`` (power methods only); then
        ``sectors``, ``study_area``, ``region`` (those the network has) and the table
        ``methods``. The per-user layers are made `chunk_users` users at a time when
        they are written.
    """
    net = drop.network
    suffix = layer_suffixes(columns)
    pattern_labels = set() if patterns is None else set(patterns["method"])
    layers: dict[str, _Layer] = {}
    for label, cols in columns.items():
        layers[f"users_{suffix[label]}"] = _Layer(
            functools.partial(_user_chunks, drop, cols, Drop.user_frame, chunk_users), "Point",
            f"users under {label!r}: the rows of user_rates.csv, without method")
    for label in columns:
        frame = cells[cells["method"] == label].drop(columns="method").reset_index(drop=True)
        layers[f"cells_{suffix[label]}"] = _Layer(
            functools.partial(iter, [frame]), "Point",
            f"cells under {label!r}: the rows of cell_stats.csv, without method")
    for label, cols in columns.items():
        layers[f"association_{suffix[label]}"] = _Layer(
            functools.partial(_user_chunks, drop, cols, _association_lines, chunk_users), "LineString",
            f"under {label!r}: a line from each served user to its serving cell's nearest "
            "wraparound image")
    for label in columns:
        if label in pattern_labels:
            assert patterns is not None
            frame = patterns[patterns["method"] == label].drop(columns="method")
            layers[f"power_patterns_{suffix[label]}"] = _Layer(
                functools.partial(iter, [frame.reset_index(drop=True)]), "Point",
                f"under {label!r}: every cell's power in every pattern (power_patterns.csv)")
    wedges = sector_wedges(net, getattr(drop.links, "model", None))
    layers["sectors"] = _Layer(
        functools.partial(iter, [wedges]), "Polygon",
        "a wedge per sectorised cell: boresight, half-power beamwidth, radius "
        f"{SECTOR_RADIUS_SHARE:.3g} × the median distance between neighbouring sites")
    for name, area in (("study_area", net.study_area), ("region", net.region)):
        if area is not None:
            frame = gpd.GeoDataFrame({"area_km2": [area.area / 1e6]}, geometry=[area], crs=net.crs)
            layers[name] = _Layer(functools.partial(iter, [frame]), area.geom_type,
                                  f"the network's {name.replace('_', ' ')}")
    table = pd.DataFrame({
        "method": list(columns),
        **{f"{kind}_layer": [f"{kind}_{suffix[label]}" for label in columns]
           for kind in ("users", "cells", "association")},
        "power_patterns_layer": [f"power_patterns_{suffix[label]}" if label in pattern_labels
                                 else None for label in columns]})
    layers["methods"] = _Layer(functools.partial(iter, [table]), None,
                               "each method's label and the names of its layers")
    return layers


def _user_chunks(drop: Drop, cols: dict[str, Any],
                 make: Callable[[Drop, dict[str, Any], slice], gpd.GeoDataFrame], chunk_users: int
                 ) -> Iterator[gpd.GeoDataFrame]:
    """``make(drop, cols, rows)`` for the network's users `chunk_users` at a time (one
    empty chunk for a network without users)."""
    for start in range(0, max(drop.network.n_users, 1), chunk_users):
        yield make(drop, cols, slice(start, start + chunk_users))


def _association_lines(drop: Drop, cols: dict[str, Any], rows: slice) -> gpd.GeoDataFrame:
    """A line from each served user of `rows` to its serving cell's nearest image.

    Parameters
    ----------
    drop : Drop
    cols : dict
        :meth:`Drop.user_columns` of one solution (``serving_cell``: the serving cell's row,
        −1 for none).
    rows : slice
        Network user rows.

    Returns
    -------
    geopandas.GeoDataFrame
        One row per served user of `rows`, in network order: :data:`ASSOCIATION_COLUMNS`;
        a two-point LineString from the user to the copy of its serving cell nearest to
        it (:meth:`Network.nearest_image_m`: the cell itself without wraparound), in the
        network's CRS.
    """
    net = drop.network
    start, _, _ = rows.indices(net.n_users)
    serving = np.asarray(cols["serving_cell"][rows])
    served = np.flatnonzero(serving >= 0)
    user_rows = start + served
    cell_xy = net.nearest_image_m(user_rows, serving[served]).reshape(-1, 2)   # (n, 2)
    user_xy = shapely.get_coordinates(np.asarray(net.users.geometry.values[user_rows])
                                      ).reshape(-1, 2)
    lines = shapely.linestrings(np.stack([user_xy, cell_xy], axis=1))     # (n, 2, 2) → (n,)
    return gpd.GeoDataFrame({
        "user_id": net.users["user_id"].iloc[user_rows].to_numpy(),
        "serving_cell_id": cols["serving_cell_id"][user_rows],
        "serving_tier": np.asarray(cols["serving_tier"])[user_rows],
        "rate_mbps": np.asarray(cols["rate_mbps"], dtype=float)[user_rows],
        "length_m": np.hypot(*(cell_xy - user_xy).T),
    }, geometry=lines, crs=net.crs)


def _model_beamwidth_deg(model: Any) -> float:
    """The horizontal half-power beamwidth of the radio model's sector antenna [°].

    ``theta_3db_deg`` of the ``"tr36814"`` pattern; :data:`DEFAULT_BEAMWIDTH_DEG` (the
    TR 38.901 element's 65°) for the ``"tr38901"`` antenna or without a model.
    """
    if model is not None and getattr(model, "antenna", None) == "tr36814":
        return float(model.theta_3db_deg)
    return DEFAULT_BEAMWIDTH_DEG


def _site_distance_m(xy: np.ndarray, site: np.ndarray) -> float:
    """The median distance from each site to its nearest other site [m].

    Parameters
    ----------
    xy : ndarray, shape (n, 2)
        Cell positions [m].
    site : ndarray of int, shape (n,)
        Each cell's site, codes 0..n_sites-1; a site is at its cells' mean position, and
        sites at one position count once.

    Returns
    -------
    float
        :data:`FALLBACK_SITE_DISTANCE_M` for fewer than two site positions.
    """
    if len(xy) == 0:
        return FALLBACK_SITE_DISTANCE_M
    count = np.bincount(site)
    sites = np.column_stack([np.bincount(site, weights=xy[:, k]) for k in (0, 1)])[count > 0]
    sites = np.unique(sites / count[count > 0, None], axis=0)
    if len(sites) < 2:
        return FALLBACK_SITE_DISTANCE_M
    distance, _ = cKDTree(sites).query(sites, k=2)
    return float(np.median(distance[:, 1]))


def sector_wedges(network: Network, model: Any = None) -> gpd.GeoDataFrame:
    """A wedge for each cell with a finite azimuth: the ``sectors`` layer.

    Parameters
    ----------
    network : Network
    model : RadioModel, optional
        The model the drop's links were computed with (:attr:`LinkTable.model`), for the
        beamwidth of the cells without their own.

    Returns
    -------
    geopandas.GeoDataFrame
        One row per sectorised cell, in network order (omni cells, NaN azimuth, are left
        out): ``cell_id``, ``site_id``, ``tier``, ``azimuth_deg`` (boresight, clockwise
        from north), ``beamwidth_deg`` (the wedge's opening: the cell's
        ``beamwidth_deg`` where the table has a positive one, else the model's
        horizontal half-power beamwidth, :func:`_model_beamwidth_deg`; at most 359°) and
        ``radius_m`` (:data:`SECTOR_RADIUS_SHARE` × the median distance from a
        sectorised site to its nearest other one, :data:`FALLBACK_SITE_DISTANCE_M` for a
        single site; the same for every wedge). The geometry is a Polygon: the cell's
        position, then :data:`_ARC_POINTS` points on the arc, counter-clockwise.
    """
    cells = network.cells.reset_index(drop=True)
    azimuth = cells["azimuth_deg"].to_numpy(float)
    sector = np.flatnonzero(np.isfinite(azimuth))
    given = (pd.to_numeric(cells["beamwidth_deg"], errors="coerce").to_numpy(float)
             if "beamwidth_deg" in cells else np.full(len(cells), np.nan))
    given = given[sector]
    beam = np.minimum(np.where(np.isfinite(given) & (given > 0), given,
                               _model_beamwidth_deg(model)), _MAX_OPENING_DEG)
    xy = shapely.get_coordinates(np.asarray(cells.geometry.values[sector])).reshape(-1, 2)
    radius = SECTOR_RADIUS_SHARE * _site_distance_m(
        xy, pd.factorize(cells["site_id"].iloc[sector])[0])
    # from the clockwise edge back to the other: a counter-clockwise ring
    bearing = np.radians(azimuth[sector, None] + beam[:, None] * np.linspace(0.5, -0.5, _ARC_POINTS))
    arc = xy[:, None, :] + radius * np.stack([np.sin(bearing), np.cos(bearing)], axis=2)
    rings = np.concatenate([xy[:, None, :], arc, xy[:, None, :]], axis=1)  # (n, points + 2, 2)
    return gpd.GeoDataFrame({
        "cell_id": cells["cell_id"].to_numpy()[sector],
        "site_id": cells["site_id"].to_numpy()[sector],
        "tier": cells["tier"].to_numpy()[sector],
        "azimuth_deg": azimuth[sector],
        "beamwidth_deg": beam,
        "radius_m": np.full(len(sector), radius),
    }, geometry=shapely.polygons(rings), crs=network.crs)


def gis_nulls(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with ±inf in its float columns made NaN, which GDAL writes as null.

    GeoPackage readers (QGIS among them) take an infinite REAL for a number, breaking
    colour ramps and statistics; null is read as "no value". `frame` itself is unchanged.
    """
    fixed = {}
    for name, column in frame.items():
        if name == getattr(frame, "_geometry_column_name", None) or \
                not pd.api.types.is_float_dtype(column.dtype):
            continue
        values = column.to_numpy(dtype=float, na_value=np.nan)
        infinite = np.isinf(values)
        if infinite.any():
            fixed[name] = np.where(infinite, np.nan, values)
    return frame.assign(**fixed) if fixed else frame


def write_geopackage(path: Path, layers: dict[str, _Layer]) -> None:
    """Write `layers` into a new GeoPackage at `path` (a temporary path of the atomic writer).

    Each layer is written from its chunks in turn (appended), so that a table of every
    user is never held whole. A layer written in one chunk gets a spatial index; one of
    several chunks does not: GDAL would update the index row by row on every append
    (four times slower: 7 minutes for 20 million rows), and GIS tools build it on
    demand (QGIS: layer properties, "Create spatial index"). ±inf in a float column is
    written as null, as NaN is (:func:`gis_nulls`); each layer's description goes to
    ``gpkg_contents``.
    """
    for name, layer in layers.items():
        parts = (gis_nulls(frame) for frame in layer.chunks())
        first, second = next(parts), next(parts, None)
        options = {"DESCRIPTION": layer.description}
        if layer.geometry_type is None:  # a table: no geometry, no spatial index
            pyogrio.write_dataframe(first, path, layer=name, driver="GPKG", layer_options=options)
        else:
            options["SPATIAL_INDEX"] = "YES" if second is None else "NO"
            first.to_file(path, layer=name, driver="GPKG", geometry_type=layer.geometry_type,
                          layer_options=options)
        for frame in itertools.chain([] if second is None else [second], parts):
            if len(frame):
                frame.to_file(path, layer=name, driver="GPKG", mode="a")
