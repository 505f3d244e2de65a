"""Coverage maps (cellopt.coverage) and their GeoTIFF files (cellopt.study.rasters).

Hand-checked: two omni cells on a line with the TR 36.814 macro path loss and Shannon
rates, no random term in the map (its model is the median one), so that the best
server, its RSRP and SINR and a new user's rate at a pixel are a few lines of
arithmetic; then the grid (area, nodata, coarsening), determinism, the files, the
argument checks and the scenario's [coverage] section.
"""

from __future__ import annotations

import dataclasses
import math
import textwrap

import numpy as np
import pyproj
import pytest
import rasterio
import shapely
from helpers import ROOT
from helpers.checks import failing_raster_open, gdal_write_failed
from rasterio.transform import Affine

import cellopt.coverage as coverage_module
import cellopt.coverage_grid as coverage_grid_module
from cellopt import Drop, ValidationError, radio
from cellopt.coverage import (
    COVERAGE_QUANTITIES,
    CoverageSettings,
    coverage_map,
    median_model,
    new_user_rate_mbps,
)
from cellopt.coverage_grid import auto_resolution_m, coverage_area
from cellopt.linktable import LinkTable
from cellopt.network import Network, cells_frame, users_frame
from cellopt.power import ColumnGenerationOptions, PowerProblem, solve_power
from cellopt.radio import RadioModel, ThreeGPP, tr36814_pico
from cellopt.study.rasters import COVERAGE_FILES, write_geotiff
from cellopt.study.scenario import load_scenario

X0, Y0 = 500_000.0, 1_000_000.0  # a multiple of every resolution used here
CRS = "EPSG:32631"
NOISE_DBM = -174.0 + 10 * math.log10(10e6) + 9.0  # 10 MHz, NF 9 dB
RSRP_OFFSET_DB = 10 * math.log10(600)  # LTE 10 MHz: 50 RB × 12 subcarriers
MODEL = RadioModel(spectral_efficiency="shannon")  # shadowing 8 dB: the map drops it


def two_cells(area=None, *, resource_mhz=None, alpha=1.0, model=MODEL, seed=3) -> Drop:
    """Omni macros at (0, 0) and (1000, 0) m, 46 dBm, 0 dBi, three users between them."""
    cells = cells_frame([X0, X0 + 1000.0], [Y0, Y0], crs=CRS, tier="macro", tx_power_dbm=46.0,
                        antenna_gain_dbi=0.0, cell_id=np.array(["west", "east"]))
    users = users_frame(X0 + np.array([200.0, 500.0, 800.0]), np.full(3, Y0 + 30.0), crs=CRS)
    area = shapely.box(X0 - 200, Y0 - 100, X0 + 1200, Y0 + 100) if area is None else area
    net = Network(cells=cells, users=users, bandwidth_mhz=10.0, resource_mhz=resource_mhz,
                  study_area=area).validate()
    return Drop.from_network(net, radio.link_table(net, model=model, rng=seed), alpha=alpha)


def pathloss_db(d_m: float) -> float:
    return 128.1 + 37.6 * math.log10(max(d_m, 35.0) / 1000.0)  # TR 36.814 macro


def by_hand(x: float, y: float) -> dict[str, np.ndarray]:
    """Received power [dBm], SINR [dB] and Shannon rate [Mbit/s] of both cells at (x, y)."""
    rx = np.array([46.0 - pathloss_db(math.hypot(x - cx, y - Y0)) for cx in (X0, X0 + 1000.0)])
    mw = 10 ** (rx / 10)
    sinr = 10 * np.log10(mw / (10 ** (NOISE_DBM / 10) + mw[::-1]))
    return {"rx": rx, "sinr": sinr, "rate": 10.0 * np.log2(1 + 10 ** (sinr / 10))}


def with_prices(drop: Drop, airtime, backhaul=None):
    """A solution of `drop` whose prices are the given ones."""
    solution = drop.solve("dual")
    n = drop.network.n_cells
    prices = {"airtime": np.asarray(airtime, float).reshape(n, -1),
              "backhaul": np.zeros(n) if backhaul is None else np.asarray(backhaul, float)}
    return dataclasses.replace(solution, prices=prices)


@pytest.fixture(scope="module")
def line() -> Drop:
    return two_cells()


# ------------------------------------------------------------------ values by hand
def test_best_server_switches_at_the_midpoint_and_rsrp_and_sinr_are_by_hand(line):
    cov = coverage_map(line, resolution_m=50.0)
    assert cov.shape == (4, 28) and cov.resolution_m == cov.requested_resolution_m == 50.0
    assert cov.bounds_m == (X0 - 200, Y0 - 100, X0 + 1200, Y0 + 100)
    x, y = cov.centres_m()
    assert (cov.best_server[:, x < X0 + 500] == 0).all()
    assert (cov.best_server[:, x > X0 + 500] == 1).all()
    assert list(cov.cell_ids[cov.best_server[0, [0, -1]]]) == ["west", "east"]
    for row, col in ((0, 0), (1, 9), (2, 14), (3, 27)):  # pixel centres, north first
        hand = by_hand(x[col], y[row])
        best = int(np.argmax(hand["rx"]))
        assert cov.best_server[row, col] == best
        assert cov.rsrp_dbm[row, col] == pytest.approx(hand["rx"][best] - RSRP_OFFSET_DB, abs=1e-4)
        assert cov.sinr_db[row, col] == pytest.approx(hand["sinr"][best], abs=1e-4)
    assert cov.rate_mbps is None and cov.method is None  # no solution, no rate


@pytest.mark.parametrize("alpha", [1.0, 2.0])
def test_new_user_rate_by_hand_from_the_prices(alpha):
    drop = two_cells(alpha=alpha)
    mu = np.array([30.0, 0.5])  # the west cell is dear, the east one cheap
    cov = coverage_map(drop, with_prices(drop, mu), resolution_m=50.0, method="by hand")
    assert cov.method == "by hand"
    x, y = cov.centres_m()
    picked = set()
    for row, col in ((0, 0), (1, 9), (2, 13), (3, 27)):
        r = by_hand(x[col], y[row])["rate"]
        # α = 1: r·min(1, w/μ); α = 2: r·min(1, (w r^(−1)/μ)^(1/2)), w = 1
        rates = r * np.minimum(1.0, (r ** (1 - alpha) / mu) ** (1 / alpha))
        picked.add(int(np.argmax(rates)))
        assert cov.rate_mbps[row, col] == pytest.approx(rates.max(), rel=1e-5)
    assert picked == {0, 1}  # west of the midpoint, the cheap east cell can win (col 13)
    assert cov.best_server[2, 13] == 0


def test_backhaul_price_and_free_airtime_by_hand(line):
    # μ = 0: the whole band; a backhaul price π per Mbit/s: α = 1 gives min(r, w/π)
    cov = coverage_map(line, with_prices(line, [0.0, 0.0], backhaul=[0.02, 0.0]),
                       resolution_m=50.0)
    x, y = cov.centres_m()
    r = by_hand(x[0], y[0])["rate"]
    assert cov.rate_mbps[0, 0] == pytest.approx(max(min(r[0], 1 / 0.02), r[1]), rel=1e-5)
    r = by_hand(x[27], y[3])["rate"]
    assert cov.rate_mbps[3, 27] == pytest.approx(r.max(), rel=1e-5)


def test_new_user_rate_over_several_resources_by_hand():
    r = np.array([10.0, 20.0])
    # prices per Mbit/s q = μ/R; bought cheapest first until w r^(−α) = q
    assert new_user_rate_mbps(r, [1.0, 8.0], 0.0, 1.0) == pytest.approx(10.0)  # q = .1, .4
    assert new_user_rate_mbps(r, [1.0, 1.0], 0.0, 1.0) == pytest.approx(20.0)  # the cheap one
    assert new_user_rate_mbps(r, [0.5, 4.0], 0.0, 1.0) == pytest.approx(10.0)  # 1/10 in between
    assert new_user_rate_mbps(r, [0.2, 1.0], 0.0, 1.0) == pytest.approx(20.0)  # 10 + half of 20
    # α = 2: r^(−2) = q_0 = 0.02 at r = √50 < 10, inside the first resource
    assert new_user_rate_mbps(r, [0.2, 1.0], 0.0, 2.0) == pytest.approx(math.sqrt(50.0))
    assert new_user_rate_mbps(r, [0.0, 0.0], 0.0, 3.0) == pytest.approx(30.0)  # free
    assert new_user_rate_mbps(r, [5.0, 30.0], 0.0, 0.0) == pytest.approx(10.0)  # α = 0: w > q
    assert new_user_rate_mbps(r, [0.0, 1.0], 0.1, 1.0) == pytest.approx(10.0)  # π: 1/q = 10
    # equal prices per unit of the band on resources of equal SINR: the table's airtime_price
    share = np.array([0.3, 0.7])
    for m in (0.5, 4.0):
        assert new_user_rate_mbps(12.0 * share, m * share, 0.0, 1.0) == \
            pytest.approx(12.0 * min(1.0, 1.0 / m))
    rates = new_user_rate_mbps(np.array([[10.0, 20.0], [0.0, 5.0]]), np.ones((2, 2)), 0.0, 1.0)
    np.testing.assert_allclose(rates, [20.0, 5.0])


def test_a_power_run_is_mapped_at_the_cells_mean_price_per_unit_of_band(line):
    problem = PowerProblem.from_drop(line, levels_db=[0, None], n_interferers=8)
    solution = solve_power(problem, max_iter=3, progress=False,
                           options=ColumnGenerationOptions(cluster_cells=1, scope_cells=None))
    assert solution.power is not None and solution.prices["airtime"].shape[1] > 1
    price = line.frames(solution)[1]["airtime_price"].to_numpy()  # the cells table's
    cov = coverage_map(line, solution, resolution_m=100.0)
    x, y = cov.centres_m()
    for row, col in ((0, 0), (1, 7), (1, 13)):
        r = by_hand(x[col], y[row])["rate"]  # at full power: patterns are not mapped
        assert cov.rate_mbps[row, col] == pytest.approx((r * np.minimum(1, 1 / price)).max(),
                                                        rel=1e-5)


def test_subbands_give_the_same_map(line):
    split = two_cells(resource_mhz=np.array([4.0, 6.0]))
    one = coverage_map(line, with_prices(line, [2.0, 3.0]), resolution_m=100.0)
    two = coverage_map(split, with_prices(split, [[0.8, 1.2], [1.2, 1.8]]), resolution_m=100.0)
    np.testing.assert_array_equal(one.best_server, two.best_server)
    np.testing.assert_allclose(one.rsrp_dbm, two.rsrp_dbm, atol=1e-4)
    np.testing.assert_allclose(one.sinr_db, two.sinr_db, atol=1e-4)
    np.testing.assert_allclose(one.rate_mbps, two.rate_mbps, rtol=1e-5)


def test_3gpp_tiers_are_mapped_at_the_mean_over_the_los_state():
    model = RadioModel(pathloss={"macro": ThreeGPP("umi", 3.5), "pico": tr36814_pico,
                                 "femto": tr36814_pico})
    median = median_model(model)
    assert median.pathloss["macro"].los == "expected" and not median.pathloss["macro"].shadowing
    assert median.shadowing_std_db == {"macro": 0.0, "pico": 0.0, "femto": 0.0}
    assert model.pathloss["macro"].shadowing  # the drop's model is left as it was
    forced = RadioModel(pathloss={**model.pathloss, "macro": ThreeGPP("umi", 3.5, los="nlos")})
    assert median_model(forced).pathloss["macro"].los == "nlos"
    drop = two_cells(model=model)
    cov = coverage_map(drop, resolution_m=100.0)
    x, y = cov.centres_m()
    d2 = math.hypot(x[3] - X0, y[0] - Y0)
    loss = ThreeGPP("umi", 3.5, los="expected", shadowing=False).expected_loss_db(
        np.array([d2]), np.array([math.hypot(d2, 10.0 - 1.5)]), 10.0, 1.5)[0]
    assert cov.rsrp_dbm[0, 3] == pytest.approx(46.0 - loss - RSRP_OFFSET_DB, abs=1e-4)


# ------------------------------------------------------------------ grid
def test_pixels_outside_the_study_area_are_nodata():
    disc = shapely.Point(X0 + 500, Y0).buffer(400.0)
    drop = two_cells(area=disc)
    cov = coverage_map(drop, with_prices(drop, [1.0, 1.0]), resolution_m=50.0)
    x, y = cov.centres_m()
    inside = shapely.contains_xy(disc, *np.meshgrid(x, y))
    assert 0 < inside.sum() < inside.size
    assert (cov.best_server[~inside] == -1).all() and (cov.best_server[inside] >= 0).all()
    for raster in (cov.rsrp_dbm, cov.sinr_db, cov.rate_mbps):
        assert raster.dtype == np.float32
        assert np.isnan(raster[~inside]).all() and np.isfinite(raster[inside]).all()
    assert cov.best_server.dtype == np.int32


def test_the_area_is_the_study_area_else_the_region_else_the_cells_box(line):
    net = line.network
    assert coverage_area(net).equals(net.study_area)
    region = shapely.box(X0 - 50, Y0 - 50, X0 + 1050, Y0 + 50)
    assert coverage_area(net.replace(study_area=None, region=region)).equals(region)
    # 1000 m × 0 m of cells: grown by max(500 m, 100 m)
    box = coverage_area(net.replace(study_area=None))
    assert shapely.bounds(box).tolist() == [X0 - 500, Y0 - 500, X0 + 1500, Y0 + 500]


def test_a_large_grid_is_made_coarser_by_a_whole_multiple():
    drop = two_cells(area=shapely.box(X0, Y0, X0 + 1000, Y0 + 1000))
    fits = coverage_map(drop, resolution_m=10.0, max_pixels=2500)
    assert (fits.resolution_m, fits.requested_resolution_m, fits.shape) == (20.0, 10.0, (50, 50))
    assert fits.coarsened
    tighter = coverage_map(drop, resolution_m=10.0, max_pixels=2499)  # 20 m no longer fits
    assert tighter.resolution_m == 30.0 and tighter.shape == (34, 34)
    assert tighter.bounds_m == (X0, Y0 + 1000 - 34 * 30, X0 + 34 * 30, Y0 + 1000)
    assert not coverage_map(drop, resolution_m=100.0, max_pixels=100).coarsened
    one = coverage_map(drop, resolution_m=10.0, max_pixels=1)
    assert one.shape == (1, 1) and one.resolution_m % 10.0 == 0 and one.resolution_m >= 1000


def test_same_input_same_rasters_whatever_the_blocks(line, monkeypatch):
    solution = with_prices(line, [2.0, 3.0])
    first = coverage_map(line, solution, resolution_m=50.0)
    monkeypatch.setattr(coverage_grid_module, "BLOCK_LINKS", 5)  # 5 pixels at a time
    again = coverage_map(line, solution, resolution_m=50.0)
    for name in COVERAGE_QUANTITIES:
        np.testing.assert_array_equal(getattr(first, name), getattr(again, name))


def test_a_shipped_scenario_maps_its_region_with_prices():
    scenario = load_scenario("hetnet").with_overrides(users={"n": 60}, picos={"per_sector": 1},
                                                      network={"n_rings": 1})
    drop = scenario.build(1)
    solution = drop.solve("dual")
    cov = coverage_map(drop, solution, resolution_m=100.0)
    inside = cov.best_server >= 0
    assert inside.sum() > 50 and np.isfinite(cov.rate_mbps[inside]).all()
    assert (cov.rate_mbps[inside] >= 0).all() and cov.method == "dual"
    assert set(np.unique(cov.best_server[inside])) <= set(range(drop.network.n_cells))
    assert cov.crs == pyproj.CRS(drop.network.crs)


# ------------------------------------------------------------------ files
@pytest.mark.parametrize("quantity", list(COVERAGE_FILES))
def test_geotiff_round_trip(line, tmp_path, quantity):
    cov = coverage_map(line, with_prices(line, [2.0, 3.0]), resolution_m=50.0, method="dual")
    path = tmp_path / "staging.tmp"  # written to exactly this path, whatever its suffix
    write_geotiff(path, cov, quantity)
    assert [p.name for p in tmp_path.iterdir()] == ["staging.tmp"]
    info = COVERAGE_QUANTITIES[quantity]
    with rasterio.open(path) as src:
        assert src.driver == "GTiff" and src.count == 1 and src.dtypes == (info.dtype,)
        assert pyproj.CRS(src.crs.to_wkt()) == cov.crs
        assert src.transform == Affine(50.0, 0.0, X0 - 200, 0.0, -50.0, Y0 + 100)
        assert src.shape == cov.shape and src.descriptions == (quantity,)
        assert src.units == (info.unit,)
        values = src.read(1)
        tags = src.tags()
        if quantity == "best_server":
            assert src.nodata == -1
            assert tags["CELL_IDS"] == '["west", "east"]'
        else:
            assert math.isnan(src.nodata)
        assert src.profile["compress"] == "deflate"
        assert not src.profile["tiled"]  # smaller than a 256 × 256 block
    np.testing.assert_array_equal(values, getattr(cov, quantity))
    assert tags["QUANTITY"] == quantity and tags["UNIT"] == info.unit
    assert (tags["RESOLUTION_M"], tags["REQUESTED_RESOLUTION_M"]) == ("50", "50")
    assert tags["COARSENED"] == "no" and tags["METHOD"] == "dual"


def test_a_raster_wider_than_a_block_is_tiled(tmp_path):
    drop = two_cells(area=shapely.box(X0 - 1000, Y0, X0 + 2000, Y0 + 20))
    cov = coverage_map(drop, resolution_m=10.0)
    assert cov.shape == (2, 300)
    write_geotiff(tmp_path / "b.tif", cov, "best_server")
    with rasterio.open(tmp_path / "b.tif") as src:
        assert src.profile["tiled"] and src.block_shapes == [(256, 256)]
        np.testing.assert_array_equal(src.read(1), cov.best_server)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("kwargs, match", [
    ({"resolution_m": 0.0}, "resolution_m"),
    ({"resolution_m": -25.0}, "resolution_m"),
    ({"resolution_m": "25"}, "resolution_m"),
    ({"resolution_m": float("nan")}, "resolution_m"),
    ({"max_pixels": 0}, "max_pixels"),
    ({"max_pixels": 1e6}, "max_pixels"),
    ({"max_pixels": True}, "max_pixels"),
    ({"method": 3}, "method"),
    ({"progress": "yes"}, "progress"),
])
def test_bad_arguments_name_the_argument(line, kwargs, match):
    with pytest.raises(ValidationError, match=match):
        coverage_map(line, **kwargs)


def test_bad_drops_solutions_and_quantities_are_refused(line, tmp_path):
    with pytest.raises(ValidationError, match="drop is a Network"):
        coverage_map(line.network)
    with pytest.raises(ValidationError, match="solution is a dict"):
        coverage_map(line, {"airtime": 1})
    other = two_cells(resource_mhz=np.array([4.0, 6.0]))
    with pytest.raises(ValidationError, match="pass a solution of this drop"):
        coverage_map(line, other.solve("dual"))
    hand = LinkTable(**{f.name: getattr(line.links, f.name) for f in dataclasses.fields(LinkTable)
                        if f.name not in ("model", "shadowing_seed", "n_candidates")})
    with pytest.raises(ValidationError, match="records no radio model"):
        coverage_map(dataclasses.replace(line, links=hand))
    cov = coverage_map(line, resolution_m=100.0)
    with pytest.raises(ValidationError, match="has no rate_mbps"):
        write_geotiff(tmp_path / "r.tif", cov, "rate_mbps")
    with pytest.raises(ValidationError, match="quantity='rsrp'"):
        write_geotiff(tmp_path / "r.tif", cov, "rsrp")
    with pytest.raises(ValidationError, match="coverage is a dict"):
        write_geotiff(tmp_path / "r.tif", {}, "rsrp_dbm")
    assert not list(tmp_path.iterdir())


# ------------------------------------------------------------------ scenario section
def scenario_file(tmp_path, coverage_lines: str | None):
    text = textwrap.dedent("""\
        name = "t"
        [network]
        builder = "hex_grid"
        n_rings = 1
        [users]
        n = 20
        """)
    if coverage_lines is not None:
        text += "[coverage]\n" + textwrap.dedent(coverage_lines)
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


def test_coverage_section_parses_with_defaults(tmp_path):
    assert load_scenario(scenario_file(tmp_path, None)).coverage == CoverageSettings()
    assert CoverageSettings() == CoverageSettings(True, None, 1_000_000)  # None: auto_resolution_m
    given = load_scenario(scenario_file(tmp_path, "enabled = true\nresolution_m = 50\n"
                                                  "max_pixels = 40_000\n"))
    assert given.coverage == CoverageSettings(enabled=True, resolution_m=50.0, max_pixels=40_000)
    assert isinstance(given.coverage.resolution_m, float)
    assert given.with_overrides(coverage={"max_pixels": 10}).coverage.max_pixels == 10


@pytest.mark.parametrize("lines, match", [
    ("resolution = 25.0\n", "unknown key 'resolution'"),
    ("resolution_m = -1.0\n", "resolution_m"),
    ("resolution_m = \"25\"\n", "expected number"),
    ("max_pixels = 0\n", "max_pixels=0 is below 1"),
    ("max_pixels = 1e6\n", "expected integer"),
    ("enabled = \"yes\"\n", "expected boolean"),
])
def test_bad_coverage_keys_are_refused(tmp_path, lines, match):
    with pytest.raises(ValidationError, match=match) as err:
        load_scenario(scenario_file(tmp_path, lines))
    assert "[coverage]" in str(err.value)


def test_coverage_settings_check_their_values():
    with pytest.raises(ValidationError, match="resolution_m"):
        CoverageSettings(resolution_m=0.0)
    with pytest.raises(ValidationError, match="enabled"):
        CoverageSettings(enabled="false")


@pytest.mark.parametrize(("width_m", "height_m", "expected_m"), [
    (2600.0, 2600.0, 25.0),   # a 19-site layout: the default
    (1250.0, 5000.0, 25.0),   # 50 pixels across the shorter side: still the default
    (1000.0, 3000.0, 20.0),   # 1000 / 50 = 20
    (500.0, 500.0, 10.0),     # a campus
    (120.0, 50.0, 1.0),       # the TR 38.901 indoor hall
    (30.0, 30.0, 1.0),        # never below 1 m
    (400.0, 350.0, 5.0),      # 350 / 50 = 7 → 5
])
def test_auto_resolution_follows_the_area(width_m, height_m, expected_m):
    assert auto_resolution_m(shapely.box(0.0, 0.0, width_m, height_m)) == expected_m


def test_the_indoor_hall_is_mapped_at_one_metre():
    from cellopt.study import load_scenario

    scenario = load_scenario("nr_inh_calibration").with_overrides(users={"n": 40})
    drop = scenario.build(1)
    cov = coverage_map(drop)
    assert cov.resolution_m == cov.requested_resolution_m == 1.0
    assert cov.shape == (50, 120)


# ------------------------------------------------------------------ settings that give no map
@pytest.fixture
def nothing_computed(monkeypatch):
    """Fail the test if a pixel's links are computed: the refusals come before."""
    def link_table(*args, **kwargs):
        raise AssertionError("a pixel was computed before the settings were refused")

    monkeypatch.setattr(coverage_module, "link_table", link_table)


@pytest.mark.parametrize("kwargs, needles", [
    # the study area is 1400 m × 200 m
    ({"resolution_m": 300.0}, ["resolution_m=300 m is larger than the coverage area",
                               "the network's study_area, 1,400 m × 200 m",
                               "not one pixel fits across it", "fix: give resolution_m below 200 m"]),
    ({"resolution_m": 200.0}, ["resolution_m=200 m: no pixel centre of the 7 × 2 grid",
                               "1,400 m × 200 m", "every pixel would be nodata",
                               "fix: give a finer resolution_m, e.g. 2 m"]),
    ({"max_pixels": 3}, ["max_pixels=3 makes the pixels 468 m (from the 2 m asked)",
                         "1,400 m × 200 m", "fix: give a larger max_pixels, e.g. 100"]),
])
def test_a_grid_without_a_pixel_of_data_is_refused_before_computing(line, nothing_computed, kwargs,
                                                                    needles):
    from cellopt.coverage import check_coverage

    for call in (coverage_map, check_coverage):
        with pytest.raises(ValidationError) as err:
            call(line, **kwargs)
        for needle in needles:
            assert needle in str(err.value), str(err.value)


@pytest.mark.parametrize("area, size", [
    (shapely.box(X0, Y0, X0 + 1000, Y0), "1,000 m × 0 m"),      # a polygon with no area
    (shapely.LineString([(X0, Y0), (X0, Y0 + 500)]), "0 m × 500 m"),
    (shapely.Point(X0, Y0), "0 m × 0 m"),
])
def test_an_area_with_no_extent_is_refused(area, size, nothing_computed):
    drop = two_cells(area)
    with pytest.raises(ValidationError, match="coverage area") as err:
        coverage_map(drop)
    assert f"(the network's study_area, {size}) has no extent to map; fix:" in str(err.value)


def test_a_resolution_too_fine_to_resolve_is_refused_not_an_overflow(line, nothing_computed):
    with pytest.warns(UserWarning, match="usual range"), \
            pytest.raises(ValidationError, match=r"resolution_m=4\.94066e-324 m is too fine for "
                          r"the coverage area \(the network's study_area, 1,400 m × 200 m\).*"
                          r"fix: give resolution_m in metres"):
        coverage_map(line, resolution_m=5e-324)


def test_a_fine_resolution_that_would_not_fit_is_a_resource_limit(line, nothing_computed,
                                                                  monkeypatch):
    from cellopt.errors import MEMORY_ENV, ResourceLimitError

    monkeypatch.setenv(MEMORY_ENV, "1")
    with pytest.warns(UserWarning, match="usual range"), \
            pytest.raises(ResourceLimitError, match=r"a coverage map of .* pixels need about .* GB"):
        coverage_map(line, resolution_m=1e-3, max_pixels=10**12)


def test_check_coverage_gives_the_grid_of_the_map(line):
    from cellopt.coverage import check_coverage

    cov = coverage_map(line, resolution_m=100.0, max_pixels=10)
    assert check_coverage(line, resolution_m=100.0, max_pixels=10) == (cov.resolution_m, *cov.shape)
    assert (cov.best_server >= 0).any()


def test_a_raster_with_no_pixel_of_data_is_never_written(line, tmp_path):
    cov = coverage_map(line, with_prices(line, [2.0, 3.0]), resolution_m=100.0)
    empty = dataclasses.replace(cov, best_server=np.full(cov.shape, -1, np.int32),
                                rsrp_dbm=np.full(cov.shape, np.nan, np.float32))
    for quantity in ("best_server", "rsrp_dbm"):
        with pytest.raises(ValidationError, match=f"{quantity} raster .* holds no data"):
            write_geotiff(tmp_path / f"{quantity}.tif", empty, quantity)
    write_geotiff(tmp_path / "sinr_db.tif", empty, "sinr_db")  # its own raster has data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sinr_db.tif"]


# ------------------------------------------------------------------ failed writes
@pytest.mark.parametrize("error", ["ENOSPC", "rasterio"])
def test_a_failed_geotiff_write_names_the_file_and_the_cause_and_leaves_no_part(line, tmp_path,
                                                                                monkeypatch, error):
    import errno
    import os

    import cellopt.study.rasters as rasters

    cov = coverage_map(line, resolution_m=100.0)
    target = tmp_path / "coverage_rsrp_dbm.tif"
    target.write_bytes(b"the earlier file")
    if error == "ENOSPC":
        failure = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    else:  # the cause is read from the disk, which has no space left
        failure = gdal_write_failed()
        real = os.statvfs
        monkeypatch.setattr(os, "statvfs", lambda p: os.statvfs_result(
            (4096, 4096, 1000, 0, 0, *real(p)[5:])))
    monkeypatch.setattr(rasters.rasterio, "open", failing_raster_open(failure))
    with pytest.raises(OSError) as exc:
        write_geotiff(target, cov, "rsrp_dbm")
    err = exc.value
    assert err.errno == errno.ENOSPC and err.filename == str(target)
    assert err.strerror.startswith("No space left on device"), err.strerror
    if error == "rasterio":
        assert "0 bytes free" in err.strerror
        assert "GDAL: RasterioIOError: Write failed." in err.strerror
        assert "TIFFAppendToStrip:Write error at scanline 36" in err.strerror
        assert "See previous exception" not in err.strerror
    assert target.read_bytes() == b"the earlier file"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]  # no part of the new one


def test_a_real_file_size_limit_names_the_file_and_the_cause(tmp_path):
    """A real failed write of GDAL: RLIMIT_FSIZE below the file's size, SIGXFSZ ignored, so
    that the write fails with EFBIG, which GDAL reports as "Write failed" only."""
    import subprocess
    import sys

    target = tmp_path / "big.tif"
    code = textwrap.dedent(f"""
        import resource, signal
        import numpy as np, pyproj
        from cellopt.coverage import CoverageMap
        from cellopt.study.rasters import write_geotiff

        values = np.random.default_rng(1).normal(-90.0, 10.0, (400, 400)).astype("float32")
        cov = CoverageMap(crs=pyproj.CRS("EPSG:32631"), bounds_m=(0.0, 0.0, 4000.0, 4000.0),
                          resolution_m=10.0, requested_resolution_m=10.0,
                          best_server=np.zeros((400, 400), "int32"), rsrp_dbm=values,
                          sinr_db=values, rate_mbps=None, cell_ids=np.array(["a"]), method=None)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000))
        try:
            write_geotiff({str(target)!r}, cov, "rsrp_dbm")
        except OSError as err:
            print(err.errno, err.filename, err.strerror, sep="\\n")
    """)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120)
    lines = proc.stdout.splitlines()
    assert len(lines) == 3, proc.stdout + proc.stderr
    import errno

    assert (int(lines[0]), lines[1]) == (errno.EFBIG, str(target))
    assert lines[2].startswith("File too large: it reached the file-size limit of 20,000 bytes"), lines[2]
    assert "GDAL: RasterioIOError" in lines[2]
    assert list(tmp_path.iterdir()) == []
