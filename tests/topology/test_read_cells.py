"""Tests of cellopt.topology.cellfiles.read_cells (small synthetic files, plus the shared SF extract)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import pytest
import shapely
from helpers import ROOT
from helpers.checks import assert_same_cells, raises
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial import cKDTree

from cellopt import Network, ValidationError
from cellopt.topology.cellfiles import OPENCELLID_COLUMNS, read_cells

SF_CSV = (ROOT.parent / "shared" / "data"
          / "opencellid_sf_verizon_lte.csv")
UTM = "EPSG:32610"  # UTM 10N, San Francisco
X0, Y0 = 550_000.0, 4_180_000.0
TO_LONLAT = pyproj.Transformer.from_crs(UTM, "EPSG:4326", always_xy=True)


def lonlat(dx_m, dy_m) -> tuple[np.ndarray, np.ndarray]:
    """Lon/lat of points at offsets [m] from (X0, Y0) in UTM 10N."""
    return TO_LONLAT.transform(X0 + np.asarray(dx_m, float), Y0 + np.asarray(dy_m, float))


def xy_m(net: Network) -> np.ndarray:
    return np.column_stack([net.cells.geometry.x, net.cells.geometry.y])


def write_csv(path: Path, **columns) -> Path:
    pd.DataFrame(columns).to_csv(path, index=False)
    return path


def write_ocid(path: Path, dx_m, dy_m, cell, **overrides) -> Path:
    """An OpenCelliD-schema CSV: LTE, mcc 311, net 480, area 9728 unless overridden."""
    lon, lat = lonlat(dx_m, dy_m)
    n = len(lon)
    data = {
        "radio": "LTE", "mcc": 311, "net": 480, "area": 9728, "cell": cell, "unit": 0,
        "lon": lon, "lat": lat, "range": 1000, "samples": 10, "changeable": 1,
        "created": 1_458_613_761, "updated": 1_491_242_559, "averageSignal": 0,
    }
    data.update(overrides)
    frame = pd.DataFrame({k: np.broadcast_to(np.asarray(v), (n,)) for k, v in data.items()})
    frame[list(OPENCELLID_COLUMNS)].to_csv(path, index=False)
    return path


# ---------------------------------------------------------------------- shared SF extract
@pytest.fixture(scope="module")
def sf() -> Network:
    if not SF_CSV.exists():
        pytest.skip(f"shared data not found at {SF_CSV}")
    return read_cells(SF_CSV)


def test_sf_counts(sf):
    raw = pd.read_csv(SF_CSV)
    assert len(raw) == 1999
    assert raw.duplicated(["radio", "mcc", "net", "cell"]).sum() == 51
    cells = sf.cells
    assert sf.n_cells == 1999 - 51 == 1948
    assert cells["cell_id"].is_unique
    assert cells["cell"].is_unique
    assert cells["enb_id"].nunique() == 549
    assert cells["site_id"].nunique() == 489
    assert set(cells["site_id"]) == set(range(489))
    assert sf.users is not None and sf.n_users == 0
    assert cells["azimuth_deg"].isna().all()
    assert (cells["tier"] == "macro").all() and (cells["tx_power_dbm"] == 46.0).all()
    assert {"radio", "mcc", "mnc", "area", "enb_id", "range_m", "samples", "lon",
            "lat"} <= set(cells.columns)
    # Of the duplicated cells, the row with most samples was kept.
    most = raw.groupby("cell")["samples"].max()
    assert (cells.set_index("cell")["samples"] == most.loc[cells["cell"]]).all()


def test_sf_metric_crs(sf):
    assert sf.crs.to_epsg() == 32610
    assert sf.crs.is_projected
    assert {a.unit_name for a in sf.crs.axis_info} == {"metre"}
    xy = xy_m(sf)
    assert np.isfinite(xy).all()
    assert ((xy[:, 0] > 1e5) & (xy[:, 0] < 1e6)).all()  # UTM easting
    assert ((xy[:, 1] > 4.1e6) & (xy[:, 1] < 4.3e6)).all()  # northing at 37.7° N


def test_sf_sites(sf):
    cells = sf.cells
    xy = xy_m(sf)
    # The cells of one site share its position; an eNB is never split over sites.
    spread = pd.DataFrame(xy).groupby(cells["site_id"].to_numpy()).agg(np.ptp)
    assert (spread.to_numpy() == 0).all()
    assert (cells.groupby("enb_id")["site_id"].nunique() == 1).all()
    # Distinct sites are at least merge_distance_m = 50 m apart (the merge is repeated
    # until no pair is closer).
    sites = pd.DataFrame(xy).groupby(cells["site_id"].to_numpy()).first().to_numpy()
    assert len(sites) == 489
    assert cKDTree(sites).query(sites, k=2)[0][:, 1].min() >= 50.0
    # A site's position is the mean of its cells' measured positions, projected.
    measured = gpd.GeoSeries(gpd.points_from_xy(cells["lon"], cells["lat"]), crs="EPSG:4326")
    measured = shapely.get_coordinates(measured.to_crs(sf.crs).values)
    mean = pd.DataFrame(measured).groupby(cells["site_id"].to_numpy()).mean().to_numpy()
    np.testing.assert_allclose(mean, sites, rtol=0, atol=1e-6)


def test_sf_round_trip():
    if not SF_CSV.exists():
        pytest.skip(f"shared data not found at {SF_CSV}")
    net = read_cells(SF_CSV, cluster_sites=False)
    assert net.n_cells == 1948 and net.cells["site_id"].nunique() == 1948
    back = net.cells.geometry.to_crs("EPSG:4326")
    np.testing.assert_allclose(back.x, net.cells["lon"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(back.y, net.cells["lat"], rtol=0, atol=1e-6)


# ---------------------------------------------------------------------- plain CSV / vector
def test_csv_lonlat(tmp_path):
    lon, lat = lonlat([0.0, 300.0, 0.0], [0.0, 0.0, 400.0])
    path = write_csv(tmp_path / "cells.csv", Longitude=lon, LATITUDE=lat,
                     cell_id=["a", "b", "c"], tier=["macro", "pico", "pico"],
                     tx_power_dbm=[46.0, 30.0, 30.0], owner="operator", note=["x", "y", "z"])
    with pytest.warns(UserWarning, match=r"1 column\(s\) not used by cellopt: 'note' \(not "
                      r"recognised"):
        net = read_cells(path)
    c = net.cells
    assert net.crs.to_epsg() == 32610
    np.testing.assert_allclose(xy_m(net), [[X0, Y0], [X0 + 300, Y0], [X0, Y0 + 400]],
                               rtol=0, atol=1e-6)
    assert c["cell_id"].tolist() == ["a", "b", "c"]
    assert c["site_id"].tolist() == [0, 1, 2]
    assert c["tier"].tolist() == ["macro", "pico", "pico"]
    assert c["tx_power_dbm"].tolist() == [46.0, 30.0, 30.0]
    assert (c["antenna_gain_dbi"] == 14.0).all() and (c["height_m"] == 25.0).all()
    assert c["azimuth_deg"].isna().all() and np.isinf(c["backhaul_mbps"]).all()
    assert c["note"].tolist() == ["x", "y", "z"]
    np.testing.assert_array_equal(c["lon"], lon)
    np.testing.assert_array_equal(c["lat"], lat)
    assert "Longitude" not in c.columns
    assert net.bandwidth_mhz == 10.0


def test_csv_xy_with_source_crs(tmp_path):
    path = write_csv(tmp_path / "cells.csv", x_m=[X0, X0 + 100.0], y_m=[Y0, Y0 + 50.0],
                     site_id=[7, 7], azimuth_deg=[0.0, 120.0], height_m=[30.0, 30.0])
    net = read_cells(path, source_crs=UTM, tier="pico", tx_power_dbm=30.0, bandwidth_mhz=20.0)
    assert net.crs.to_epsg() == 32610
    np.testing.assert_allclose(xy_m(net), [[X0, Y0], [X0 + 100, Y0 + 50]], rtol=0, atol=1e-6)
    assert net.cells["site_id"].tolist() == [7, 7]
    assert net.cells["azimuth_deg"].tolist() == [0.0, 120.0]
    assert (net.cells["tier"] == "pico").all() and net.bandwidth_mhz == 20.0
    assert not {"x_m", "y_m"} & set(net.cells.columns)
    # An explicit target CRS.
    other = read_cells(path, source_crs=UTM, crs="EPSG:3310")
    assert other.crs.to_epsg() == 3310
    assert np.hypot(*np.diff(xy_m(other), axis=0)[0]) == pytest.approx(np.hypot(100, 50),
                                                                       rel=1e-3)


@pytest.mark.parametrize("suffix", [".geojson", ".gpkg"])
def test_vector(tmp_path, suffix):
    lon, lat = lonlat([0.0, 250.0], [0.0, 0.0])
    frame = gpd.GeoDataFrame(
        {"cell_id": [10, 11], "tier": ["macro", "femto"], "tx_power_dbm": [46.0, 20.0],
         "backhaul_mbps": [1e4, 50.0],
         "price_per_mbps": [0.0, 0.2], "owner": ["operator", "third_party"],
         "name": ["mast", "shop"]},
        geometry=gpd.points_from_xy(lon, lat), crs="EPSG:4326",
    )
    if suffix == ".gpkg":
        frame = frame.to_crs(UTM)
    path = tmp_path / f"cells{suffix}"
    frame.to_file(path)
    with pytest.warns(UserWarning, match=r"1 column\(s\) not used by cellopt: 'name'"):
        net = read_cells(path)
    assert net.crs.to_epsg() == 32610
    np.testing.assert_allclose(xy_m(net), [[X0, Y0], [X0 + 250, Y0]], rtol=0, atol=1e-3)
    c = net.cells
    assert c["cell_id"].tolist() == [10, 11]
    assert c["owner"].tolist() == ["operator", "third_party"]
    assert c["backhaul_mbps"].tolist() == [1e4, 50.0]
    assert c["name"].tolist() == ["mast", "shop"]


# ---------------------------------------------------------------------- OpenCelliD
@pytest.fixture
def mixed(tmp_path) -> Path:
    """Six cells: radios, codes and positions chosen so that each filter keeps a subset."""
    return write_ocid(
        tmp_path / "ocid.csv",
        dx_m=[0, 1000, 2000, 3000, 4000, 5000], dy_m=[0, 0, 0, 0, 0, 0],
        cell=[256 * 1, 256 * 2, 256 * 3, 4, 5, 6],
        radio=["LTE", "LTE", "LTE", "GSM", "UMTS", "LTE"],
        mcc=[311, 311, 311, 311, 310, 310], net=[480, 480, 12, 480, 260, 260],
    )


def test_detects_opencellid(mixed):
    net = read_cells(mixed)
    assert net.n_cells == 6
    assert net.cells["cell_id"].tolist()[:4] == [
        "LTE-311-480-9728-256", "LTE-311-480-9728-512", "LTE-311-12-9728-768",
        "GSM-311-480-9728-4"]
    assert net.cells["enb_id"].isna().tolist() == [False, False, False, True, True, False]
    # As a plain table: 'cell' is the cell id; OpenCelliD's other columns are not used.
    with pytest.warns(UserWarning, match=r"8 column\(s\) not used by cellopt: 'area' \(not "
                      r"recognised: kept as an extra column\); 'unit'"):
        plain = read_cells(mixed, format="csv")
    assert plain.cells["cell_id"].tolist() == [256, 512, 768, 4, 5, 6]
    assert "net" in plain.cells.columns
    gz = mixed.with_suffix(".csv.gz")
    pd.read_csv(mixed).to_csv(gz, index=False)
    assert read_cells(gz).cells["cell_id"].tolist() == net.cells["cell_id"].tolist()


@pytest.mark.parametrize(
    ("filters", "kept"),
    [
        ({"radio": "LTE"}, [256, 512, 768, 6]),
        ({"radio": ["gsm", "UMTS"]}, [4, 5]),
        ({"mcc": 310}, [5, 6]),
        ({"mnc": [480, 12]}, [256, 512, 768, 4]),
        ({"radio": "LTE", "mcc": 311, "mnc": 480}, [256, 512]),
        ({"bbox": "cells 1-3"}, [512, 768, 4]),
        ({"polygon": "cells 2-4"}, [768, 4, 5]),
        ({"polygon": "utm cells 0-1"}, [256, 512]),
    ],
)
def test_filters(mixed, filters, kept):
    if "bbox" in filters:
        lon, lat = lonlat([900, 3100], [-100, 100])
        filters = {"bbox": (lon[0], lat[0], lon[1], lat[1])}
    elif filters.get("polygon") == "cells 2-4":
        lon, lat = lonlat([1900, 4100], [-100, 100])
        filters = {"polygon": shapely.box(lon[0], lat[0], lon[1], lat[1])}
    elif "polygon" in filters:
        box = shapely.box(X0 - 10, Y0 - 10, X0 + 1010, Y0 + 10)
        filters = {"polygon": gpd.GeoSeries([box], crs=UTM)}
    net = read_cells(mixed, crs=UTM, **filters)  # crs given: skips the slow UTM estimate
    assert net.cells["cell"].tolist() == kept
    assert net.cells["site_id"].tolist() == list(range(len(kept)))


@pytest.mark.parametrize(
    ("filters", "match"),
    [
        ({"radio": "NR"}, "no rows left after filter radio=['NR']"),
        ({"mcc": 208}, "no rows left after filter mcc=[208]"),
        ({"radio": "GSM", "mnc": 260}, "no rows left after filter mnc=[260]"),
        ({"bbox": (0.0, 0.0, 1.0, 1.0)}, "no rows left after filter bbox=(0.0, 0.0, 1.0, 1.0)"),
        ({"polygon": shapely.box(0, 0, 1, 1)}, "no rows left after filter polygon"),
    ],
)
def test_filters_leaving_nothing(mixed, filters, match):
    with raises(ValidationError, match):
        read_cells(mixed, **filters)


def test_clustering_one_enb(tmp_path):
    """Three sectors of eNB 100 → one site at their mean; a GSM cell stays alone."""
    dx, dy = [0.0, 30.0, 0.0, 500.0, 900.0], [0.0, 0.0, 60.0, 0.0, 0.0]
    path = write_ocid(tmp_path / "ocid.csv", dx, dy,
                      cell=[25600 + 1, 25600 + 2, 25600 + 3, 25600 + 4, 25600 + 5],
                      radio=["LTE", "LTE", "LTE", "GSM", "GSM"])
    net = read_cells(path, merge_distance_m=0.0)
    assert net.cells["site_id"].tolist() == [0, 0, 0, 1, 2]
    assert net.cells["enb_id"].tolist()[:3] == [100, 100, 100]
    np.testing.assert_allclose(xy_m(net)[:3], [[X0 + 10, Y0 + 20]] * 3, rtol=0, atol=1e-6)
    np.testing.assert_allclose(xy_m(net)[3:], [[X0 + 500, Y0], [X0 + 900, Y0]], atol=1e-6)
    unclustered = read_cells(path, crs=UTM, cluster_sites=False)
    assert unclustered.cells["site_id"].tolist() == [0, 1, 2, 3, 4]
    np.testing.assert_allclose(xy_m(unclustered), np.column_stack([X0 + np.array(dx),
                                                                   Y0 + np.array(dy)]),
                               rtol=0, atol=1e-6)


@pytest.mark.parametrize(("merge_distance_m", "n_sites"), [(50.0, 1), (20.0, 2), (10.0, 2)])
def test_clustering_merges_close_enbs(tmp_path, merge_distance_m, n_sites):
    """Two eNBs (two cells each) whose centroids are 20 m apart."""
    path = write_ocid(tmp_path / "ocid.csv", [0.0, 0.0, 20.0, 20.0], [-5.0, 5.0, -5.0, 5.0],
                      cell=[256 * 7, 256 * 7 + 1, 256 * 8, 256 * 8 + 1])
    net = read_cells(path, crs=UTM, merge_distance_m=merge_distance_m)
    site = net.cells["site_id"].to_numpy()
    assert len(set(site)) == n_sites
    expected = [[10.0, 0.0]] * 4 if n_sites == 1 else [[0.0, 0.0]] * 2 + [[20.0, 0.0]] * 2
    np.testing.assert_allclose(xy_m(net) - [X0, Y0], expected, rtol=0, atol=1e-6)


def test_clustering_repeats_until_sites_are_apart(tmp_path):
    """a–b are 40 m apart, c is 50.2 m from both but 46 m from their mean: all merge."""
    path = write_ocid(tmp_path / "ocid.csv", [0.0, 40.0, 20.0], [0.0, 0.0, 46.0],
                      cell=[256 * 1, 256 * 2, 256 * 3])
    assert read_cells(path, crs=UTM).cells["site_id"].tolist() == [0, 0, 0]
    assert read_cells(path, crs=UTM, merge_distance_m=45.0).cells["site_id"].tolist() == [0, 0, 1]


def test_opencellid_duplicates(tmp_path):
    """Same LTE cell in two areas → most samples wins (ties: latest); GSM areas differ."""
    path = write_ocid(tmp_path / "ocid.csv", [0, 5, 100, 105, 300, 900], [0] * 6,
                      cell=[1000, 1000, 2000, 2000, 3000, 3000],
                      area=[1, 2, 1, 2, 1, 2], samples=[5, 9, 4, 4, 1, 1],
                      updated=[1, 1, 1, 2, 1, 1], radio=["LTE"] * 4 + ["GSM"] * 2)
    net = read_cells(path, merge_distance_m=0.0)
    assert net.cells["cell_id"].tolist() == [
        "LTE-311-480-2-1000", "LTE-311-480-2-2000", "GSM-311-480-1-3000", "GSM-311-480-2-3000"]
    np.testing.assert_allclose(xy_m(net)[:, 0] - X0, [5, 105, 300, 900], atol=1e-6)


# ---------------------------------------------------------------------- bad input
def test_missing_path(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nope\.csv"):
        read_cells(tmp_path / "nope.csv")


def test_empty_files(tmp_path):
    (tmp_path / "zero.csv").write_bytes(b"")
    with raises(ValidationError, "zero.csv: the file is empty (0 bytes)"):
        read_cells(tmp_path / "zero.csv")
    (tmp_path / "header.csv").write_text("lon,lat,cell_id\n")
    with raises(ValidationError, "header.csv: the file has no data rows"):
        read_cells(tmp_path / "header.csv")
    (tmp_path / "ocid.csv").write_text(",".join(OPENCELLID_COLUMNS) + "\n")
    with raises(ValidationError, "ocid.csv: the file has no data rows"):
        read_cells(tmp_path / "ocid.csv")


def test_missing_columns(tmp_path):
    path = write_csv(tmp_path / "cells.csv", lon=[1.0], height=[3.0])
    with raises(ValidationError,
                "lacks coordinate columns; it has only 'lon' of them; expected 'lon', 'lat'"):
        read_cells(path)
    path = write_csv(tmp_path / "cells.csv", east=[1.0], north=[3.0])
    with raises(ValidationError, "columns found: ['east', 'north']"):
        read_cells(path)
    path = write_csv(tmp_path / "cells.csv", x=[X0], y=[Y0])
    with raises(ValidationError, "columns 'x', 'y' need source_crs"):
        read_cells(path)
    path = write_ocid(tmp_path / "ocid.csv", [0.0], [0.0], cell=[1])
    pd.read_csv(path).drop(columns="area").to_csv(path, index=False)
    with raises(ValidationError, "lacks the OpenCelliD columns ['area']"):
        read_cells(path, format="opencellid")
    with raises(ValidationError, "has 13 OpenCelliD columns"):
        read_cells(path)


def test_bad_coordinates_gathered(tmp_path):
    path = tmp_path / "cells.csv"
    path.write_text("cell_id,lon,lat\n"
                    "a,-122.4,37.7\n"
                    "b,-122.4,\n"
                    "c,west,37.7\n"
                    "d,-122.4,137.7\n"
                    "e,37.7,-122.4\n"
                    "f,-222.4,37.7\n"
                    "a,-122.4,37.8\n")
    with pytest.raises(ValidationError) as info:
        read_cells(path)
    problems = info.value.problems
    text = str(info.value)
    assert "cells.csv: rows [1] (ids ['b']): lat is missing" in text
    assert "rows [2] (ids ['c']): lon is not a number" in text
    assert "rows [3] (ids ['d']): lat is outside [-90, 90]" in text
    assert "rows [4] (ids ['e']): lat is outside [-90, 90] while lon is within" in text
    assert "look swapped" in text
    assert "rows [5] (ids ['f']): lon is outside [-180, 180]" in text
    assert "rows [0, 6] (ids ['a', 'a']): duplicate cell_id" in text
    assert len(problems) == 6
    assert all("fix:" in p for p in problems)


def test_infinite_and_non_numeric(tmp_path):
    path = write_csv(tmp_path / "cells.csv", x=[X0, np.inf], y=[Y0, Y0], cell_id=[1, 2],
                     height_m=["10", "tall"])
    with pytest.raises(ValidationError) as info:
        read_cells(path, source_crs=UTM)
    text = str(info.value)
    assert "rows [1] (ids [2]): x or y is infinite" in text
    assert "rows [1] (ids [2]): height_m is not a number" in text


def test_unknown_tier(tmp_path):
    lon, lat = lonlat([0.0, 100.0], [0.0, 0.0])
    path = write_csv(tmp_path / "cells.csv", lon=lon, lat=lat, cell_id=["m", "s"],
                     tier=["macro", "small"])
    with raises(ValidationError, "rows [1] (ids ['s']): unknown tier"):
        read_cells(path)
    with raises(ValidationError, "unknown tier"):
        read_cells(write_csv(tmp_path / "ok.csv", lon=lon, lat=lat), tier="big")


def test_bad_opencellid_codes(tmp_path):
    path = write_ocid(tmp_path / "ocid.csv", [0.0, 10.0], [0.0, 0.0], cell=["9", "x7"])
    with raises(ValidationError, "rows [1] (ids ['x7']): cell is missing or not a non-negative integer"):
        read_cells(path)


def test_bad_vector(tmp_path):
    lon, lat = lonlat([0.0], [0.0])
    frame = gpd.GeoDataFrame(
        {"cell_id": ["p", "line", "swap"]},
        geometry=[shapely.Point(lon[0], lat[0]),
                  shapely.LineString([(lon[0], lat[0]), (lon[0] + 0.01, lat[0])]),
                  shapely.Point(lat[0], lon[0])],
        crs="EPSG:4326",
    )
    path = tmp_path / "cells.geojson"
    frame.to_file(path)
    with pytest.raises(ValidationError) as info:
        read_cells(path)
    text = str(info.value)
    assert "rows [1] (ids ['line']): geometry is not a Point" in text
    assert "rows [2] (ids ['swap']): geometry y (lat) is outside [-90, 90]" in text
    assert "look swapped" in text


def test_bad_options(tmp_path, mixed):
    with raises(ValidationError, "merge_distance_m is -1"):
        read_cells(mixed, merge_distance_m=-1)
    with raises(ValidationError, "format='shp' is unknown"):
        read_cells(mixed, format="shp")
    with raises(ValidationError, "mcc='311' is not an integer"):
        read_cells(mixed, mcc="311")
    with raises(ValidationError, "bbox=(1, 2, 0, 3) is not (x_min, y_min, x_max, y_max)"):
        read_cells(mixed, bbox=(1, 2, 0, 3))
    with raises(ValidationError, "polygon has no CRS"):
        read_cells(mixed, polygon=gpd.GeoSeries([shapely.box(0, 0, 1, 1)]))
    lon, lat = lonlat([0.0], [0.0])
    path = write_csv(tmp_path / "cells.csv", lon=lon, lat=lat)
    with raises(ValidationError, "filter radio='LTE' needs a column 'radio'"):
        read_cells(path, radio="LTE")
    with raises(ValidationError, "are degrees but source_crs=EPSG:32610 is projected"):
        read_cells(path, source_crs=UTM)
    assert issubclass(ValidationError, ValueError)


# ---------------------------------------------------------------------- OpenCelliD variants
def _sf_raw() -> pd.DataFrame:
    if not SF_CSV.exists():
        pytest.skip(f"shared data not found at {SF_CSV}")
    return pd.read_csv(SF_CSV)


def test_sf_any_column_order_and_case(tmp_path, sf):
    """Shuffled, upper-case, padded names and an extra column read as the export itself."""
    raw = _sf_raw()
    order = list(np.random.default_rng(3).permutation(raw.columns))
    variant = raw[order].rename(columns=lambda c: f" {c.upper()} ").assign(source="ocid")
    variant.to_csv(tmp_path / "shuffled.csv", index=False)
    net = read_cells(tmp_path / "shuffled.csv")
    assert_same_cells(net, sf)
    assert (net.cells["source"] == "ocid").all()
    pd.testing.assert_series_equal(net.cells["samples"], sf.cells["samples"])


def test_sf_headerless(tmp_path, sf):
    _sf_raw().to_csv(tmp_path / "310.csv.gz", index=False, header=False)
    assert_same_cells(read_cells(tmp_path / "310.csv.gz"), sf)


def test_sf_without_samples(tmp_path, sf):
    """Without samples, of the duplicate rows of a cell the latest updated is kept."""
    raw = _sf_raw()
    raw.drop(columns=["samples", "range"]).to_csv(tmp_path / "cells.csv", index=False)
    net = read_cells(tmp_path / "cells.csv")
    assert net.n_cells == sf.n_cells and net.cells["cell_id"].is_unique
    assert net.cells["samples"].isna().all() and net.cells["range_m"].isna().all()
    # Rows kept: per cell the one with the latest `updated`, ties broken by file order.
    expected = raw.assign(order=np.arange(len(raw))).sort_values(
        ["updated", "order"], ascending=[False, True]).drop_duplicates(
        ["radio", "mcc", "net", "cell"]).sort_values("order")
    assert net.cells["cell"].tolist() == expected["cell"].tolist()
    assert net.cells["area"].tolist() == expected["area"].tolist()


def test_opencellid_updated_breaks_ties(tmp_path):
    """No samples column: latest `updated` wins (Unix seconds or ISO dates), then file order."""
    path = write_ocid(tmp_path / "ocid.csv", [0, 5, 100, 105], [0] * 4,
                      cell=[1000, 1000, 2000, 2000], area=[1, 2, 1, 2],
                      updated=[1_500_000_000, 1_600_000_000, 7, 7])
    pd.read_csv(path).drop(columns="samples").to_csv(path, index=False)
    net = read_cells(path, crs=UTM, merge_distance_m=0.0)
    assert net.cells["cell_id"].tolist() == ["LTE-311-480-2-1000", "LTE-311-480-1-2000"]
    frame = pd.read_csv(path).astype({"updated": object})
    frame["updated"] = ["2017-01-01", "2016-12-31T23:59:59Z", None, None]
    frame.to_csv(path, index=False)
    net = read_cells(path, crs=UTM, merge_distance_m=0.0)
    assert net.cells["cell_id"].tolist() == ["LTE-311-480-1-1000", "LTE-311-480-1-2000"]


# ---------------------------------------------------------------------- default projection
GEOD = pyproj.Geod(ellps="WGS84")


def pairwise_ratio(net: Network) -> np.ndarray:
    """Projected over geodesic distance for every pair of cells (measured positions)."""
    lon, lat = net.cells["lon"].to_numpy(), net.cells["lat"].to_numpy()
    i, j = np.triu_indices(len(lon), 1)
    _, _, geodesic_m = GEOD.inv(lon[i], lat[i], lon[j], lat[j])
    far = geodesic_m > 1.0  # coincident points (corners clipped at a pole) have no ratio
    xy = xy_m(net)
    return np.hypot(*(xy[i] - xy[j]).T)[far] / geodesic_m[far]


def cloud(lon0: float, lat0: float, half_lon: float, half_lat: float, n: int = 30,
          seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Random points in a lon/lat box plus its corners [degrees], longitudes wrapped."""
    rng = np.random.default_rng(seed)
    lon = lon0 + np.r_[rng.uniform(-half_lon, half_lon, n), -half_lon, half_lon, -half_lon,
                       half_lon]
    lat = lat0 + np.r_[rng.uniform(-half_lat, half_lat, n), -half_lat, -half_lat, half_lat,
                       half_lat]
    return (lon + 180.0) % 360.0 - 180.0, np.clip(lat, -90.0, 90.0)


@pytest.mark.parametrize(
    ("box", "projection"),
    [
        ((-122.4, 37.75, 0.1, 0.05), "utm"),  # a city
        ((-118.0, 36.0, 6.0, 4.0), "utm"),  # California: three UTM zones
        ((10.0, 50.0, 9.0, 6.0), "utm"),  # central Europe, about 1,300 km wide
        ((10.0, 0.0, 11.0, 8.0), "aeqd"),  # equatorial Africa: too wide for UTM
        ((179.5, -17.5, 2.0, 1.5), "utm"),  # Fiji, across the antimeridian
        ((0.0, 88.0, 180.0, 2.0), "aeqd"),  # around the North Pole
    ],
)
def test_default_projection_keeps_distances(tmp_path, box, projection):
    lon, lat = cloud(*box)
    path = write_csv(tmp_path / "cells.csv", lon=lon, lat=lat)
    net = read_cells(path, check_land=False)  # random boxes, partly at sea
    if projection == "utm":
        assert net.crs.utm_zone is not None
    else:
        assert net.crs.coordinate_operation.method_name == "Azimuthal Equidistant"
    ratio = pairwise_ratio(net)
    assert np.abs(ratio - 1).max() <= 0.01


def test_default_projection_unchanged_for_utm_data(tmp_path):
    lon, lat = lonlat([0.0, 5e4, -3e4], [0.0, 2e4, 8e4])
    net = read_cells(write_csv(tmp_path / "cells.csv", lon=lon, lat=lat))
    assert net.crs.to_epsg() == 32610
    np.testing.assert_allclose(xy_m(net), np.column_stack([X0 + np.array([0.0, 5e4, -3e4]),
                                                          Y0 + np.array([0.0, 2e4, 8e4])]),
                               rtol=0, atol=1e-6)


def test_two_continents_refused(tmp_path):
    path = write_csv(tmp_path / "cells.csv", cell_id=["sf", "syd"], lon=[-122.42, 151.21],
                     lat=[37.77, -33.87])
    with pytest.raises(ValidationError) as info:
        read_cells(path)
    text = str(info.value)
    assert text.startswith("cells.csv: the cells span lon [151.21, -122.42] (across the "
                           "antimeridian), lat [-33.87, 37.77], up to ")
    assert "no single local projection keeps their distances within 1%" in text
    assert "fix: split the data by region" in text and "or pass crs=" in text
    # The escape hatch: an explicit CRS is used as it is, with a warning where it distorts.
    with pytest.warns(UserWarning, match=r"scales distances at rows \[0\] \(ids \['sf'\]\)"):
        net = read_cells(path, crs="EPSG:32756")
    assert net.n_cells == 2


@settings(max_examples=15, deadline=None)
@given(lon0=st.floats(-180, 180), lat0=st.floats(-89, 89),
       half_lon=st.floats(0.001, 40), half_lat=st.floats(0.001, 30))
@pytest.mark.slow
def test_default_projection_property(lon0, lat0, half_lon, half_lat):
    """Any lon/lat box: either every distance is within 1 % or the data is refused."""
    lon, lat = cloud(lon0, lat0, half_lon, half_lat, n=8)
    with tempfile.TemporaryDirectory() as folder:
        path = write_csv(Path(folder) / "cells.csv", lon=lon, lat=lat)
        try:
            net = read_cells(path, check_land=False)  # anywhere, at sea too
        except ValidationError as exc:
            assert "no single local projection keeps their distances within 1%" in str(exc)
            return
    assert np.abs(pairwise_ratio(net) - 1).max() <= 0.01


def test_a_cell_file_read_from_python_takes_users_in_the_region_of_cellopt_run(tmp_path):
    """`read_cells` then `drop_users(net, 500)` failed with "the network has no region",
    while `cellopt run` of the same file used the sites' outline plus 500 m."""
    from cellopt.study.builders import file_network
    from cellopt.topology import drop_users

    lon, lat = lonlat([0.0, 1500.0, 0.0, 1500.0], [0.0, 0.0, 1200.0, 1200.0])
    path = write_csv(tmp_path / "cells.csv", lon=lon, lat=lat, cell_id=[1, 2, 3, 4])
    net = read_cells(path)
    assert net.region is None
    users = drop_users(net, 500, rng=0)
    assert users.n_users == 500
    assert users.region.equals(file_network(str(path)).region)  # the CLI's file builder
