"""OpenCelliD exports: their columns, the checks of their codes, and cells grouped into sites.

The rows of one cell (seen with several area codes) are reduced to the one with most
samples, then the latest; LTE sectors are grouped by eNB into sites, and sites closer
than the merge distance are merged (:func:`_merge_sites`).
"""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
from scipy import sparse
from scipy.sparse import csgraph
from scipy.spatial import cKDTree

from cellopt.network import CELL_COLUMNS, cells_frame
from cellopt.topology.cellfiles.problems import _Report
from cellopt.topology.cellfiles.records import CellDefaults, SiteMerging

__all__ = ["OPENCELLID_COLUMNS", "OPENCELLID_REQUIRED"]

#: Columns of an OpenCelliD cell export, in the export's order (the order of headerless
#: exports). Files are recognised by these names in any order and case.
OPENCELLID_COLUMNS: tuple[str, ...] = (
    "radio", "mcc", "net", "area", "cell", "unit", "lon", "lat", "range", "samples",
    "changeable", "created", "updated", "averageSignal",
)
#: The OpenCelliD columns a file must have to be read as an export; the others are optional.
OPENCELLID_REQUIRED: tuple[str, ...] = ("radio", "mcc", "net", "area", "cell", "lon", "lat")
# A CSV with at least this many OpenCelliD column names but not all the required ones is
# refused rather than read as a plain table (it is a damaged export, not a cell table).
_OPENCELLID_QUORUM = 7
# Radio values of OpenCelliD exports.
_OPENCELLID_RADIOS = ("GSM", "UMTS", "CDMA", "LTE", "NR")
# Codes above 2**53 cannot be held exactly as float64; no real cell code is that large.
_MAX_CODE = 2**53
# Columns read_cells makes itself for OpenCelliD exports: a file column of that name
# would be overwritten, so it is refused.
_OPENCELLID_MADE = (*CELL_COLUMNS, "geometry", "mnc", "enb_id", "range_m")

# Radios whose cell number is unique only within its area (GSM LAC, CDMA NID); for the
# others (UMTS, LTE, NR) the cell number is unique within the operator (mcc, mnc).
_AREA_SCOPED_RADIOS = ("GSM", "CDMA")


def _opencellid_codes(frame: pd.DataFrame, name: str, found: dict | None = None
                      ) -> tuple[dict[str, np.ndarray], list]:
    """Code columns of an OpenCelliD export, and the problems found in them (gathered into
    `found` too, when given: see :class:`~cellopt.topology.cellfiles.problems._Report`).

    Returns ``radio`` (upper case), ``mcc``, ``net``, ``area``, ``cell`` (int64; -1 where
    bad) and the optional ``samples``, ``range`` and ``updated`` [Unix s] (float; NaN
    where missing or absent).
    """
    report = _Report(frame, name, "cell", found)
    codes: dict[str, np.ndarray] = {}
    for col, top in (("mcc", 999), ("net", 999), ("area", _MAX_CODE), ("cell", _MAX_CODE)):
        num = pd.to_numeric(frame[col], errors="coerce").to_numpy(float)
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(num) | (num < 0) | (num != np.floor(num)) | (num > top)
        what = "a code in [0, 999]" if top == 999 else "a non-negative integer"
        report(bad, f"{col} is missing or not {what}",
               f"give integer codes in '{col}', or drop the row")
        codes[col] = np.where(bad, -1, np.nan_to_num(num)).astype(np.int64)
    radio = frame["radio"]
    text = pd.Series(radio.astype(object).where(radio.notna(), None), dtype="string")
    text = text.str.strip().str.upper().fillna("")
    report((text == "").to_numpy(), "radio is missing",
           "give the radio (e.g. LTE), or drop the row")
    report((text != "").to_numpy() & ~text.isin(_OPENCELLID_RADIOS).to_numpy(),
           f"radio is not one of {list(_OPENCELLID_RADIOS)}",
           "give the radio technology, or keep only known radios with the radio= filter")
    codes["radio"] = text.to_numpy(object)
    for col in ("samples", "range"):
        codes[col] = _optional_numbers(frame, col, report)
    codes["updated"] = _timestamps_s(frame, report)
    return codes, report.problems


def _optional_numbers(frame: pd.DataFrame, col: str, report: _Report) -> np.ndarray:
    """An optional column of numbers ≥ 0 (NaN where empty, or everywhere if absent)."""
    if col not in frame.columns:
        return np.full(len(frame), np.nan)
    values = frame[col]
    num = pd.to_numeric(values, errors="coerce").to_numpy(float)
    with np.errstate(invalid="ignore"):
        bad = (np.isnan(num) & values.notna().to_numpy()) | (num < 0) | np.isinf(num)
    report(bad, f"{col} is not a finite number ≥ 0", f"give numbers ≥ 0 in '{col}', or leave "
           "them empty")
    return np.where(bad, np.nan, num)


def _timestamps_s(frame: pd.DataFrame, report: _Report) -> np.ndarray:
    """The optional ``updated`` column as Unix seconds: numbers, or dates (ISO 8601)."""
    if "updated" not in frame.columns:
        return np.full(len(frame), np.nan)
    values = frame["updated"]
    seconds = np.array(pd.to_numeric(values, errors="coerce"), dtype=float)  # a writable copy
    text = np.isnan(seconds) & values.notna().to_numpy()
    if text.any():
        dates = pd.to_datetime(values[text].astype(str), errors="coerce", utc=True,
                               format="ISO8601")
        seconds[text] = ((dates - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)).to_numpy(
            float)
    report(text & np.isnan(seconds), "updated is neither a number (Unix seconds) nor a date",
           "give Unix seconds or ISO dates in 'updated', or leave them empty")
    report(np.isinf(seconds), "updated is infinite", "give Unix seconds in 'updated'")
    return np.where(np.isinf(seconds), np.nan, seconds)


def _dedup_key(codes: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What identifies the cell of each row (radio as its index in :data:`_OPENCELLID_RADIOS`),
    and its rank among the rows of the cell (samples, updated; -inf where missing), in
    compact dtypes (valid codes: see :func:`_opencellid_codes`)."""
    area_scoped = np.isin(codes["radio"], _AREA_SCOPED_RADIOS)
    return {
        "radio": pd.Categorical(codes["radio"], categories=_OPENCELLID_RADIOS).codes,
        "mcc": codes["mcc"].astype(np.int16), "net": codes["net"].astype(np.int16),
        "area": np.where(area_scoped, codes["area"], -1), "cell": codes["cell"],
        "samples": np.nan_to_num(codes["samples"], nan=-np.inf),
        "updated": np.nan_to_num(codes["updated"], nan=-np.inf),
    }


def _best_rows(key: dict[str, np.ndarray]) -> np.ndarray:
    """Mask of the rows to keep: per cell, the one with most samples (then latest, then
    first). `key`: :func:`_dedup_key` of the rows, in file order."""
    n = len(key["cell"])
    # Sorted by cell, then most samples, then latest; lexsort is stable, so among rows
    # that tie the first in the file comes first. Its last key sorts first.
    cell = [key[c] for c in ("cell", "area", "net", "mcc", "radio")]
    order = np.lexsort([-key["updated"], -key["samples"], *cell])
    first = np.zeros(n, bool)
    first[:1] = True
    for values in cell:
        ranked = values[order]
        first[1:] |= ranked[1:] != ranked[:-1]
    keep = np.zeros(n, bool)
    keep[order[first]] = True
    return keep


def _opencellid_cells(frame: pd.DataFrame, codes: dict[str, np.ndarray], xy_m: np.ndarray,
                      crs: pyproj.CRS, sites: SiteMerging, defaults: CellDefaults
                      ) -> gpd.GeoDataFrame:
    n = len(frame)
    lte = codes["radio"] == "LTE"
    enb = codes["cell"] // 256
    if sites.cluster_sites:
        group = pd.DataFrame({
            "mcc": codes["mcc"], "net": codes["net"],
            "enb": np.where(lte, enb, -1 - np.arange(n)),  # non-LTE rows: groups of one
        }).groupby(["mcc", "net", "enb"], sort=False).ngroup().to_numpy()
        site, site_xy = _merge_sites(xy_m, group, sites.merge_distance_m)
        xy = site_xy[site]
    else:
        site, xy = np.arange(n), xy_m
    cell_id = (pd.Series(codes["radio"], dtype=object) + "-" + _text(codes["mcc"]) + "-"
               + _text(codes["net"]) + "-" + _text(codes["area"]) + "-" + _text(codes["cell"]))
    cells = cells_frame(xy[:, 0], xy[:, 1], crs=crs, cell_id=cell_id.to_numpy(object),
                        site_id=site, **defaults.as_columns())
    cells["radio"] = codes["radio"]
    cells["mcc"], cells["mnc"] = codes["mcc"], codes["net"]
    cells["area"], cells["cell"] = codes["area"], codes["cell"]
    cells["enb_id"] = pd.arrays.IntegerArray(enb, ~lte)
    cells["range_m"] = codes["range"]
    cells["samples"] = (pd.to_numeric(frame["samples"], errors="coerce").to_numpy()
                        if "samples" in frame.columns else codes["samples"])
    cells["lon"] = pd.to_numeric(frame["lon"]).to_numpy(float)
    cells["lat"] = pd.to_numeric(frame["lat"]).to_numpy(float)
    for col in frame.columns:
        if col not in OPENCELLID_COLUMNS:  # the file's own columns ride along
            cells[col] = frame[col].array
    return cells


def _text(values: np.ndarray) -> pd.Series:
    return pd.Series(values).astype(str).astype(object)


def _merge_sites(xy_m: np.ndarray, group: np.ndarray,
                 merge_distance_m: float) -> tuple[np.ndarray, np.ndarray]:
    """Sites of cells: their groups, merged while two sites are closer than the distance.

    Parameters
    ----------
    xy_m : ndarray, shape (n, 2)
        Cell positions [m].
    group : ndarray of int, shape (n,)
        Initial group 0..g-1 of each cell (e.g. its eNB).
    merge_distance_m : float
        Sites closer than this [m] are merged (connected components of the graph of
        such pairs), repeatedly until no pair is left.

    Returns
    -------
    site : ndarray of int, shape (n,)
        Site of each cell, 0..n_sites-1 in order of first appearance.
    site_xy_m : ndarray, shape (n_sites, 2)
        Site positions [m]: the mean of their cells' positions.
    """
    label = np.asarray(group, np.int64)
    while True:
        n_sites = int(label.max()) + 1
        count = np.bincount(label, minlength=n_sites)
        pos = np.column_stack([np.bincount(label, weights=xy_m[:, k], minlength=n_sites)
                               for k in range(2)]) / count[:, None]
        if merge_distance_m <= 0 or n_sites < 2:
            break
        pairs = cKDTree(pos).query_pairs(r=merge_distance_m, output_type="ndarray")
        if len(pairs):  # query_pairs includes the radius; "closer than" excludes it
            gap = np.hypot(*(pos[pairs[:, 0]] - pos[pairs[:, 1]]).T)
            pairs = pairs[gap < merge_distance_m]
        if not len(pairs):
            break
        graph = sparse.coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])),
                                  shape=(n_sites, n_sites))
        label = csgraph.connected_components(graph, directed=False)[1][label]
    site, first = pd.factorize(label)
    return site.astype(np.int64), pos[np.asarray(first)]
