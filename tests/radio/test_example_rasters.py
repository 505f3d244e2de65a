"""The shipped planner-raster example: its cell file, its generator, and its rasters against the model.

The generator writes per-cell path-loss GeoTIFFs from a model whose exact value
``model_loss_db`` gives anywhere; RasterSet's bilinear samples of them must match it,
except next to the model's discontinuities (walls and shadow edges of the buildings, the
cell sites), where bilinear interpolation of a step errs by up to the step.
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest
import rasterio
from helpers import ROOT

from cellopt.radio.raster_io import RasterSet
from cellopt.topology import read_cells

EXAMPLE = ROOT / "examples" / "planner_rasters"


def _load_generator():
    spec = importlib.util.spec_from_file_location("make_rasters", EXAMPLE / "make_rasters.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


mr = _load_generator()


@pytest.fixture(scope="module")
def cells():
    return mr.read_planner_cells(check_land=False)


def test_the_cell_file_reads_as_four_macro_sites_and_four_small_cells(cells):
    net = read_cells(EXAMPLE / "cells.csv", progress=False, check_land=False)
    assert len(net.cells) == 16 and net.cells["site_id"].nunique() == 8
    assert net.cells["tier"].value_counts().to_dict() == {"macro": 12, "pico": 4}
    assert net.cells["azimuth_deg"].isna().sum() == 4
    assert net.cells.crs.to_epsg() == 32632
    # no cell inside a building: every building crossing is a wall between a cell and a point
    b = mr.buildings_m(cells)
    x, y = cells.geometry.x.to_numpy()[:, None], cells.geometry.y.to_numpy()[:, None]
    assert not np.any((x >= b[:, 0]) & (x <= b[:, 2]) & (y >= b[:, 1]) & (y <= b[:, 3]))


def test_crossings_by_the_slab_test():
    box = np.array([[10.0, 10.0, 20.0, 20.0], [30.0, 0.0, 40.0, 40.0]])
    x = np.array([50.0, 15.0, 25.0, 15.0, 10.0, 5.0, 0.0, 35.0])
    y = np.array([15.0, 15.0, 0.0, 0.0, 30.0, 0.0, 30.0, 20.0])
    # through both; ends inside the first; misses; misses; along the first's left wall; misses;
    # vertical, misses; ends inside the second (after crossing the first)
    assert mr.crossings(0.0, 15.0, x, y, box).tolist() == [2, 1, 0, 0, 0, 0, 0, 2]
    assert mr.crossings(15.0, 0.0, np.array([15.0, 15.0]), np.array([30.0, 5.0]), box).tolist() == [1, 0]


def test_the_command_line_writes_one_small_float32_raster_per_cell(tmp_path, capsys):
    assert mr.main(["--out", str(tmp_path), "--resolution-m", "50", "--no-land-check"]) == 0
    assert "wrote 16 path-loss rasters" in capsys.readouterr().out
    files = sorted(tmp_path.glob("*.tif"))
    assert len(files) == 16 and sum(f.stat().st_size for f in files) < 200_000
    with rasterio.open(tmp_path / "SC-01.tif") as src:
        assert src.dtypes == ("float32",) and src.nodata == mr.NODATA and src.crs.to_epsg() == 32632
        assert src.descriptions == ("SC-01",) and src.res == (50.0, 50.0)
        data = src.read(1, masked=True)
    assert 0 < data.mask.mean() < 0.5 and 40.0 < data.min() and data.max() < 200.0  # nodata beyond 500 m
    rs = RasterSet(tmp_path)
    assert rs.cell_ids == tuple(sorted(f.stem for f in files)) and rs.min_resolution_m == 50.0


@pytest.mark.parametrize(("resolution_m", "p95_db"), [(10.0, 0.1), (25.0, 6.0)])
def test_bilinear_samples_match_the_model(cells, tmp_path, resolution_m, p95_db):
    mr.write_rasters(cells, tmp_path, resolution_m=resolution_m)
    rs = RasterSet(tmp_path)
    transform, rows, cols = mr.grid(cells, resolution_m)
    rng = np.random.default_rng(7)
    n = 4000
    x = transform.c + rng.uniform(0.0, cols * resolution_m, n)
    y = transform.f - rng.uniform(0.0, rows * resolution_m, n)
    ids = cells["cell_id"].tolist()
    cell, point, value = rs.sample(ids, x, y, cells.crs)
    exact = mr.model_loss_db(cells, x, y)
    cx, cy = cells.geometry.x.to_numpy(), cells.geometry.y.to_numpy()
    distance = np.hypot(x[:, None] - cx, y[:, None] - cy)
    # links: where the model is defined, up to the pixels cut by the calculation circle
    has = np.zeros(exact.shape, bool)
    has[point, cell] = True
    radius = mr.calculation_radius_m(cells)
    rim = np.abs(distance - radius) <= 1.5 * resolution_m
    assert not np.any((has != np.isfinite(exact)) & ~rim)
    both = np.isfinite(exact[point, cell])
    err = np.abs(value - exact[point, cell])[both]
    assert np.median(err) < 0.01 and np.percentile(err, 95) < p95_db
    # away from the discontinuities (the point and its four stencil pixel centres behind the
    # same buildings, and 3 pixels from the site) the error is that of bilinear
    # interpolation of a smooth field
    buildings = mr.buildings_m(cells)
    smooth = both & (distance[point, cell] > 3 * resolution_m)
    u = np.clip((x[point] - transform.c) / resolution_m - 0.5, 0, cols - 1)
    v = np.clip((transform.f - y[point]) / resolution_m - 0.5, 0, rows - 1)
    for j in range(len(ids)):
        mine = np.flatnonzero(smooth & (cell == j))
        here = mr.crossings(cx[j], cy[j], x[point[mine]], y[point[mine]], buildings)
        for di in (0, 1):
            for dj in (0, 1):
                i = np.minimum(np.floor(u[mine]) + di, cols - 1)
                k = np.minimum(np.floor(v[mine]) + dj, rows - 1)
                there = mr.crossings(cx[j], cy[j], transform.c + resolution_m * (i + 0.5),
                                     transform.f - resolution_m * (k + 0.5), buildings)
                smooth[mine[there != here]] = False
    assert smooth.mean() > 0.8
    smooth_err = np.abs(value - exact[point, cell])[smooth]
    assert smooth_err.max() < 2.5 and np.percentile(smooth_err, 95) < 0.1


def test_pixel_centres_hold_the_model_exactly(cells, tmp_path):
    mr.write_rasters(cells, tmp_path, resolution_m=50.0)
    transform, rows, cols = mr.grid(cells, 50.0)
    jj, ii = np.mgrid[0:rows, 0:cols]
    x, y = (transform.c + 50.0 * (ii.ravel() + 0.5), transform.f - 50.0 * (jj.ravel() + 0.5))
    cell, point, value = RasterSet(tmp_path).sample(cells["cell_id"].tolist(), x, y, cells.crs)
    np.testing.assert_allclose(value, mr.model_loss_db(cells, x, y)[point, cell], rtol=1e-6)
