"""Per-cell rasters from planning tools and ray tracers: metadata, and windowed bilinear samples.

Planners keep one prediction per cell, a path loss from Atoll or Planet or a path gain
from a ray tracer (a Sionna RT radio map), exchanged as one GeoTIFF per cell in a
projected CRS. :class:`RasterSet` opens such a set (metadata only:
:mod:`cellopt.radio.raster_files`) and
:meth:`RasterSet.sample` reads, per raster, only the window around the points asked for
and interpolates bilinearly between pixel centres.

Rules (see :meth:`RasterSet.sample` for the details):

- **Sources**: a folder of single-band GeoTIFFs named ``<cell_id>.tif`` (or ``.tiff``),
  or one multi-band GeoTIFF whose band descriptions are the cell ids (a single-band file
  without a description is the cell named by its file name).
- **CRS**: every raster needs a projected CRS (any linear unit; the pixel size is
  converted to metres). Geographic rasters are refused (their pixel size is in
  degrees); reproject them. Rasters may be in different CRSs: the points are transformed
  into each distinct one once (pyproj, ``always_xy``).
- **Grids**: north-up (or south-up) grids only; a rotated or sheared transform is
  refused (warp it to a north-up grid).
- **Values**: the band's scale and offset are applied; nodata (the band's nodata value
  or mask) and NaN are missing. No unit conversion: the values are returned in the
  raster's own unit and interpolated as they are (in dB).
"""

from __future__ import annotations

import functools
import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyproj

from cellopt.errors import ValidationError, describe_rows
from cellopt.radio.raster_files import (
    _FIX_SOURCE,
    _IDS_LISTED,
    RasterInfo,
    _few,
    _holds_only_nodata,
    _nodata_problem,
    _open,
    _plain_values,
    _read_file,
    _read_folder,
    _rio,
    _values,
)

if TYPE_CHECKING:
    from rasterio.windows import Window

__all__ = ["KINDS", "RSRP_RANGE_DBM", "RasterSet", "SampleReport"]

#: What a raster holds: path loss [dB] (positive), path gain [dB] (negative, e.g. a Sionna
#: RT radio map in dB) or RSRP [dBm].
KINDS: tuple[str, ...] = ("path_loss_db", "gain_db", "rsrp_dbm")
#: RSRP a receiver can report [dBm]: the median of an ``rsrp_dbm`` raster, and every
#: measured RSRP (:mod:`cellopt.radio.measured`), must lie in it (else a unit or column slip).
RSRP_RANGE_DBM: tuple[float, float] = (-160.0, -20.0)
#: Largest window one read may return [bytes, as float64]; the bands of a multi-band file
#: are read in groups that fit it (one group, one read, in the usual case).
READ_BUDGET_BYTES: int = 256 * 2**20
#: Pixels :meth:`RasterSet.check_values` reads per raster at most (a decimated read).
CHECK_PIXELS: int = 512 * 512


@dataclass(frozen=True)
class SampleReport:
    """Which points :meth:`RasterSet.sample` linked to which cell, in counts.

    Attributes
    ----------
    cell_ids : tuple of str
        The cells asked for, shape (n_cells,), in the caller's order.
    n_points : int
        Points sampled.
    n_inside : ndarray of int64, shape (n_cells,)
        Points inside each cell's raster extent (0 for a cell without a raster).
    n_linked : ndarray of int64, shape (n_cells,)
        Points with a value (inside, and the bilinear stencil has data).
    links_per_point : ndarray of int64, shape (n_points,)
        Cells each point has a value for.
    missing : tuple of str
        Cells asked for that have no raster (only with ``strict=False``).
    unused : tuple of str
        Cells with a raster that were not asked for (only with ``strict=False``).
    """

    cell_ids: tuple[str, ...]
    n_points: int
    n_inside: np.ndarray
    n_linked: np.ndarray
    links_per_point: np.ndarray
    missing: tuple[str, ...] = ()
    unused: tuple[str, ...] = ()

    @property
    def n_outside(self) -> np.ndarray:
        """Points outside each cell's raster, shape (n_cells,)."""
        return self.n_points - self.n_inside

    @property
    def n_nodata(self) -> np.ndarray:
        """Points inside each cell's raster whose stencil touches nodata, shape (n_cells,)."""
        return self.n_inside - self.n_linked

    @property
    def n_unlinked_points(self) -> int:
        """Points that have a value for no cell at all."""
        return int(np.count_nonzero(self.links_per_point == 0))

    def to_frame(self) -> pd.DataFrame:
        """Per cell: ``cell_id``, ``inside``, ``outside``, ``nodata``, ``linked`` (points)."""
        return pd.DataFrame({"cell_id": list(self.cell_ids), "inside": self.n_inside,
                             "outside": self.n_outside, "nodata": self.n_nodata,
                             "linked": self.n_linked})

    def summary(self) -> str:
        """A few sentences: points without any link, and the cells the points miss most."""
        n_cells = len(self.cell_ids)
        unlinked = int(np.count_nonzero(self.n_linked < self.n_points))
        lines = [f"{self.n_points} points, {n_cells} cells: {int(self.n_linked.sum())} links; "
                 f"{self.n_unlinked_points} points have no link with any cell; {unlinked} cells miss "
                 f"some points ({int(self.n_outside.sum())} point-cell pairs outside the raster, "
                 f"{int(self.n_nodata.sum())} on nodata)"]
        if self.missing:
            lines.append(f"{_few(self.missing)} cells have no raster (no links)")
        if self.unused:
            lines.append(f"{_few(self.unused)} rasters are for cells not asked for (not read)")
        return "\n".join(lines)


class RasterSet:
    """Per-cell rasters: a folder of GeoTIFFs named <cell_id>.tif (also .tiff), or one multi-band
    GeoTIFF whose band descriptions are the cell ids.

    Opening reads metadata only (no pixels): per raster its path, band, CRS, transform,
    nodata, shape and resolution (:attr:`rasters`).

    Parameters
    ----------
    source : str or os.PathLike
        A folder holding one single-band GeoTIFF per cell, named ``<cell_id>.tif`` or
        ``<cell_id>.tiff`` (any case; other files are ignored), or one GeoTIFF: with
        several bands, each band's description is its cell id; with one band, the
        description if set, else the file name without its suffix.
    kind : {'path_loss_db', 'gain_db', 'rsrp_dbm'}
        What the values are (see :data:`KINDS`); used to check them, never to convert them.

    Attributes
    ----------
    cell_ids : tuple of str
        The cells the rasters are for, sorted.
    rasters : Mapping[str, RasterInfo]
        Each cell's raster metadata, in the order of `cell_ids`.
    min_resolution_m : float
        The finest pixel size (width or height) over the rasters [m].
    kind : str
    source : pathlib.Path

    Raises
    ------
    ValidationError
        Unknown `kind`; `source` missing; a folder without ``.tif``/``.tiff`` files, with
        a multi-band file, or with two files for one cell; a file rasterio cannot open;
        a raster without georeferencing or CRS, in a geographic CRS, or with a rotated or
        sheared transform; a multi-band file whose bands lack descriptions or repeat one.
        Every problem found is listed, each naming the file (and band) and the fix.
    """

    def __init__(self, source: str | os.PathLike, kind: str = "path_loss_db"):
        if kind not in KINDS:
            raise ValidationError(f"kind={kind!r} is not one of {list(KINDS)}; fix: say what the rasters "
                                  "hold: 'path_loss_db' (positive dB), 'gain_db' (negative dB, e.g. a "
                                  "ray tracer's path gain) or 'rsrp_dbm'")
        self.kind = kind
        self.source = Path(source)
        if not self.source.exists():
            raise ValidationError(f"raster source {self.source} does not exist; fix: {_FIX_SOURCE}")
        infos = _read_folder(self.source) if self.source.is_dir() else _read_file(self.source)
        order = sorted(infos)
        self.rasters: Mapping[str, RasterInfo] = {c: infos[c] for c in order}
        self.cell_ids: tuple[str, ...] = tuple(order)
        self.min_resolution_m: float = min(min(r.resolution_m) for r in self.rasters.values())

    def __len__(self) -> int:
        return len(self.cell_ids)

    def __repr__(self) -> str:
        return (f"RasterSet({str(self.source)!r}, kind={self.kind!r}: {len(self)} cells, finest pixel "
                f"{self.min_resolution_m:g} m)")

    # ------------------------------------------------------------------ extents
    def bounds(self, crs: Any, cell_ids: Sequence[str] | None = None) -> tuple[float, float, float, float]:
        """Union of the rasters' extents, in `crs`.

        Parameters
        ----------
        crs : pyproj.CRS or anything ``pyproj.CRS.from_user_input`` takes
            The CRS of the result (projected or geographic).
        cell_ids : sequence of str, optional
            Only these cells' rasters (unknown ids are ignored); default all.

        Returns
        -------
        (float, float, float, float)
            ``(x_min, y_min, x_max, y_max)`` in `crs` (each raster's extent transformed
            with its edges densified, so curved edges are enclosed).
        """
        target = _as_crs(crs, "crs")
        wanted = self.cell_ids if cell_ids is None else [c for c in map(str, cell_ids) if c in self.rasters]
        if not wanted:
            raise ValidationError(f"{self.source}: no raster for the cells asked for; fix: pass cell ids "
                                  f"of the set, e.g. {list(self.cell_ids[:3])}")
        boxes = []
        for cell in wanted:
            info = self.rasters[cell]
            if info.crs == target:
                boxes.append(info.bounds)
            else:
                boxes.append(_transformer(info.crs.to_wkt(), target.to_wkt()).transform_bounds(
                    *info.bounds, densify_pts=21))
        b = np.asarray(boxes, dtype=float)
        return float(b[:, 0].min()), float(b[:, 1].min()), float(b[:, 2].max()), float(b[:, 3].max())

    # ------------------------------------------------------------------ sampling
    def sample(self, cell_ids: Sequence[str], x_m: np.ndarray, y_m: np.ndarray, crs: Any, *,
               strict: bool = True, check: bool = True, return_report: bool = False
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | \
            tuple[np.ndarray, np.ndarray, np.ndarray, SampleReport]:
        """Bilinear samples of each cell's raster at the points (x_m, y_m) given in `crs`.

        Parameters
        ----------
        cell_ids : sequence of str
            The cells, shape (n_cells,), no duplicates; compared as text with the ids of
            the set. Row positions in the result refer to this order.
        x_m, y_m : array_like of float, shape (n_points,)
            Point coordinates in `crs`, finite (metres in a projected CRS; longitude and
            latitude in degrees in a geographic one).
        crs : pyproj.CRS or anything ``pyproj.CRS.from_user_input`` takes
            CRS of the points. They are transformed once into each distinct raster CRS.
        strict : bool
            True (default): cells of `cell_ids` without a raster, and rasters for no cell
            of `cell_ids`, are refused. False: such cells get no links and such rasters
            are not read (both are listed in the report).
        check : bool
            Check the values read against :attr:`kind` (default True): per cell, the
            median of its samples must be > 0 for ``path_loss_db``, < 0 for ``gain_db``
            and within :data:`RSRP_RANGE_DBM` for ``rsrp_dbm``; a raster whose window
            holds only nodata is scanned, and refused if it holds nothing else.
        return_report : bool
            Also return a :class:`SampleReport` (counts of points outside and on nodata
            per cell, links per point).

        Returns
        -------
        cell : ndarray of int64, shape (n_links,)
            Row positions into `cell_ids`.
        point : ndarray of int64, shape (n_links,)
            Row positions into the points.
        value : ndarray of float64, shape (n_links,)
            The interpolated values, in the raster's unit (no conversion).
        report : SampleReport
            Only with ``return_report=True``.

        Raises
        ------
        ValidationError
            Duplicate cell ids; cells without a raster or unused rasters (``strict``);
            points of unequal shapes or not finite; a CRS pyproj does not know; values
            that do not fit `kind`, or a raster that holds only nodata (``check``).

        Notes
        -----
        Pairs: sorted by (cell, point). A pair is absent (no link) when the point lies
        outside the cell's raster or its stencil touches nodata.

        Interpolation: the value at a pixel centre is the pixel's value; between the
        centres of four pixels it is bilinear in the values as given (in dB). A point
        is inside a raster when it lies on its extent, edges included. Within half a
        pixel of the edge (outside the hull of the pixel centres) the coordinate is
        clamped to the outermost centres: the value is interpolated along the edge,
        constant across it. Nodata: a pixel that is nodata, masked or NaN makes the pair
        absent if its bilinear weight is not zero, so a point at the centre of a valid
        pixel next to nodata keeps that pixel's value; no renormalisation over the valid
        neighbours.

        Reads: for each raster file, the points are located with one vectorized pass
        (a search over the points sorted by x in that CRS, then the affine transform),
        and only the window (rasterio ``Window``) spanning the stencils of the points
        inside is read; for a multi-band file, one read for all bands asked for (split
        into groups only past :data:`READ_BUDGET_BYTES`). The loop runs over files and
        bands, never over points.
        """
        wanted = [str(c) for c in cell_ids]
        missing, unused = self._match(wanted, strict)
        x, y = _points(x_m, y_m)
        source_crs = _as_crs(crs, "crs")
        n = len(x)
        n_inside = np.zeros(len(wanted), np.int64)
        n_linked = np.zeros(len(wanted), np.int64)
        chunks: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        problems = []
        located: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
        for path, group in _by_file(self.rasters, wanted):
            first = group[0][1]
            key = first.crs.to_wkt()
            if key not in located:
                located[key] = _located(x, y, source_crs, first.crs)
            idx, stencil = _stencil(first, *located[key])
            for pos, _info in group:
                n_inside[pos] = len(idx)
            if stencil is None:
                continue
            for pos, info, ok, val, window_empty in _read_stencils(path, group, stencil):
                n_linked[pos] = int(np.count_nonzero(ok))
                chunks[pos] = (idx[ok], val[ok])
                if check:
                    problem = (_nodata_problem(info) if window_empty and _holds_only_nodata(info)
                               else _kind_problem(self.kind, val[ok], info))
                    if problem:
                        problems.append(problem)
        if problems:
            raise ValidationError(problems)
        # chunks in cell order, each one's points ascending: sorted by (cell, point)
        order = sorted(chunks)
        cell = np.repeat(np.asarray(order, np.int64), [len(chunks[p][0]) for p in order])
        point = np.concatenate([chunks[p][0] for p in order] or [np.zeros(0, np.int64)]).astype(np.int64)
        value = np.concatenate([chunks[p][1] for p in order] or [np.zeros(0, np.float64)])
        if not return_report:
            return cell, point, value
        report = SampleReport(tuple(wanted), n, n_inside, n_linked,
                              np.bincount(point, minlength=n).astype(np.int64), missing, unused)
        return cell, point, value, report

    def check_values(self, cell_ids: Sequence[str] | None = None, *,
                     max_pixels: int = CHECK_PIXELS) -> pd.DataFrame:
        """Check every raster's values against :attr:`kind` from a decimated read.

        Each raster is read at most `max_pixels` at a time (GDAL's nearest-neighbour
        decimation, which uses the file's overviews when it has any): a raster showing
        only nodata is scanned block by block and refused if it holds nothing else; the
        median of its valid values must be > 0 for ``path_loss_db``, < 0 for ``gain_db``
        and within :data:`RSRP_RANGE_DBM` for ``rsrp_dbm``.

        Parameters
        ----------
        cell_ids : sequence of str, optional
            Only these cells (unknown ids are ignored); default all.
        max_pixels : int
            Pixels read per raster at most.

        Returns
        -------
        pandas.DataFrame
            One row per raster: ``cell_id``, ``path``, ``band``, ``valid_fraction`` (of
            the decimated pixels), ``min``, ``median``, ``max`` (in the raster's unit).

        Raises
        ------
        ValidationError
            Listing every raster that holds only nodata or whose values do not fit
            `kind`, naming its file and band and the fix.
        """
        wanted = self.cell_ids if cell_ids is None else [c for c in map(str, cell_ids) if c in self.rasters]
        rows, problems = [], []
        for path, group in _by_file(self.rasters, wanted):
            rows_n, cols_n = group[0][1].shape
            step = max(1, math.ceil(math.sqrt(rows_n * cols_n / max(int(max_pixels), 1))))
            out = (max(1, rows_n // step), max(1, cols_n // step))
            for batch in _batches(group, out[0] * out[1]):
                with _open(path) as src:
                    data = src.read([info.band for _, info in batch], out_shape=(len(batch), *out),
                                    masked=True)
                for k, (_, info) in enumerate(batch):
                    val = _values(data[k], info)
                    ok = val[np.isfinite(val)]
                    row = {"cell_id": info.cell_id, "path": str(info.path), "band": info.band,
                           "valid_fraction": ok.size / val.size, "min": np.nan, "median": np.nan,
                           "max": np.nan}
                    if ok.size:
                        row.update(min=float(ok.min()), median=float(np.median(ok)), max=float(ok.max()))
                        problem = _kind_problem(self.kind, ok, info)
                    else:
                        problem = _nodata_problem(info) if _holds_only_nodata(info) else None
                    if problem:
                        problems.append(problem)
                    rows.append(row)
        if problems:
            raise ValidationError(problems)
        return pd.DataFrame(rows, columns=["cell_id", "path", "band", "valid_fraction", "min", "median",
                                           "max"])

    def _match(self, wanted: list[str], strict: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Cells asked for without a raster, and rasters not asked for; refused if `strict`."""
        seen, duplicates = set(), []
        for pos, cell in enumerate(wanted):
            if cell in seen:
                duplicates.append(pos)
            seen.add(cell)
        if duplicates:
            raise ValidationError(f"cell_ids: {describe_rows(duplicates, [wanted[p] for p in duplicates])} "
                                  "repeat an earlier id; fix: pass each cell once")
        missing = [p for p, c in enumerate(wanted) if c not in self.rasters]
        unused = tuple(c for c in self.cell_ids if c not in seen)
        missing_ids = tuple(wanted[p] for p in missing)
        if strict and (missing or unused):
            problems = []
            if missing:
                problems.append(
                    f"cell_ids: {describe_rows(missing, missing_ids, limit=_IDS_LISTED)} ({len(missing)} "
                    f"cells) have no raster in {self.source}{_near_misses(missing_ids, unused)}; fix: add "
                    "their rasters (<cell_id>.tif, or bands described by the cell id), or pass "
                    "strict=False to leave them without links")
            if unused:
                problems.append(
                    f"{self.source}: {len(unused)} rasters are for no cell of cell_ids: {_few(unused)}; "
                    "fix: name each raster by the cell id of the network (e.g. '{site}-{sector}' from "
                    "read_cells), or pass strict=False to ignore them")
            raise ValidationError(problems)
        return missing_ids, unused


# ---------------------------------------------------------------------- sampling
def _points(x_m: Any, y_m: Any) -> tuple[np.ndarray, np.ndarray]:
    """The points as 1-D float64 arrays, checked."""
    x = np.asarray(x_m, dtype=np.float64)
    y = np.asarray(y_m, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValidationError(f"x_m and y_m have shapes {x.shape} and {y.shape}; fix: pass two 1-D arrays "
                              "of one length (one entry per point)")
    bad = np.flatnonzero(~(np.isfinite(x) & np.isfinite(y)))
    if bad.size:
        raise ValidationError(f"points: {describe_rows(bad[:10], total=bad.size)} have non-finite "
                              "coordinates; fix: drop or repair those points")
    return x, y


def _as_crs(crs: Any, name: str) -> pyproj.CRS:
    try:
        return pyproj.CRS.from_user_input(crs)
    except pyproj.exceptions.CRSError as err:
        raise ValidationError(f"{name}={crs!r} is not a CRS pyproj knows ({err}); fix: pass e.g. "
                              "'EPSG:32632' or a pyproj.CRS") from None


@functools.lru_cache(maxsize=64)
def _transformer(source_wkt: str, target_wkt: str) -> pyproj.Transformer:
    """A cached (x, y)-ordered transformer between two CRSs given as WKT."""
    return pyproj.Transformer.from_crs(pyproj.CRS.from_wkt(source_wkt), pyproj.CRS.from_wkt(target_wkt),
                                       always_xy=True)


def _located(x: np.ndarray, y: np.ndarray, source: pyproj.CRS, target: pyproj.CRS
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The points in `target`: x, y, the order sorting x, and x sorted (for range searches)."""
    if source != target:
        x, y = _transformer(source.to_wkt(), target.to_wkt()).transform(x, y)
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    order = np.argsort(x, kind="stable")
    return x, y, order, x[order]


@dataclass(frozen=True)
class _Stencil:
    """Bilinear stencils of the points inside one grid, in the window that spans them."""

    window: Window
    i0: np.ndarray   # columns of the left pixels, in the window
    i1: np.ndarray
    j0: np.ndarray   # rows of the upper pixels (as stored), in the window
    j1: np.ndarray
    fu: np.ndarray   # weight of column i1, in [0, 1]
    fv: np.ndarray   # weight of row j1, in [0, 1]


def _stencil(info: RasterInfo, x: np.ndarray, y: np.ndarray, order: np.ndarray, xs: np.ndarray
             ) -> tuple[np.ndarray, _Stencil | None]:
    """Indices of the points inside `info`'s extent and their stencils (vectorized)."""
    left, bottom, right, top = info.bounds
    pad = 1e-9 * max(abs(right - left), abs(top - bottom), 1.0)
    lo, hi = np.searchsorted(xs, left - pad, "left"), np.searchsorted(xs, right + pad, "right")
    idx = order[lo:hi]
    idx = idx[(y[idx] >= bottom - pad) & (y[idx] <= top + pad)]
    keep = np.zeros(len(x), bool)  # ascending point order without a sort
    keep[idx] = True
    idx = np.flatnonzero(keep)
    t = info.transform
    rows, cols = info.shape
    col = (x[idx] - t.c) / t.a
    row = (y[idx] - t.f) / t.e
    inside = (col >= 0.0) & (col <= cols) & (row >= 0.0) & (row <= rows)
    idx, col, row = idx[inside], col[inside], row[inside]
    if not len(idx):
        return idx, None
    u = np.clip(col - 0.5, 0.0, cols - 1.0)  # pixel-centre coordinates, clamped half a pixel in
    v = np.clip(row - 0.5, 0.0, rows - 1.0)
    i0 = np.minimum(np.floor(u).astype(np.int64), max(cols - 2, 0))
    j0 = np.minimum(np.floor(v).astype(np.int64), max(rows - 2, 0))
    fu, fv = u - i0, v - j0
    i1, j1 = np.minimum(i0 + 1, cols - 1), np.minimum(j0 + 1, rows - 1)
    c0, r0 = int(i0.min()), int(j0.min())
    window = _rio().windows.Window(c0, r0, int(i1.max()) - c0 + 1, int(j1.max()) - r0 + 1)
    return idx, _Stencil(window, i0 - c0, i1 - c0, j0 - r0, j1 - r0, fu, fv)


def _by_file(rasters: Mapping[str, RasterInfo], wanted: Sequence[str]
             ) -> Iterator[tuple[Path, list[tuple[int, RasterInfo]]]]:
    """The rasters of the cells asked for, grouped by file: (path, [(position, info)])."""
    groups: dict[Path, list[tuple[int, RasterInfo]]] = {}
    for pos, cell in enumerate(wanted):
        info = rasters.get(cell)
        if info is not None:
            groups.setdefault(info.path, []).append((pos, info))
    yield from groups.items()


def _batches(group: list[tuple[int, RasterInfo]], pixels: int) -> Iterator[list[tuple[int, RasterInfo]]]:
    """The bands of one file in groups whose float64 reads fit :data:`READ_BUDGET_BYTES`."""
    size = max(1, READ_BUDGET_BYTES // max(8 * pixels, 1))
    for start in range(0, len(group), size):
        yield group[start:start + size]


def _read_stencils(path: Path, group: list[tuple[int, RasterInfo]], stencil: _Stencil
                   ) -> Iterator[tuple[int, RasterInfo, np.ndarray, np.ndarray, bool]]:
    """Per band: (position, info, has-a-value mask, values, window holds only nodata)."""
    win = stencil.window
    s = stencil
    width = int(win.width)
    weights = ((1 - s.fu) * (1 - s.fv), s.fu * (1 - s.fv), (1 - s.fu) * s.fv, s.fu * s.fv)
    flat = (s.j0 * width + s.i0, s.j0 * width + s.i1, s.j1 * width + s.i0, s.j1 * width + s.i1)
    with _open(path) as src:
        # nodata values only (no mask band, no alpha): the four stencil pixels are taken
        # from the raw window and only they are converted and checked, not the window
        flag = _rio().enums.MaskFlags
        plain = all(flags == [flag.nodata] or flags == [flag.all_valid]
                    for flags in src.mask_flag_enums)
        for batch in _batches(group, int(win.width * win.height)):
            data = src.read([info.band for _, info in batch], window=win, masked=not plain)
            for k, (pos, info) in enumerate(batch):
                if plain:
                    raw = data[k].ravel()
                    pixels = [_plain_values(raw.take(lin), info) for lin in flat]
                else:
                    band = _values(data[k], info).ravel()
                    pixels = [band.take(lin) for lin in flat]
                value = np.zeros(len(s.fu))
                ok = np.ones(len(s.fu), bool)
                for w, pixel in zip(weights, pixels, strict=True):
                    good = ~np.isnan(pixel)
                    if not good.all():
                        ok &= good | (w == 0.0)
                        pixel = np.where(good, pixel, 0.0)
                    value += w * pixel
                empty = False
                if not ok.any():  # no stencil has data: does the window hold any?
                    window = (_plain_values(data[k].ravel(), info) if plain
                              else _values(data[k], info))
                    empty = bool(np.isnan(window).all())
                yield pos, info, ok, value, empty


#: Values whose median :func:`_kind_problem` checks at most (every k-th value beyond).
KIND_CHECK_VALUES = 10_000


def _kind_problem(kind: str, values: np.ndarray, info: RasterInfo) -> str | None:
    """Why the values do not fit `kind` (the median of at most :data:`KIND_CHECK_VALUES`
    of them, at a fixed stride), or None."""
    if not values.size:
        return None
    median = float(np.median(values[::max(1, values.size // KIND_CHECK_VALUES)]))
    where = f"{info.label}: median value {median:.1f}"
    if kind == "path_loss_db" and not median > 0:
        return (f"{where} dB is not a positive path loss: these look like gains (or RSRP) given as losses; "
                "fix: kind='gain_db' for path gains (e.g. a ray tracer's radio map in dB) or "
                "kind='rsrp_dbm' for received power")
    if kind == "gain_db" and not median < 0:
        return (f"{where} dB is not a negative path gain: these look like path losses given as gains; fix: "
                "kind='path_loss_db'")
    low, high = RSRP_RANGE_DBM
    if kind == "rsrp_dbm" and not low <= median <= high:
        guess = ("these look like path losses; fix: kind='path_loss_db'" if median > 0 else
                 "fix: check the unit (RSRP is the power of one resource element, in dBm) or the kind")
        return f"{where} dBm is outside the RSRP range [{low:g}, {high:g}] dBm; {guess}"
    return None


# ---------------------------------------------------------------------- messages
def _fold(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def _near_misses(missing: Sequence[str], unused: Sequence[str]) -> str:
    """A hint when missing ids and unused rasters differ only in case or punctuation."""
    folded = {_fold(u): u for u in unused}
    pairs = [(m, folded[_fold(m)]) for m in missing if _fold(m) in folded]
    if not pairs:
        return ""
    shown = ", ".join(f"{m!r} vs raster {u!r}" for m, u in pairs[:3])
    return f" (ids that differ only in case or punctuation: {shown})"
