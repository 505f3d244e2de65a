"""Real-city scenarios: sectorized sites, a study window with a guard band, stand-ins."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import pytest
import shapely
from helpers import ROOT

from cellopt import ValidationError, topology
from cellopt.study.capacity import pooled_rates_mbps
from cellopt.study.scenario import SHIPPED_DIR, load_scenario
from cellopt.study.sweep import load_rates, run_sweep
from cellopt.topology.cellfiles import OPENCELLID_COLUMNS

SF_CSV = (ROOT.parent / "shared" / "data"
          / "opencellid_sf_verizon_lte.csv")
TOPOLOGIES = SHIPPED_DIR
UTM = "EPSG:32610"
X0, Y0 = 550_000.0, 4_180_000.0
SPACING_M = 300.0


def write_grid_extract(path: Path, n: int = 7) -> Path:
    """An OpenCelliD-schema CSV: an n × n grid of LTE eNBs 300 m apart, 3 measured cells
    each (cell = eNB·256 + k) scattered 10 m around the site."""
    rng = np.random.default_rng(0)
    ix, iy = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(n)))
    enb = np.repeat(1000 + np.arange(n * n), 3)
    x = X0 + np.repeat(ix * SPACING_M, 3) + rng.uniform(-10, 10, enb.size)
    y = Y0 + np.repeat(iy * SPACING_M, 3) + rng.uniform(-10, 10, enb.size)
    lon, lat = pyproj.Transformer.from_crs(UTM, "EPSG:4326", always_xy=True).transform(x, y)
    frame = pd.DataFrame({
        "radio": "LTE", "mcc": 311, "net": 480, "area": 9728,
        "cell": enb * 256 + np.tile(np.arange(3), n * n), "unit": 0, "lon": lon, "lat": lat,
        "range": 1000, "samples": 10, "changeable": 1, "created": 1_458_613_761,
        "updated": 1_491_242_559, "averageSignal": 0,
    })
    frame[list(OPENCELLID_COLUMNS)].to_csv(path, index=False)
    return path


def lonlat_box(x0: float, y0: float, x1: float, y1: float) -> list[float]:
    to = pyproj.Transformer.from_crs(UTM, "EPSG:4326", always_xy=True)
    (lon0, lon1), (lat0, lat1) = to.transform([x0, x1], [y0, y1])
    return [lon0, lat0, lon1, lat1]


# The middle 600 m × 600 m of the 1.8 km grid: 3 × 3 sites (+ edges) inside.
WINDOW = lonlat_box(X0 + 590, Y0 + 590, X0 + 1210, Y0 + 1210)


@pytest.fixture
def extract(tmp_path) -> Path:
    return write_grid_extract(tmp_path / "cells.csv")


def scenario_text(extract: Path, network_extra: str = "", users: str = "n = 300") -> str:
    return f"""
name = "grid_city"
methods = ["max_rsrp", "alm"]
[network]
builder = "file"
path = "{extract.name}"
sectors = 3
{network_extra}
[femtocells]
adoption = 0.1
backhaul_mbps = 5.0
[users]
{users}
indoor_fraction = 0.8
[seeds]
base = 2
"""


# ---------------------------------------------------------------------- sectorize
def test_sectorize_gives_omni_sites_three_sectors(extract):
    net = topology.read_cells(extract)
    assert net.n_cells == 147 and net.cells["site_id"].nunique() == 49
    sect = topology.sectorize(net, 3)
    assert sect.n_cells == 147 and sect.cells["site_id"].nunique() == 49
    per_site = sect.cells.groupby("site_id")["azimuth_deg"].apply(sorted)
    assert all(np.allclose(a, [30.0, 150.0, 270.0]) for a in per_site)
    assert sect.cells["cell_id"].is_unique
    assert (sect.cells["antenna_gain_dbi"] == 14.0).all()
    # The three sectors sit at their site's (clustered) position.
    first = net.cells.drop_duplicates("site_id").set_index("site_id").geometry
    pos = sect.cells.set_index("site_id").geometry
    assert (pos.distance(first.loc[pos.index]) < 1e-9).all()


def test_sectorize_keeps_sites_with_azimuths(extract):
    net = topology.read_cells(extract)
    cells = net.cells.copy()
    site0 = cells["site_id"] == cells["site_id"].iloc[0]
    cells.loc[site0, "azimuth_deg"] = [10.0, 100.0, 200.0]
    out = topology.sectorize(net.replace(cells=cells), 4)
    kept = out.cells[out.cells["site_id"] == cells["site_id"].iloc[0]]
    assert sorted(kept["azimuth_deg"]) == [10.0, 100.0, 200.0]
    assert len(out.cells) == 3 + 48 * 4
    with pytest.raises(ValidationError, match="sectors=0"):
        topology.sectorize(net, 0)


# ---------------------------------------------------------------------- study window
def test_study_window_keeps_guard_cells_and_counts_inside_users(extract):
    net = topology.sectorize(topology.read_cells(extract), 3)
    win = topology.study_window(net, WINDOW, guard_m=300.0)
    x = win.cells.geometry.x.to_numpy() - X0
    y = win.cells.geometry.y.to_numpy() - Y0
    # Sites at 300..1500 m on both axes are within 300 m of the window (590..1210 m).
    assert set(np.round(x / SPACING_M).astype(int)) == {1, 2, 3, 4, 5}
    assert set(np.round(y / SPACING_M).astype(int)) == {1, 2, 3, 4, 5}
    assert win.n_cells == 3 * 25 - 3 * 4  # the 4 corner sites are farther than 300 m
    assert win.study_area.area == pytest.approx(620.0 ** 2, rel=1e-3)
    assert win.area_km2 == pytest.approx((620 ** 2 + 4 * 620 * 300 + np.pi * 300 ** 2) / 1e6,
                                         rel=1e-3)
    # A metric square: users inside it (edges included) are the study users.
    square = topology.study_window(net, shapely.box(X0 + 590, Y0 + 590, X0 + 1210, Y0 + 1210),
                                   guard_m=300.0)
    users = topology.drop_users(square, 2000, rng=1)
    users = users.add_users(users.users.iloc[:1].assign(geometry=[shapely.Point(X0 + 590, Y0 + 700)]))
    inside = users.in_study_area()
    ux = users.users.geometry.x.to_numpy() - X0
    uy = users.users.geometry.y.to_numpy() - Y0
    np.testing.assert_array_equal(inside, (ux >= 590) & (ux <= 1210) & (uy >= 590) & (uy <= 1210))
    assert inside[-1] and 0.2 < inside.mean() < 0.4  # 0.38 km² of 1.29 km²


def test_study_window_from_polygon_and_bad_areas(extract, tmp_path):
    net = topology.read_cells(extract)
    square = shapely.box(X0 + 590, Y0 + 590, X0 + 1210, Y0 + 1210)
    a = topology.study_window(net, square, guard_m=0.0)
    assert a.region.equals(square) and a.n_cells == 3 * 9  # 3 × 3 sites of 3 cells inside
    geo = gpd.GeoSeries([square], crs=UTM).to_crs("EPSG:4326")
    b = topology.study_window(net, geo, guard_m=0.0)
    assert b.n_cells == a.n_cells
    with pytest.raises(ValidationError, match="holds none of the 147 cells"):
        topology.study_window(net, [0.0, 0.0, 0.01, 0.01])
    with pytest.raises(ValidationError, match="lon_min, lat_min, lon_max, lat_max"):
        topology.study_window(net, [-122.3, 37.8, -122.4, 37.9])
    with pytest.raises(ValidationError, match="lon_min"):
        topology.study_window(net, "downtown")
    with pytest.raises(ValidationError, match="guard_m"):
        topology.study_window(net, square, guard_m=-1.0)
    with pytest.raises(ValidationError, match="no CRS"):
        topology.study_window(net, gpd.GeoSeries([square]))
    with pytest.raises(ValidationError, match="positive area"):
        topology.study_window(net, shapely.Point(X0, Y0))


def test_window_scenario_statistics_leave_out_the_guard_band(extract, tmp_path):
    extra = f"window = {WINDOW}\nguard_m = 300.0"
    path = tmp_path / "city.toml"
    path.write_text(scenario_text(extract, extra))
    scen = load_scenario(path)
    net = scen.build(scen.seeds[0]).network  # drop 0, as the sweep builds it
    study = net.in_study_area()
    assert 0 < study.sum() < net.n_users  # users everywhere, the window's counted
    femto = net.cells[net.cells["tier"] == "femto"]
    assert len(femto) and not shapely.intersects_xy(
        net.study_area, femto.geometry.x, femto.geometry.y).all()  # femtocells in the guard too
    # A sweep and the capacity metric count the window's users only.
    index = run_sweep(scen, tmp_path / "sweep", progress=False)
    assert (index["n_users"] == study.sum()).all()
    rates = load_rates(tmp_path / "sweep", "g000", 0)
    assert len(rates) == study.sum()
    pooled, n = pooled_rates_mbps(scen, 300 / net.area_km2, [scen.seed_base], "max_rsrp")
    assert n == len(pooled) < 300


def test_area_file_scenario(extract, tmp_path):
    square = shapely.box(X0 + 590, Y0 + 590, X0 + 1210, Y0 + 1210)
    gpd.GeoDataFrame(geometry=[square], crs=UTM).to_crs("EPSG:4326").to_file(
        tmp_path / "downtown.geojson")
    path = tmp_path / "area.toml"
    path.write_text(scenario_text(extract, 'area = "downtown.geojson"\nguard_m = 300.0'))
    net = load_scenario(path).build().network
    assert net.study_area.area == pytest.approx(square.area, rel=1e-6)
    both = scenario_text(extract, f'area = "downtown.geojson"\nwindow = {WINDOW}')
    path.write_text(both)
    with pytest.raises(ValidationError, match="both 'window' and 'area'"):
        load_scenario(path)
    path.write_text(scenario_text(extract, 'area = "nowhere.geojson"'))
    with pytest.raises(ValidationError, match=r"nowhere\.geojson"):
        load_scenario(path).build()


def test_missing_data_names_the_stand_in(tmp_path):
    (tmp_path / "stand_in.toml").write_text(
        '[network]\nbuilder = "hex_grid"\nn_rings = 1\n[users]\nn = 20\n')
    path = tmp_path / "real.toml"
    path.write_text(scenario_text(tmp_path / "absent.csv", 'stand_in = "stand_in.toml"'))
    scen = load_scenario(path)
    assert scen.data_missing
    with pytest.raises(ValidationError, match=r"absent\.csv does not exist.*stand_in\.toml"):
        scen.build()
    with pytest.warns(UserWarning, match="absent"):
        stand_in = load_scenario(path, use_stand_in=True)
    assert stand_in.path == tmp_path / "stand_in.toml" and not stand_in.data_missing


# ---------------------------------------------------------------------- the SF scenario
def test_sf_scenario_builds():
    scen = load_scenario(TOPOLOGIES / "sf_femto.toml")
    if scen.data_missing:
        pytest.skip(f"shared data not found at {SF_CSV}")
    drop = scen.build()
    net, problem = drop.network, drop.problem
    macro = net.cells[net.cells["tier"] == "macro"]
    assert macro["site_id"].nunique() == 147 and len(macro) == 3 * 147
    assert net.study_area.area / 1e6 == pytest.approx(1.76, abs=0.01)
    assert net.area_km2 == pytest.approx(5.19, abs=0.01)
    assert problem.third_party.sum() == (net.cells["owner"] == "third_party").sum() > 0


def test_shipped_stand_in_matches_the_sf_scenario():
    sf = load_scenario(TOPOLOGIES / "sf_femto.toml")
    city = load_scenario(TOPOLOGIES / "city_synthetic.toml")
    assert sf.network["stand_in"] == str(TOPOLOGIES / "city_synthetic.toml")
    assert sf.femtocells == city.femtocells and sf.radio == city.radio
    assert sf.users == city.users and sf.problem == city.problem
