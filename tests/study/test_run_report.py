"""What ``cellopt run`` tells a planner beyond the tables: where the network lies, the
traffic model, how a cell file was read, coverage GeoTIFFs, and a report that shows them."""

from __future__ import annotations

import json
import re

import numpy as np
import pyproj
import pytest
import rasterio

from cellopt.study import load_scenario, run_scenario
from cellopt.study.rasters import COVERAGE_FILES

# Two three-sector sites in Lyon, the header of a vendor export.
CELLS = """\
NodeB Name,Cell Name,LAT_WGS84,LONG_WGS84,Azimuth (deg),Antenna Height [m],EIRP_dBm,Antenna Gain (dBi)
LYO1,LYO1_1,45.7640,4.8357,0,30,60,17
LYO1,LYO1_2,45.7640,4.8357,120,30,60,17
LYO1,LYO1_3,45.7640,4.8357,240,30,60,17
LYO2,LYO2_1,45.7700,4.8500,30,25,58,15
LYO2,LYO2_2,45.7700,4.8500,150,25,58,15
LYO2,LYO2_3,45.7700,4.8500,270,25,58,15
"""
SCENARIO = """methods = ["max_rsrp", "dual"]
[network]
builder = "file"
path = "lyon.csv"
[users]
n = 80
{demand}
[coverage]
resolution_m = 50.0
[seeds]
base = 2
[deploy]
training_drops = 2
held_out_drops = 1
"""


@pytest.fixture(scope="module")
def file_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lyon")
    (folder / "lyon.csv").write_text(CELLS)
    (folder / "lyon.toml").write_text(SCENARIO.format(demand=""))
    return run_scenario(load_scenario(folder / "lyon.toml"), folder / "out")


def _page(run) -> str:
    return (run.files[0].parent / "report.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_report_says_where_and_how_the_file_was_read(file_run):
    assert "Lyon" in file_run.place and "France" in file_run.place
    assert [r.file for r in file_run.readings] == ["lyon.csv"]
    page = _page(file_run)
    assert "How the columns of lyon.csv were read" in page
    assert "NodeB Name" in page and "EIRP [dBm] − &#x27;Antenna Gain (dBi)&#x27;" in page
    assert "where: centre 45.76" in page
    assert "traffic: full buffer" in page


def test_full_buffer_offers_no_load_colouring(file_run):
    """Load is 1 by construction under full buffer: the map offers numbers that differ."""
    page = _page(file_run)
    assert 'data-toggle="by-load"' not in page and 'data-toggle="by-overload"' not in page
    assert 'data-toggle="by-users"' in page and 'data-toggle="by-best"' in page


@pytest.mark.slow
def test_demands_offer_load_and_overload(tmp_path):
    (tmp_path / "lyon.csv").write_text(CELLS)
    (tmp_path / "lyon.toml").write_text(SCENARIO.format(demand="demand_mbps = 40.0"))
    run = run_scenario(load_scenario(tmp_path / "lyon.toml"), tmp_path / "out")
    page = _page(run)
    assert "traffic: finite demands (mean 40 Mbit/s" in page
    assert 'data-toggle="by-load"' in page and 'data-toggle="by-overload"' in page


def test_the_geotiffs_are_the_coverage_map(file_run):
    cov = file_run.coverage
    out = file_run.files[0].parent
    for quantity, name in COVERAGE_FILES.items():
        with rasterio.open(out / name) as raster:
            assert pyproj.CRS(raster.crs.to_wkt()) == cov.crs == file_run.drop.network.crs
            assert (raster.height, raster.width) == cov.shape
            assert raster.res == (50.0, 50.0)
            values = raster.read(1)
            expected = cov.quantity(quantity)
            assert np.array_equal(values, expected, equal_nan=True)
            assert raster.tags()["SOFTWARE"].startswith("cellopt ")
    assert cov.method == "dual"
    served = cov.best_server[cov.best_server >= 0]
    assert served.size and served.max() < file_run.drop.network.n_cells


def test_the_report_shows_every_method_and_the_coverage(file_run):
    page = _page(file_run)
    data = json.loads(re.search(r'<script type="application/json" id="map-data">(.*?)</script>',
                                page, re.DOTALL).group(1).replace("\\u003c", "<"))
    assert [m["name"] for m in data["methods"]] == ["max_rsrp", "dual", "per-cell offsets",
                                                    "best per-tier bias"]
    assert page.count('href="data:image/png;base64,') == 4  # best server, RSRP, SINR, rate
    assert "region" in page  # the region's outline


@pytest.mark.slow
def test_switching_coverage_off_removes_the_geotiffs(tmp_path):
    (tmp_path / "lyon.csv").write_text(CELLS)
    (tmp_path / "lyon.toml").write_text(SCENARIO.format(demand=""))
    scenario = load_scenario(tmp_path / "lyon.toml")
    run_scenario(scenario, tmp_path / "out", report=False)
    assert all((tmp_path / "out" / name).is_file() for name in COVERAGE_FILES.values())
    with pytest.warns(UserWarning, match="enabled = false, so resolution_m is not used"):
        off = scenario.with_overrides(coverage={"enabled": False})
    again = run_scenario(off, tmp_path / "out", report=False)
    assert again.coverage is None
    assert sorted(p.name for p in again.removed) == sorted(COVERAGE_FILES.values())
