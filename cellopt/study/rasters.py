"""GeoTIFF files of coverage maps (:mod:`cellopt.coverage`): one single-band file per raster.

:func:`write_geotiff` writes one raster of a :class:`~cellopt.coverage.CoverageMap` with
rasterio: the map's CRS (as WKT), its north-up affine transform, the quantity's nodata
value (−1 for ``best_server``, NaN for the float rasters), DEFLATE compression with a
predictor, 256 × 256 tiles where the raster is larger than one, and tags that say what
the values are (unit, meaning, the resolution asked and used, the method). The values of
``best_server`` are rows of the network's cells table; its ``CELL_IDS`` tag lists the
``cell_id`` of every row, so the file is read without the run's other outputs.
:data:`COVERAGE_FILES` names the files of a run folder; docs/coverage.md shows how to
read them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import rasterio
from rasterio.crs import CRS
from rasterio.transform import Affine

from cellopt._version import __version__
from cellopt.checks import shown
from cellopt.coverage import COVERAGE_QUANTITIES, CoverageMap
from cellopt.errors import ValidationError
from cellopt.study.atomic import atomic_path

__all__ = ["BLOCK_SIZE", "CONVENTION", "COVERAGE_FILES", "write_geotiff", "write_geotiff_to"]

#: The file of each raster in a run folder.
COVERAGE_FILES: dict[str, str] = {
    "best_server": "coverage_best_server.tif",
    "rsrp_dbm": "coverage_rsrp_dbm.tif",
    "sinr_db": "coverage_sinr_db.tif",
    "rate_mbps": "coverage_rate_mbps.tif",
}
#: Side of the square tiles [pixels] of rasters larger than one tile.
BLOCK_SIZE = 256
#: The map's conventions, written as the ``CONVENTION`` tag of every file.
CONVENTION = ("median map: outdoor users at pixel centres, no shadowing, 3GPP LOS state "
              "averaged (cellopt.coverage.median_model); every cell at its full tx_power_dbm; "
              "interference from every cell at full power")


def _json_value(value: Any) -> Any:
    """A cell id as JSON takes it (numpy scalars as Python ones, anything else as text)."""
    value = value.item() if isinstance(value, np.generic) else value
    return value if isinstance(value, (int, float, str, bool)) or value is None else str(value)


def write_geotiff(path: str | os.PathLike[str], coverage: CoverageMap, quantity: str) -> None:
    """Write one raster of a coverage map as a single-band GeoTIFF at `path`, atomically.

    Parameters
    ----------
    path : str or path-like
        The file to write (its suffix does not matter: the driver is GTiff), in a folder
        that exists. It is written atomically (:func:`~cellopt.study.atomic.atomic_path`):
        an existing file is replaced only by the whole new one, and a failed write leaves
        it as it was, with no part of the new one.
    coverage : CoverageMap
        From :func:`cellopt.coverage.coverage_map`.
    quantity : str
        One of :data:`cellopt.coverage.COVERAGE_QUANTITIES`: ``"best_server"``
        (int32, nodata −1), ``"rsrp_dbm"``, ``"sinr_db"``, ``"rate_mbps"`` (float32,
        nodata NaN).

    Notes
    -----
    Dataset tags: ``QUANTITY``, ``UNIT``, ``MEANING``, ``RESOLUTION_M`` (used),
    ``REQUESTED_RESOLUTION_M``, ``COARSENED`` ("yes" when the pixel budget made the
    grid coarser than asked), ``METHOD`` (the solution's label, "" without one),
    ``CONVENTION`` (:data:`CONVENTION`), ``SOFTWARE``; for ``best_server`` also
    ``CELL_IDS``, a JSON array of the ``cell_id`` of each cells-table row (value v is
    cell ``CELL_IDS[v]``). The band's description is the quantity and its unit the
    quantity's unit.

    Raises
    ------
    ValidationError
        A `path` that names no file (``""``, ``"."``), an unknown quantity,
        ``"rate_mbps"`` of a map without a rate raster, a raster
        with no pixel of data (every pixel nodata), or something other than a
        CoverageMap.
    OSError
        If the file cannot be written, naming `path` and the cause (a full disk is
        ``ENOSPC``; an error of GDAL is a :class:`~cellopt.study.atomic.WriteError`).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ValidationError(f"path={shown(path)} is a {type(path).__name__}; fix: give a file "
                              "path (str or pathlib.Path)")
    if Path(os.fspath(path)).name in ("", ".", ".."):
        raise ValidationError(f"path={shown(os.fspath(path))} names no file; fix: give a file path, "
                              f"e.g. {COVERAGE_FILES.get(quantity, 'coverage.tif')!r}")
    with atomic_path(path, keep_suffix=True) as tmp:
        write_geotiff_to(tmp, coverage, quantity, target=path)


def write_geotiff_to(path: str | os.PathLike[str], coverage: CoverageMap, quantity: str, *,
                     target: str | os.PathLike[str] | None = None) -> None:
    """:func:`write_geotiff` to exactly `path`, not atomically: for a temporary path of the
    atomic writer (:meth:`cellopt.study.atomic.AtomicFiles.path`), which the caller moves.

    Parameters
    ----------
    path : str or path-like
        The (temporary) file written.
    coverage, quantity
        As for :func:`write_geotiff`.
    target : str or path-like, optional
        The file `path` stands for, named in the messages (default `path`).
    """
    if not isinstance(coverage, CoverageMap):
        raise ValidationError(f"coverage is a {type(coverage).__name__}; fix: give the "
                              "CoverageMap of cellopt.coverage.coverage_map")
    values = coverage.quantity(quantity)  # checks the name and that the raster exists
    info = COVERAGE_QUANTITIES[quantity]
    valid = values != info.nodata if np.isfinite(info.nodata) else np.isfinite(values)
    if not valid.any():
        rows, cols = values.shape
        where = os.fspath(path if target is None else target)
        raise ValidationError(f"{where}: the {quantity} raster ({cols} × {rows} pixels of "
                              f"{coverage.resolution_m:g} m) holds no data, every pixel nodata, so "
                              "the file would hold nothing; fix: map the area at a finer "
                              "resolution_m, or check that the cells reach it (coverage_map)")
    n_rows, n_cols = values.shape
    xmin, _, _, ymax = coverage.bounds_m
    profile: dict[str, Any] = {
        "driver": "GTiff", "width": n_cols, "height": n_rows, "count": 1, "dtype": info.dtype,
        "crs": CRS.from_wkt(coverage.crs.to_wkt()),
        # north-up (Affine directly: rasterio's from_origin multiplies Affines with `*`,
        # which affine ≥ 3.1 deprecates)
        "transform": Affine(coverage.resolution_m, 0.0, xmin, 0.0, -coverage.resolution_m, ymax),
        "nodata": info.nodata, "compress": "deflate",
        "predictor": 2 if info.dtype.startswith("int") else 3,
    }
    if n_rows > BLOCK_SIZE or n_cols > BLOCK_SIZE:
        profile.update(tiled=True, blockxsize=BLOCK_SIZE, blockysize=BLOCK_SIZE)
    tags = {
        "QUANTITY": quantity, "UNIT": info.unit, "MEANING": info.meaning,
        "RESOLUTION_M": f"{coverage.resolution_m:g}",
        "REQUESTED_RESOLUTION_M": f"{coverage.requested_resolution_m:g}",
        "COARSENED": "yes" if coverage.coarsened else "no",
        "METHOD": coverage.method or "", "CONVENTION": CONVENTION,
        "SOFTWARE": f"cellopt {__version__}",
    }
    if quantity == "best_server":
        tags["CELL_IDS"] = json.dumps([_json_value(v) for v in coverage.cell_ids])
    with rasterio.open(os.fspath(path), "w", **profile) as dst:
        dst.write(values.astype(info.dtype, copy=False), 1)
        dst.set_band_description(1, quantity)
        dst.set_band_unit(1, info.unit)
        dst.update_tags(**tags)
