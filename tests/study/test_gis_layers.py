"""results.gpkg as a GIS user opens it: a layer per method and kind, association lines to
the nearest wraparound image, sector wedges, the study area and region, no infinities."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
import shapely

from cellopt import topology
from cellopt.radio import RadioModel
from cellopt.study import load_scenario, run_scenario
from cellopt.study.gis import (
    ASSOCIATION_COLUMNS,
    DEFAULT_BEAMWIDTH_DEG,
    FALLBACK_SITE_DISTANCE_M,
    SECTOR_RADIUS_SHARE,
    gis_layers,
    layer_suffixes,
    sector_wedges,
    write_geopackage,
)
from cellopt.study.tables import power_patterns

ISD_M = 500.0
#: A wrapped 7-site hex grid with picos (omni cells), a label to sanitise, and full-buffer
#: users (demand inf) on macros with unlimited backhaul (inf).
SCENARIO = f"""
name = "gis"
methods = ["max_rsrp", {{name = "alm", label = "ALM (opt)"}}]

[network]
builder = "hex_grid"
n_rings = 1
isd_m = {ISD_M}

[picos]
per_sector = 1

[users]
n = 150

[radio]
n_candidates = 4

[seeds]
base = 4

[deploy]  # fitted on few drops: the layers are what is checked here
training_drops = 2
held_out_drops = 1
"""
#: The methods, then the deployable settings fitted to the optimizer (docs/deploy.md).
METHODS = {"max_rsrp": "max_rsrp", "ALM (opt)": "alm_opt", "per-cell offsets": "per_cell_offsets",
           "best per-tier bias": "best_per_tier_bias"}
LAYERS = [*(f"{kind}_{s}" for kind in ("users", "cells", "association") for s in METHODS.values()),
          "sectors", "region", "methods"]


@pytest.fixture(scope="module")
def gis_run(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("gis")
    path = folder / "gis.toml"
    path.write_text(SCENARIO, encoding="utf-8")
    return run_scenario(load_scenario(path), folder / "out", report=False)


def gpkg(run) -> Path:
    return run.files[0].parent / "results.gpkg"


def xy(geometry: gpd.GeoSeries) -> np.ndarray:
    return np.column_stack([geometry.x.to_numpy(float), geometry.y.to_numpy(float)])


def test_layer_suffixes_are_safe_unique_names():
    labels = ["max_rsrp", "RE 6 dB", "re-6-db", "re_6_db_2", "power (ipm)", "Ünïcode!", "!!", ""]
    assert layer_suffixes(labels) == {
        "max_rsrp": "max_rsrp", "RE 6 dB": "re_6_db", "re-6-db": "re_6_db_2",
        "re_6_db_2": "re_6_db_2_2", "power (ipm)": "power_ipm", "Ünïcode!": "n_code",
        "!!": "method", "": "method_2"}


@pytest.mark.slow
def test_a_layer_per_method_and_kind(gis_run):
    assert list(pyogrio.list_layers(gpkg(gis_run))[:, 0]) == LAYERS
    methods = pyogrio.read_dataframe(gpkg(gis_run), layer="methods")
    assert list(methods["method"]) == list(METHODS)
    assert list(methods["users_layer"]) == [f"users_{s}" for s in METHODS.values()]
    assert methods["power_patterns_layer"].isna().all()
    net = gis_run.drop.network
    for label, suffix in METHODS.items():
        users = gpd.read_file(gpkg(gis_run), layer=f"users_{suffix}")
        cells = gpd.read_file(gpkg(gis_run), layer=f"cells_{suffix}")
        assert list(users["user_id"]) == list(net.users["user_id"])   # one row per user
        assert list(cells["cell_id"]) == list(net.cells["cell_id"])
        assert "method" not in users.columns and "method" not in cells.columns
        np.testing.assert_array_equal(users["rate_mbps"],
                                      gis_run.drop.per_user(gis_run.solutions[label].user_rate_mbps))
    with sqlite3.connect(gpkg(gis_run)) as db:  # written in one chunk: a spatial index each
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {f"rtree_{name}_geom" for name in LAYERS if name != "methods"} <= tables


def test_association_lines_end_at_the_nearest_image_of_the_serving_cell(gis_run):
    net, drop = gis_run.drop.network, gis_run.drop
    shifts = net.wrap_shifts_m
    assert shifts is not None and len(shifts) == 7
    # the cluster repeats every |shift|; every point is within |shift|/√3 of an image of any cell
    reach = np.linalg.norm(shifts[1]) / np.sqrt(3.0)
    cell_xy, user_xy = xy(net.cells.geometry), xy(net.users.geometry)
    longer = 0
    for label, suffix in METHODS.items():
        lines = gpd.read_file(gpkg(gis_run), layer=f"association_{suffix}")
        serving = drop.per_user(gis_run.solutions[label].serving_cell, fill=-1)
        served = np.flatnonzero(serving >= 0)
        assert len(served) > 100 and list(lines["user_id"]) == list(net.users["user_id"].iloc[served])
        assert list(lines.columns) == [*(c.name for c in ASSOCIATION_COLUMNS), "geometry"]
        cells = serving[served]
        np.testing.assert_array_equal(lines["serving_cell_id"], net.cells["cell_id"].to_numpy()[cells])
        np.testing.assert_array_equal(lines["serving_tier"], net.cells["tier"].to_numpy()[cells])
        coords = shapely.get_coordinates(lines.geometry.to_numpy()).reshape(-1, 2, 2)
        np.testing.assert_allclose(coords[:, 0], user_xy[served])
        # the end is an image of the serving cell, the one nearest to the user
        images = cell_xy[cells][:, None, :] + shifts[None, :, :]                 # (n, 7, 2)
        to_images = np.linalg.norm(images - user_xy[served][:, None, :], axis=2)
        end_off = np.linalg.norm(images - coords[:, 1][:, None, :], axis=2).min(axis=1)
        np.testing.assert_allclose(end_off, 0.0, atol=1e-6)
        np.testing.assert_allclose(lines["length_m"], to_images.min(axis=1), rtol=1e-9)
        np.testing.assert_allclose(lines["length_m"], lines.geometry.length, rtol=1e-9)
        assert (lines["length_m"] <= reach + 1e-6).all()
        direct = np.linalg.norm(cell_xy[cells] - user_xy[served], axis=1)
        longer += int((direct > reach).sum())
    assert longer > 0  # lines drawn to the cells themselves would cross the layout


def test_sector_wedges_open_around_the_boresight(gis_run):
    net = gis_run.drop.network
    wedges = gpd.read_file(gpkg(gis_run), layer="sectors")
    sectorised = net.cells[np.isfinite(net.cells["azimuth_deg"])]
    assert (net.cells["tier"] == "pico").any() and len(sectorised) < net.n_cells  # picos: omni
    assert list(wedges["cell_id"]) == list(sectorised["cell_id"])
    assert list(wedges.columns) == ["cell_id", "site_id", "tier", "azimuth_deg", "beamwidth_deg",
                                    "radius_m", "geometry"]
    np.testing.assert_allclose(wedges["beamwidth_deg"], RadioModel().theta_3db_deg)
    np.testing.assert_allclose(wedges["radius_m"], SECTOR_RADIUS_SHARE * ISD_M)
    assert shapely.is_valid(wedges.geometry.to_numpy()).all()
    assert shapely.is_ccw(shapely.get_exterior_ring(wedges.geometry.to_numpy())).all()
    centre, radius = xy(sectorised.geometry), wedges["radius_m"].to_numpy()
    azimuth, half = wedges["azimuth_deg"].to_numpy(), wedges["beamwidth_deg"].to_numpy() / 2

    def at(bearing_deg: np.ndarray, share: float) -> tuple[np.ndarray, np.ndarray]:
        b = np.radians(bearing_deg)
        return (centre[:, 0] + share * radius * np.sin(b), centre[:, 1] + share * radius * np.cos(b))

    polygons = wedges.geometry.to_numpy()
    assert shapely.contains_xy(polygons, *at(azimuth, 0.05)).all()        # just in front
    assert shapely.contains_xy(polygons, *at(azimuth, 0.95)).all()
    assert not shapely.contains_xy(polygons, *at(azimuth + 180.0, 0.05)).any()  # behind
    assert not shapely.contains_xy(polygons, *at(azimuth, 1.05)).any()    # beyond the radius
    for side in (-1.0, 1.0):
        assert shapely.contains_xy(polygons, *at(azimuth + side * (half - 3.0), 0.5)).all()
        assert not shapely.contains_xy(polygons, *at(azimuth + side * (half + 3.0), 0.5)).any()


def test_a_wedge_takes_the_cells_beamwidth_else_the_models():
    net = topology.hex_grid(n_rings=0)             # one site: the fallback site distance
    cells = net.cells.assign(beamwidth_deg=[30.0, np.nan, 0.0])
    wedges = sector_wedges(net.replace(cells=cells), RadioModel(theta_3db_deg=80.0))
    np.testing.assert_allclose(wedges["beamwidth_deg"], [30.0, 80.0, 80.0])
    np.testing.assert_allclose(wedges["radius_m"], SECTOR_RADIUS_SHARE * FALLBACK_SITE_DISTANCE_M)
    np.testing.assert_allclose(shapely.area(wedges.geometry.to_numpy()),
                               np.pi * wedges["radius_m"] ** 2 * wedges["beamwidth_deg"] / 360.0,
                               rtol=2e-3)  # 17 points on the arc
    for model in (None, RadioModel(antenna="tr38901")):  # no model; the 3-D element's 65°
        np.testing.assert_allclose(sector_wedges(net, model)["beamwidth_deg"],
                                   DEFAULT_BEAMWIDTH_DEG)
    no_sectors = net.replace(cells=net.cells.assign(azimuth_deg=np.nan))
    assert len(sector_wedges(no_sectors)) == 0


@pytest.mark.slow
def test_study_area_and_region_layers(gis_run, tmp_path):
    net, drop = gis_run.drop.network, gis_run.drop
    region = gpd.read_file(gpkg(gis_run), layer="region")
    assert len(region) == 1 and region.geometry.iloc[0].equals(net.region)
    assert region["area_km2"].iloc[0] == pytest.approx(net.region.area / 1e6)
    assert "study_area" not in pyogrio.list_layers(gpkg(gis_run))[:, 0]  # the hex grid has none
    # a network with a study area: its layer comes before the region's
    area = shapely.box(*net.region.centroid.buffer(400.0).bounds)
    with_area = dataclasses.replace(drop, network=net.replace(study_area=area))
    columns = {label: drop.user_columns(sol) for label, sol in gis_run.solutions.items()}
    layers = gis_layers(with_area, columns, gis_run.cells, power_patterns(drop, gis_run.solutions),
                        10**6)
    write_geopackage(tmp_path / "area.gpkg", layers)
    names = list(pyogrio.list_layers(tmp_path / "area.gpkg")[:, 0])
    assert names == [*LAYERS[:-2], "study_area", "region", "methods"]
    study = gpd.read_file(tmp_path / "area.gpkg", layer="study_area")
    assert len(study) == 1 and study["area_km2"].iloc[0] == pytest.approx(0.64)


def test_no_infinity_in_any_layer_null_instead(gis_run):
    out = gpkg(gis_run)
    for name in pyogrio.list_layers(out)[:, 0]:
        frame = pyogrio.read_dataframe(out, layer=name)
        numbers = frame.select_dtypes("number")
        assert not np.isinf(numbers.to_numpy(float)).any(), name
    with sqlite3.connect(out) as db:  # and none stored: SQLite keeps inf as a REAL
        for (name,) in db.execute("SELECT table_name FROM gpkg_contents").fetchall():
            for column in [r[1] for r in db.execute(f'PRAGMA table_info("{name}")')]:
                big = db.execute(f'SELECT COUNT(*) FROM "{name}" WHERE abs("{column}") > 1.7e308'
                                 ).fetchone()[0]
                assert big == 0, (name, column)
    # what was inf is null: unlimited backhaul, full-buffer demand; the CSVs keep inf
    cells = gpd.read_file(out, layer="cells_max_rsrp")
    users = gpd.read_file(out, layer="users_max_rsrp")
    net = gis_run.drop.network
    unlimited = np.isinf(net.cells["backhaul_mbps"].to_numpy(float))
    assert unlimited.any() and np.array_equal(cells["backhaul_mbps"].isna(), unlimited)
    assert np.isinf(net.users["demand_mbps"]).all() and users["demand_mbps"].isna().all()
    csv = pd.read_csv(out.parent / "cell_stats.csv")
    assert np.isinf(csv["backhaul_mbps"]).sum() == len(METHODS) * unlimited.sum()


@pytest.mark.slow
def test_the_chunked_path_writes_the_same_layers(gis_run, tmp_path, monkeypatch):
    import cellopt.study.run as run_module

    monkeypatch.setattr(run_module, "CHUNK_USERS", 40)   # 150 users: 4 chunks per method
    streamed = run_scenario(gis_run.scenario, tmp_path / "streamed", report=False)
    assert streamed.users is None
    path = tmp_path / "streamed" / "results.gpkg"
    assert list(pyogrio.list_layers(path)[:, 0]) == LAYERS
    for name in LAYERS:
        pd.testing.assert_frame_equal(pyogrio.read_dataframe(path, layer=name),
                                      pyogrio.read_dataframe(gpkg(gis_run), layer=name), obj=name)
    with sqlite3.connect(path) as db:  # layers of several chunks get no spatial index
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    chunked = {n for n in LAYERS if n.startswith(("users_", "association_"))}
    assert not {f"rtree_{n}_geom" for n in chunked} & tables
    assert {f"rtree_{n}_geom" for n in LAYERS if n not in chunked | {"methods"}} <= tables
