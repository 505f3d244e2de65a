"""Assertions shared by several test files, written with plain numpy / pandas.

Import as ``from checks import assert_feasible, raises`` (pytest puts ``tests/`` on
``sys.path``, as for ``gap_oracle`` and ``small_scenario``).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from cellopt import Network, Problem

FEAS = 1e-9  # relative slack allowed on every constraint


def assert_feasible(p: Problem, x: np.ndarray,
                    rtol: float = FEAS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Assert x ≥ 0, airtime ≤ 1, traffic ≤ cap, rate ≤ demand (each to a relative `rtol`);
    return rate, airtime and traffic, recomputed here (not with cellopt's own helpers)."""
    assert isinstance(x, np.ndarray) and x.shape == (p.n_links,)
    assert np.isfinite(x).all(), "x has NaN or inf"
    assert (x >= 0).all(), f"negative shares on links {np.flatnonzero(x < 0)[:10]}"
    flow = p.rate_mbps * x
    rate = np.bincount(p.user, flow, minlength=p.n_users)
    airtime = np.bincount(p.cell * p.n_resources + p.resource, x,
                          minlength=p.n_cells * p.n_resources).reshape(p.n_cells, p.n_resources)
    traffic = np.bincount(p.cell, flow, minlength=p.n_cells)
    assert airtime.max(initial=0.0) <= 1 + rtol, f"airtime {airtime.max()} > 1"
    capped = np.isfinite(p.backhaul_mbps)
    over = traffic[capped] > p.backhaul_mbps[capped] * (1 + rtol)
    assert not over.any(), f"backhaul exceeded on cells {np.flatnonzero(capped)[over]}"
    limited = np.isfinite(p.demand_mbps)
    over = rate[limited] > p.demand_mbps[limited] * (1 + rtol)
    assert not over.any(), f"demand exceeded for users {np.flatnonzero(limited)[over]}"
    return rate, airtime, traffic


def raises(exc: type[Exception], text: str):
    """pytest.raises for an exact piece of the message (no regex)."""
    return pytest.raises(exc, match=re.escape(text))


def assert_same_cells(net: Network, ref: Network) -> None:
    """Same cells, ids, sites and positions (projected and lon/lat, exactly) in the same CRS."""
    assert net.crs == ref.crs
    cols = ["cell_id", "site_id", "radio", "mcc", "mnc", "area", "cell", "enb_id", "lon", "lat"]
    pd.testing.assert_frame_equal(pd.DataFrame(net.cells[cols]), pd.DataFrame(ref.cells[cols]))
    # assert_frame_equal compares floats to rtol 1e-5: lon/lat and x/y must be exact
    np.testing.assert_array_equal(net.cells[["lon", "lat"]], ref.cells[["lon", "lat"]])
    np.testing.assert_array_equal(net.cells.geometry.x, ref.cells.geometry.x)
    np.testing.assert_array_equal(net.cells.geometry.y, ref.cells.geometry.y)


def failing_raster_open(error: BaseException) -> type:
    """A stand-in for ``rasterio.open`` that writes part of a GeoTIFF at the path it is
    given, then raises `error` on the first ``write``: a write that fails midway."""

    class FailingRaster:
        def __init__(self, path, mode="r", **profile):
            with open(path, "wb") as f:
                f.write(b"II*\x00 part of a GeoTIFF")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def write(self, *args, **kwargs):
            raise error

    return FailingRaster


def gdal_write_failed() -> BaseException:
    """What rasterio raises for a failed write: "Write failed", no errno, no file; GDAL's
    message about the scanline is chained to it."""
    from rasterio.errors import RasterioIOError

    try:
        try:
            raise RuntimeError("TIFFAppendToStrip:Write error at scanline 36")
        except RuntimeError as cause:
            raise RasterioIOError("Write failed. See previous exception for details.") from cause
    except RasterioIOError as err:
        return err
