"""Per-cell rasters: metadata, windowed bilinear samples, and every refusal of cellopt.radio.raster_io."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyproj
import pytest
import rasterio
from rasterio.errors import NotGeoreferencedWarning
from rasterio.io import DatasetReader
from rasterio.transform import Affine

from cellopt.errors import ValidationError
from cellopt.radio import raster_io
from cellopt.radio.raster_io import KINDS, RasterSet

X0, Y0 = 690_000.0, 5_336_000.0  # upper-left corner in EPSG:32632 (Munich) [m]
RES = 10.0


def from_origin(west: float, north: float, xsize: float, ysize: float) -> Affine:
    """A north-up transform (rasterio's from_origin, without its deprecated Affine product)."""
    return Affine(xsize, 0.0, west, 0.0, -ysize, north)


def write(path: Path, data: np.ndarray, *, crs: str | None = "EPSG:32632", transform: Affine | None = None,
          nodata: float | None = None, descriptions: list[str] | None = None, dtype: str = "float64",
          scale: float | None = None, offset: float | None = None) -> Path:
    """Write `data` (rows, cols) or (bands, rows, cols) as a GeoTIFF."""
    data = np.asarray(data)
    if data.ndim == 2:
        data = data[None]
    profile = {"driver": "GTiff", "height": data.shape[1], "width": data.shape[2], "count": data.shape[0],
               "dtype": dtype, "transform": transform or from_origin(X0, Y0, RES, RES), "nodata": nodata}
    if crs is not None:
        profile["crs"] = crs
    if data.shape[1] >= 16 and data.shape[2] >= 16:
        profile.update(tiled=True, blockxsize=16, blockysize=16)
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(data.astype(dtype))
        for band, text in enumerate(descriptions or [], 1):
            dst.set_band_description(band, text)
        if scale is not None:
            dst.scales = (scale,) * data.shape[0]
            dst.offsets = (offset or 0.0,) * data.shape[0]
    return path


def plane(rows: int, cols: int, a: float, b: float, c: float, transform: Affine | None = None) -> np.ndarray:
    """a + b (x − X0) + c (y − Y0) at the pixel centres."""
    t = transform or from_origin(X0, Y0, RES, RES)
    jj, ii = np.mgrid[0:rows, 0:cols]
    x, y = t.c + t.a * (ii + 0.5), t.f + t.e * (jj + 0.5)
    return a + b * (x - X0) + c * (y - Y0)


@pytest.fixture
def record_reads(monkeypatch):
    """The (bands, window) of every DatasetReader.read with a window."""
    calls = []
    original = DatasetReader.read

    def read(self, indexes=None, *args, **kwargs):
        if kwargs.get("window") is not None:
            calls.append((indexes, kwargs["window"]))
        return original(self, indexes, *args, **kwargs)

    monkeypatch.setattr(DatasetReader, "read", read)
    return calls


# ---------------------------------------------------------------------- bilinear values
def test_a_plane_is_reproduced_exactly_between_pixel_centres(tmp_path):
    write(tmp_path / "A.tif", plane(30, 40, 100.0, 0.3, -0.2))
    rs = RasterSet(tmp_path)
    rng = np.random.default_rng(0)
    x = X0 + rng.uniform(5.0, 395.0, 500)  # the hull of the pixel centres
    y = Y0 - rng.uniform(5.0, 295.0, 500)
    cell, point, value = rs.sample(["A"], x, y, "EPSG:32632")
    assert cell.dtype == point.dtype == np.int64 and value.dtype == np.float64
    assert np.array_equal(point, np.arange(500)) and np.all(cell == 0)
    np.testing.assert_allclose(value, 100.0 + 0.3 * (x - X0) - 0.2 * (y - Y0), rtol=0, atol=1e-9)


def test_pixel_centres_give_the_pixel_values_and_edges_are_clamped(tmp_path):
    data = np.arange(12.0).reshape(3, 4) + 50.0
    write(tmp_path / "A.tif", data)
    rs = RasterSet(tmp_path)
    jj, ii = np.mgrid[0:3, 0:4]
    _, _, value = rs.sample(["A"], X0 + RES * (ii.ravel() + 0.5), Y0 - RES * (jj.ravel() + 0.5), 32632)
    assert np.array_equal(value, data.ravel())
    # within half a pixel of the edge: constant across the edge, bilinear along it
    x = np.array([X0, X0 + 2.0, X0 + 40.0, X0 + 38.0, X0 + 10.0, X0])
    y = np.array([Y0 - 15.0, Y0 - 15.0, Y0 - 15.0, Y0 - 15.0, Y0, Y0])
    _, point, value = rs.sample(["A"], x, y, "EPSG:32632")
    assert np.array_equal(point, np.arange(6))  # edges included
    np.testing.assert_allclose(value, [54.0, 54.0, 57.0, 57.0, 50.5, 50.0], atol=1e-12)


def test_points_outside_the_extent_are_absent_and_counted(tmp_path):
    write(tmp_path / "A.tif", np.full((10, 10), 80.0))
    rs = RasterSet(tmp_path)
    x = np.array([X0 - 0.01, X0 + 50.0, X0 + 100.01, X0 + 50.0, X0 + 50.0])
    y = np.array([Y0 - 50.0, Y0 - 50.0, Y0 - 50.0, Y0 + 0.01, Y0 - 100.0])
    _, point, value, report = rs.sample(["A"], x, y, "EPSG:32632", return_report=True)
    assert point.tolist() == [1, 4] and np.all(value == 80.0)
    assert report.n_inside.tolist() == [2] and report.n_outside.tolist() == [3]
    assert report.links_per_point.tolist() == [0, 1, 0, 0, 1] and report.n_unlinked_points == 3


def test_nodata_and_nan_make_a_pair_absent_where_their_weight_is_not_zero(tmp_path):
    data = np.full((5, 5), 90.0)
    data[2, 2] = -9999.0
    data[0, 4] = np.nan
    write(tmp_path / "A.tif", data, nodata=-9999.0)
    rs = RasterSet(tmp_path)
    centre = lambda i, j: (X0 + RES * (i + 0.5), Y0 - RES * (j + 0.5))  # noqa: E731
    pts = [centre(2, 2),            # the nodata pixel itself
           centre(1, 2),            # centre of its valid neighbour: weight 0 on it
           (X0 + 20.0, Y0 - 25.0),  # between (1,2) and (2,2)
           (X0 + 20.0, Y0 - 20.0),  # between four pixels, one of them nodata
           centre(3, 0), (X0 + 45.0, Y0 - 10.0),  # next to the NaN pixel, and half on it
           centre(0, 0)]
    x, y = np.array(pts).T
    _, point, value, report = rs.sample(["A"], x, y, "EPSG:32632", return_report=True)
    assert point.tolist() == [1, 4, 6] and np.all(value == 90.0)
    assert report.n_nodata.tolist() == [4] and report.n_linked.tolist() == [3]
    assert "4 on nodata" in report.summary()


def test_scale_offset_and_a_south_up_grid(tmp_path):
    write(tmp_path / "A.tif", np.full((4, 4), 1234), dtype="int16", scale=0.1, offset=-3.0)
    up = from_origin(X0, Y0, RES, RES)
    south_up = Affine(RES, 0.0, X0, 0.0, RES, Y0 - 40.0)
    write(tmp_path / "B.tif", np.flipud(plane(4, 4, 100.0, 0.3, -0.2, up)), transform=south_up)
    rs = RasterSet(tmp_path)
    x, y = np.array([X0 + 12.0, X0 + 27.0]), np.array([Y0 - 13.0, Y0 - 31.0])
    cell, _, value = rs.sample(["A", "B"], x, y, "EPSG:32632")
    np.testing.assert_allclose(value[cell == 0], 120.4)
    np.testing.assert_allclose(value[cell == 1], 100.0 + 0.3 * (x - X0) - 0.2 * (y - Y0), atol=1e-9)


# ---------------------------------------------------------------------- windows, forms, CRSs
def test_only_the_window_around_the_points_is_read(tmp_path, record_reads):
    write(tmp_path / "A.tif", plane(1000, 800, 100.0, 0.01, 0.02), dtype="float32")
    rs = RasterSet(tmp_path)
    rng = np.random.default_rng(1)
    x = X0 + 3000.0 + rng.uniform(0, 200.0, 300)  # a 200 m × 100 m patch of a 8 km × 10 km raster
    y = Y0 - 4000.0 - rng.uniform(0, 100.0, 300)
    cell, _, value = rs.sample(["A"], x, y, "EPSG:32632")
    assert len(cell) == 300
    np.testing.assert_allclose(value, 100.0 + 0.01 * (x - X0) + 0.02 * (y - Y0), atol=1e-3)
    [(_, window)] = record_reads
    assert window.width <= 22 and window.height <= 12  # 20 × 10 pixels and their stencils


def test_a_multi_band_file_is_read_in_one_window(tmp_path, record_reads):
    bands = np.stack([plane(20, 30, 100.0 + k, 0.1 * k, 0.05, None) for k in range(3)])
    write(tmp_path / "cells.tif", bands, descriptions=["S1-1", "S1-2", "S1-3"])
    rs = RasterSet(tmp_path / "cells.tif")
    assert rs.cell_ids == ("S1-1", "S1-2", "S1-3") and len(rs) == 3
    assert rs.rasters["S1-2"].band == 2 and rs.min_resolution_m == RES
    x, y = X0 + np.array([15.0, 33.0, 251.0]), Y0 - np.array([17.0, 12.0, 151.0])
    cell, point, value = rs.sample(["S1-3", "S1-1"], x, y, "EPSG:32632", strict=False)
    assert cell.tolist() == [0, 0, 0, 1, 1, 1] and point.tolist() == [0, 1, 2] * 2
    for pos, k in ((0, 2), (1, 0)):
        expected = 100.0 + k + 0.1 * k * (x - X0) + 0.05 * (y - Y0)
        np.testing.assert_allclose(value[cell == pos], expected, atol=1e-9)
    assert len(record_reads) == 1 and list(record_reads[0][0]) == [3, 1]


def test_bands_past_the_read_budget_are_read_in_groups(tmp_path, record_reads, monkeypatch):
    bands = np.stack([np.full((20, 30), 100.0 + k) for k in range(5)])
    write(tmp_path / "cells.tif", bands, descriptions=[f"C{k}" for k in range(5)])
    monkeypatch.setattr(raster_io, "READ_BUDGET_BYTES", 2 * 8 * 4)  # two bands of a 2 × 2 window
    cell, _, value = RasterSet(tmp_path / "cells.tif").sample([f"C{k}" for k in range(5)], [X0 + 1.0],
                                                                [Y0 - 1.0], "EPSG:32632")
    assert cell.tolist() == [0, 1, 2, 3, 4] and value.tolist() == [100.0, 101.0, 102.0, 103.0, 104.0]
    assert [list(bands) for bands, _ in record_reads] == [[1, 2], [3, 4], [5]]


def test_a_folder_of_rasters_in_several_crs(tmp_path):
    # A in UTM 32N (WGS 84), B in ETRS89 / UTM 32N on another grid, C.tiff in UTM 33N
    write(tmp_path / "A.tif", plane(30, 30, 100.0, 0.1, 0.1))
    write(tmp_path / "B.TIF", np.full((20, 20), 95.0), crs="EPSG:25832",
          transform=from_origin(X0 + 100.0, Y0 - 50.0, 5.0, 5.0))
    utm33 = pyproj.Transformer.from_crs(32632, 32633, always_xy=True)
    x33, y33 = utm33.transform(X0, Y0)
    write(tmp_path / "C.tiff", np.full((40, 40), 70.0), crs="EPSG:32633",
          transform=from_origin(x33 - 100.0, y33 + 100.0, 10.0, 10.0))
    (tmp_path / "notes.txt").write_text("not a raster")
    rs = RasterSet(tmp_path)
    assert rs.cell_ids == ("A", "B", "C") and rs.min_resolution_m == 5.0
    x, y = np.array([X0 + 120.0, X0 + 5.0]), np.array([Y0 - 70.0, Y0 - 5.0])
    cell, point, value = rs.sample(["C", "B", "A"], x, y, "EPSG:32632")
    assert list(zip(cell.tolist(), point.tolist(), strict=True)) == [(0, 0), (0, 1), (1, 0), (2, 0), (2, 1)]
    np.testing.assert_allclose(value[:3], [70.0, 70.0, 95.0])
    left, bottom, right, top = rs.bounds("EPSG:32632")
    cx, cy = utm33.transform(x33 + np.array([-100.0, 300.0, -100.0, 300.0]),
                             y33 + np.array([100.0, 100.0, -300.0, -300.0]), direction="INVERSE")
    assert left == pytest.approx(cx.min(), abs=0.1) and right == pytest.approx(cx.max(), abs=0.1)
    assert top == pytest.approx(cy.max(), abs=0.1) and bottom == pytest.approx(min(cy.min(), Y0 - 300.0))
    assert rs.bounds("EPSG:32632", ["B"]) == pytest.approx((X0 + 100.0, Y0 - 150.0, X0 + 200.0, Y0 - 50.0),
                                                           abs=1e-3)  # ETRS89 ≈ WGS 84


def test_points_in_lon_lat_give_the_values_of_the_same_points_in_utm(tmp_path):
    write(tmp_path / "A.tif", plane(50, 50, 120.0, 0.07, -0.03))
    rs = RasterSet(tmp_path)
    rng = np.random.default_rng(2)
    x, y = X0 + rng.uniform(0, 500, 200), Y0 - rng.uniform(0, 500, 200)
    lon, lat = pyproj.Transformer.from_crs(32632, 4326, always_xy=True).transform(x, y)
    utm = rs.sample(["A"], x, y, "EPSG:32632")
    geo = rs.sample(["A"], lon, lat, pyproj.CRS("EPSG:4326"))
    assert np.array_equal(utm[1], geo[1])
    np.testing.assert_allclose(geo[2], utm[2], atol=1e-6)
    lon0, lat0, lon1, lat1 = rs.bounds("EPSG:4326")
    assert lon0 <= lon.min() and lon1 >= lon.max() and lat0 <= lat.min() and lat1 >= lat.max()


def test_a_projected_crs_in_feet_gives_its_resolution_in_metres(tmp_path):
    write(tmp_path / "A.tif", np.full((4, 4), 90.0), crs="EPSG:2263",
          transform=from_origin(980_000.0, 200_000.0, 10.0, 10.0))
    assert RasterSet(tmp_path).min_resolution_m == pytest.approx(3.048, rel=1e-5)


def test_strict_false_reports_missing_cells_and_unused_rasters(tmp_path):
    for cell in ("A", "B"):
        write(tmp_path / f"{cell}.tif", np.full((4, 4), 100.0))
    rs = RasterSet(tmp_path)
    x, y = np.array([X0 + 5.0]), np.array([Y0 - 5.0])
    cell, _, _, report = rs.sample(["Z", "A"], x, y, "EPSG:32632", strict=False, return_report=True)
    assert cell.tolist() == [1] and report.missing == ("Z",) and report.unused == ("B",)
    assert report.to_frame()["linked"].tolist() == [0, 1]
    assert "['Z'] cells have no raster" in report.summary()
    empty = rs.sample(["A"], np.zeros(0), np.zeros(0), "EPSG:32632", strict=False)
    assert [len(a) for a in empty] == [0, 0, 0]


def test_check_values_summarises_each_raster(tmp_path):
    write(tmp_path / "A.tif", plane(100, 100, 100.0, 0.1, 0.0), nodata=-1.0)
    table = RasterSet(tmp_path).check_values(max_pixels=400)
    assert table["cell_id"].tolist() == ["A"] and table["valid_fraction"].tolist() == [1.0]
    assert 100.0 < table["median"].iloc[0] < 200.0


# ---------------------------------------------------------------------- refusals
def refused(match: str, call, *args, **kwargs) -> str:
    with pytest.raises(ValidationError, match=match) as info:
        call(*args, **kwargs)
    return str(info.value)


def test_refuses_a_missing_source_an_empty_folder_and_an_unknown_kind(tmp_path):
    refused("does not exist; fix: give a folder", RasterSet, tmp_path / "nope")
    (tmp_path / "cells.csv").write_text("a,b\n")
    text = refused("holds no .tif or .tiff file", RasterSet, tmp_path)
    assert "cells.csv" in text
    refused(r"kind='path_loss' is not one of .*fix", RasterSet, tmp_path, kind="path_loss")
    assert KINDS == ("path_loss_db", "gain_db", "rsrp_dbm")


def test_a_damaged_file_whose_pixels_cannot_be_read_is_named(tmp_path):
    """A file whose header reads but whose tiles are garbled: rasterio says only "Read
    failed. See previous exception for details"; the refusal names the file and GDAL's cause."""
    path = tmp_path / "A.tif"
    data = np.random.default_rng(0).uniform(80.0, 140.0, (64, 64))
    with rasterio.open(path, "w", driver="GTiff", height=64, width=64, count=1, dtype="float64",
                       crs="EPSG:32632", transform=from_origin(X0, Y0, RES, RES), nodata=-9999.0,
                       tiled=True, blockxsize=16, blockysize=16, compress="deflate") as dst:
        dst.write(data, 1)
    size = path.stat().st_size
    with open(path, "r+b") as f:  # the header and the tile offsets stay, the tiles do not
        f.seek(size // 4)
        f.write(b"\0" * (size // 2))
    rs = RasterSet(tmp_path)
    x, y = np.array([X0 + 5.0, X0 + 605.0]), np.array([Y0 - 5.0, Y0 - 605.0])
    for call in (lambda: rs.sample(["A"], x, y, 32632), rs.check_values):
        text = refused(r"A.tif: reading its pixels failed \(RasterioIOError: Read failed\.; ", call)
        assert "See previous exception" not in text and "Decoding error" in text, text
        assert "fix: export it again" in text


def test_refuses_unreadable_files_and_two_files_for_one_cell(tmp_path):
    (tmp_path / "A.tif").write_text("not a tiff")
    refused(r"A.tif: not a raster rasterio can read", RasterSet, tmp_path)
    write(tmp_path / "A.tif", np.ones((2, 2)))
    write(tmp_path / "A.TIFF", np.ones((2, 2)))
    refused(r"two files for cell 'A'.*fix: keep one", RasterSet, tmp_path)


def test_refuses_rasters_without_crs_in_degrees_or_rotated(tmp_path):
    write(tmp_path / "A.tif", np.ones((2, 2)), crs=None)
    refused(r"A.tif: no CRS; fix: assign", RasterSet, tmp_path / "A.tif")
    write(tmp_path / "B.tif", np.ones((2, 2)), crs="EPSG:4326", transform=from_origin(11.5, 48.2, 1e-4, 1e-4))
    refused(r"B.tif: its CRS 'WGS 84' is geographic.*fix: reproject", RasterSet, tmp_path / "B.tif")
    rotated = Affine.rotation(10.0) @ from_origin(X0, Y0, RES, RES)
    write(tmp_path / "C.tif", np.ones((2, 2)), transform=rotated)
    refused(r"C.tif: its grid is rotated or sheared.*north-up", RasterSet, tmp_path / "C.tif")
    with pytest.warns(NotGeoreferencedWarning), rasterio.open(
            tmp_path / "D.tif", "w", driver="GTiff", height=2, width=2, count=1, dtype="float32") as dst:
        dst.write(np.ones((1, 2, 2), "float32"))
    refused(r"D.tif: not georeferenced", RasterSet, tmp_path / "D.tif")
    text = refused("no CRS", RasterSet, tmp_path)  # the folder: every file's problem at once
    assert all(name in text for name in ("A.tif", "B.tif", "C.tif", "D.tif"))


def test_refuses_band_descriptions_missing_or_repeated(tmp_path):
    write(tmp_path / "m.tif", np.ones((3, 2, 2)), descriptions=["A", "", ""])
    refused(r"m.tif: bands \[2, 3\] have no description.*set_band_description", RasterSet, tmp_path / "m.tif")
    write(tmp_path / "d.tif", np.ones((3, 2, 2)), descriptions=["A", "B", "A"])
    refused(r"d.tif: band descriptions repeat \('A': bands \[1, 3\]\)", RasterSet, tmp_path / "d.tif")
    write(tmp_path / "one.tif", np.ones((2, 2)))  # one band, no description: its file name
    assert RasterSet(tmp_path / "one.tif").cell_ids == ("one",)
    sub = tmp_path / "folder"
    sub.mkdir()
    write(sub / "A.tif", np.ones((2, 2, 2)), descriptions=["A", "B"])
    refused(r"A.tif: 2 bands, but the files of a folder hold one cell each", RasterSet, sub)


def test_refuses_cells_without_rasters_and_rasters_for_no_cell(tmp_path):
    for cell in ("S1-1", "S1-2", "S2-1"):
        write(tmp_path / f"{cell}.tif", np.full((4, 4), 100.0))
    rs = RasterSet(tmp_path)
    x, y = np.array([X0 + 5.0]), np.array([Y0 - 5.0])
    text = refused(r"have no raster", rs.sample, ["s1_1", "S1-2", "X"], x, y, "EPSG:32632")
    assert "rows [0, 2] (ids ['s1_1', 'X'])" in text and "'s1_1' vs raster 'S1-1'" in text
    assert "2 rasters are for no cell of cell_ids: ['S1-1', 'S2-1']" in text and "strict=False" in text
    refused(r"repeat an earlier id", rs.sample, ["S1-1", "S1-1"], x, y, "EPSG:32632", strict=False)
    refused(r"non-finite", rs.sample, rs.cell_ids, np.array([np.nan]), y, "EPSG:32632")
    refused(r"shapes \(2,\) and \(1,\)", rs.sample, rs.cell_ids, np.zeros(2), y, "EPSG:32632")
    refused(r"not a CRS pyproj knows", rs.sample, rs.cell_ids, x, y, "EPSG:0")


@pytest.mark.parametrize(("kind", "level", "match"), [
    ("path_loss_db", -110.0, r"not a positive path loss.*fix: kind='gain_db'"),
    ("gain_db", 110.0, r"not a negative path gain.*fix: kind='path_loss_db'"),
    ("rsrp_dbm", 110.0, r"outside the RSRP range.*kind='path_loss_db'"),
    ("rsrp_dbm", -200.0, r"outside the RSRP range.*check the unit"),
])
def test_refuses_values_that_do_not_fit_the_kind(tmp_path, kind, level, match):
    write(tmp_path / "A.tif", np.full((4, 4), level))
    rs = RasterSet(tmp_path, kind=kind)
    x, y = np.array([X0 + 5.0]), np.array([Y0 - 5.0])
    text = refused(match, rs.sample, ["A"], x, y, "EPSG:32632")
    assert "A.tif: median value" in text
    refused(match, rs.check_values)
    assert len(rs.sample(["A"], x, y, "EPSG:32632", check=False)[0]) == 1


def test_accepts_values_that_fit_the_kind(tmp_path):
    for kind, level in (("path_loss_db", 110.0), ("gain_db", -110.0), ("rsrp_dbm", -95.0)):
        write(tmp_path / "A.tif", np.full((4, 4), level))
        rs = RasterSet(tmp_path, kind=kind)
        assert rs.sample(["A"], np.array([X0 + 5.0]), np.array([Y0 - 5.0]), 32632)[2].tolist() == [level]
        assert rs.check_values()["median"].tolist() == [level]


def test_refuses_a_raster_that_holds_only_nodata(tmp_path):
    write(tmp_path / "A.tif", np.full((40, 40), -9999.0), nodata=-9999.0)
    data = np.full((40, 40), -9999.0)
    data[39, 39] = 100.0  # one value, far from the points: not refused
    write(tmp_path / "B.tif", data, nodata=-9999.0)
    rs = RasterSet(tmp_path)
    x, y = np.array([X0 + 5.0]), np.array([Y0 - 5.0])
    text = refused(r"A.tif: holds only nodata \(nodata value -9999\)", rs.sample, ["A", "B"], x, y, 32632)
    assert "B.tif" not in text
    _, _, _, report = rs.sample(["A", "B"], x, y, 32632, check=False, return_report=True)
    assert report.n_nodata.tolist() == [1, 1]
    refused(r"A.tif: holds only nodata", rs.check_values, max_pixels=16)
