"""Tests of cellopt.topology.femto.add_femtocells (seeded, fast)."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely

from cellopt.errors import ResourceLimitError, ValidationError
from cellopt.network import Network, cells_frame
from cellopt.topology.femto import WIFI_DENSITY_PER_KM2, add_femtocells

CRS = "EPSG:32610"
X0, Y0 = 550_000.0, 4_180_000.0  # UTM 10N, around San Francisco
REGION = shapely.box(X0, Y0, X0 + 1000.0, Y0 + 1000.0)  # 1 km²
SEEDS = range(12)


def make_network(region: shapely.Geometry | None = REGION) -> Network:
    """One macro cell (id 7, site 3) at the centre of the 1 km × 1 km region."""
    cells = cells_frame(
        [X0 + 500.0], [Y0 + 500.0], crs=CRS, tier="macro", tx_power_dbm=46.0,
        antenna_gain_dbi=15.0, azimuth_deg=0.0, height_m=25.0, cell_id=[7], site_id=[3],
    )
    return Network(cells=cells, region=region)


def femtos(net: Network) -> gpd.GeoDataFrame:
    return net.cells[net.cells["tier"] == "femto"]


def xy(frame: gpd.GeoDataFrame) -> tuple[np.ndarray, np.ndarray]:
    return frame.geometry.x.to_numpy(), frame.geometry.y.to_numpy()


def assert_poisson(counts: list[int], mean: float) -> None:
    """Each count within ±5σ of `mean`, and the average within ±5σ/√k."""
    sigma = np.sqrt(mean)
    assert all(abs(c - mean) <= 5 * sigma for c in counts), counts
    assert abs(np.mean(counts) - mean) <= 5 * sigma / np.sqrt(len(counts)), counts


# ---------------------------------------------------------------------- counts
def test_count_is_poisson_with_mean_density_times_area():
    net = make_network()
    counts = [len(femtos(add_femtocells(net, density_per_km2=500, rng=s))) for s in SEEDS]
    assert_poisson(counts, 500.0)
    assert len(set(counts)) > 1  # random, not a fixed count


def test_adoption_gives_the_same_law_as_the_density():
    net = make_network()
    by_adoption = add_femtocells(net, adoption=0.5, wifi_density_per_km2=1000, rng=3)
    by_density = add_femtocells(net, density_per_km2=500, rng=3)
    pd.testing.assert_frame_equal(by_adoption.cells, by_density.cells)
    counts = [len(femtos(add_femtocells(net, adoption=0.5, rng=s))) for s in SEEDS]
    assert_poisson(counts, 0.5 * WIFI_DENSITY_PER_KM2)


def test_wifi_density_constant_is_a_dense_urban_figure():
    assert 100 <= WIFI_DENSITY_PER_KM2 <= 1e5


def test_density_zero_adds_nothing_and_returns_a_new_network():
    net = make_network()
    out = add_femtocells(net, adoption=0.0, rng=0)
    assert out is not net
    assert out.n_cells == net.n_cells


# ---------------------------------------------------------------------- placement
def test_femtocells_lie_in_the_network_region():
    out = femtos(add_femtocells(make_network(), density_per_km2=800, rng=1))
    assert shapely.contains_xy(REGION, *xy(out)).all()


def test_region_argument_overrides_and_replaces_a_missing_network_region():
    triangle = shapely.Polygon([(X0, Y0), (X0 + 2000, Y0), (X0, Y0 + 2000)])  # 2 km²
    out = femtos(add_femtocells(make_network(None), density_per_km2=300, region=triangle, rng=2))
    assert shapely.contains_xy(triangle, *xy(out)).all()
    assert abs(len(out) - 600) <= 5 * np.sqrt(600)


def test_femtocells_lie_in_buildings_chosen_in_proportion_to_area():
    big = shapely.box(X0 + 100, Y0 + 100, X0 + 160, Y0 + 150)  # 3000 m²
    small = shapely.box(X0 + 700, Y0 + 700, X0 + 750, Y0 + 720)  # 1000 m²
    out = femtos(add_femtocells(make_network(), density_per_km2=4000, buildings=[big, small],
                                rng=4))
    x, y = xy(out)
    in_big, in_small = shapely.contains_xy(big, x, y), shapely.contains_xy(small, x, y)
    assert (in_big | in_small).all()
    # Density refers to the network region (1 km²), not to the buildings.
    assert abs(len(out) - 4000) <= 5 * np.sqrt(4000)
    share = in_big.mean()
    assert abs(share - 0.75) <= 5 * np.sqrt(0.75 * 0.25 / len(out))
    assert in_small.sum() > 0


def test_without_region_density_refers_to_the_union_of_buildings():
    a = shapely.box(X0, Y0, X0 + 100, Y0 + 40)  # 4000 m²
    b = shapely.box(X0 + 50, Y0, X0 + 150, Y0 + 40)  # overlaps a by half: union 6000 m²
    net = make_network(None)
    counts = []
    for s in SEEDS:
        out = femtos(add_femtocells(net, density_per_km2=50_000, buildings=[a, b], rng=s))
        x, y = xy(out)
        assert (shapely.contains_xy(a, x, y) | shapely.contains_xy(b, x, y)).all()
        counts.append(len(out))
    assert_poisson(counts, 50_000 * 0.006)


def test_buildings_are_clipped_to_the_region():
    straddling = shapely.box(X0 + 900, Y0 + 400, X0 + 1100, Y0 + 500)  # half outside
    out = femtos(add_femtocells(make_network(), density_per_km2=2000, buildings=[straddling],
                                rng=5))
    x, y = xy(out)
    assert len(out) > 0
    assert shapely.contains_xy(REGION, x, y).all()
    assert shapely.contains_xy(straddling, x, y).all()


def test_buildings_geoseries_in_another_crs_is_reprojected():
    footprint = shapely.box(X0 + 200, Y0 + 200, X0 + 300, Y0 + 260)
    frame = gpd.GeoDataFrame({"levels": [3]}, geometry=[footprint], crs=CRS).to_crs("EPSG:4326")
    for given in (frame, frame.geometry):
        out = femtos(add_femtocells(make_network(), density_per_km2=1000, buildings=given, rng=6))
        assert len(out) > 0
        assert shapely.contains_xy(footprint.buffer(0.01), *xy(out)).all()


# ---------------------------------------------------------------------- columns and ids
def test_columns_and_ids():
    net = make_network()
    out = add_femtocells(net, density_per_km2=200, rng=7)
    new = femtos(out)
    n = len(new)
    assert n > 0 and out.n_cells == n + 1
    assert (new["tier"] == "femto").all()
    assert (new["owner"] == "third_party").all()
    np.testing.assert_array_equal(new["tx_power_dbm"], 20.0)
    np.testing.assert_array_equal(new["antenna_gain_dbi"], 0.0)
    np.testing.assert_array_equal(new["height_m"], 1.5)
    assert new["azimuth_deg"].isna().all()
    assert np.isinf(new["backhaul_mbps"]).all()
    np.testing.assert_array_equal(new["price_per_mbps"], 0.0)
    np.testing.assert_array_equal(new["cell_id"], np.arange(8, 8 + n))
    assert out.cells["site_id"].is_unique
    np.testing.assert_array_equal(new["site_id"], np.arange(4, 4 + n))
    assert out.crs == net.crs and out.region is net.region
    out.validate()


def test_cell_parameters_are_passed_through():
    out = femtos(add_femtocells(make_network(), density_per_km2=100, tx_power_dbm=17,
                                antenna_gain_dbi=2, height_m=6, owner="operator", rng=8))
    assert (out["owner"] == "operator").all()
    np.testing.assert_array_equal(out[["tx_power_dbm", "antenna_gain_dbi", "height_m"]],
                                  np.tile([17.0, 2.0, 6.0], (len(out), 1)))


# ---------------------------------------------------------------------- backhaul and price
def test_backhaul_and_price_as_scalars():
    out = femtos(add_femtocells(make_network(), density_per_km2=100, backhaul_mbps=50,
                                price_per_mbps=0.2, rng=9))
    np.testing.assert_array_equal(out["backhaul_mbps"], 50.0)
    np.testing.assert_array_equal(out["price_per_mbps"], 0.2)


def test_backhaul_and_price_as_callables():
    seen = {}

    def uplink(rng, n):
        seen["rng"], seen["n"] = rng, n
        return rng.lognormal(np.log(20.0), 0.5, size=n)

    out = add_femtocells(make_network(), density_per_km2=300, backhaul_mbps=uplink,
                         price_per_mbps=lambda rng, n: rng.uniform(0.0, 1.0, n), rng=10)
    new = femtos(out)
    assert isinstance(seen["rng"], np.random.Generator) and seen["n"] == len(new)
    assert new["backhaul_mbps"].nunique() == len(new) and (new["backhaul_mbps"] > 0).all()
    assert new["price_per_mbps"].between(0, 1).all()
    again = add_femtocells(make_network(), density_per_km2=300, backhaul_mbps=uplink,
                           price_per_mbps=lambda rng, n: rng.uniform(0.0, 1.0, n), rng=10)
    pd.testing.assert_frame_equal(out.cells, again.cells)


def test_unlimited_backhaul_from_a_callable_is_allowed():
    out = femtos(add_femtocells(make_network(), density_per_km2=100,
                                backhaul_mbps=lambda rng, n: np.full(n, np.inf), rng=11))
    assert np.isinf(out["backhaul_mbps"]).all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"backhaul_mbps": lambda rng, n: np.ones(n + 1)}, "shape"),
        ({"backhaul_mbps": lambda rng, n: np.ones((n, 1))}, "shape"),
        ({"backhaul_mbps": lambda rng, n: 10.0}, "shape"),
        ({"backhaul_mbps": lambda rng, n: -np.ones(n)}, "≥ 0"),
        ({"backhaul_mbps": lambda rng, n: np.full(n, np.nan)}, "≥ 0"),
        ({"backhaul_mbps": lambda rng, n: ["fast"] * n}, "not numeric"),
        ({"backhaul_mbps": -1.0}, "≥ 0"),
        ({"backhaul_mbps": np.ones(3)}, "callable"),
        ({"price_per_mbps": lambda rng, n: np.full(n, np.inf)}, "finite"),
        ({"price_per_mbps": -0.5}, "finite and ≥ 0"),
    ],
)
def test_bad_backhaul_or_price_is_rejected(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        add_femtocells(make_network(), density_per_km2=100, rng=12, **kwargs)


# ---------------------------------------------------------------------- reproducibility
def test_same_seed_same_result_and_input_untouched():
    net = make_network()
    before = net.cells.copy()
    a = add_femtocells(net, density_per_km2=400, rng=13)
    b = add_femtocells(net, density_per_km2=400, rng=np.random.default_rng(13))
    pd.testing.assert_frame_equal(a.cells, b.cells)
    c = add_femtocells(net, density_per_km2=400, rng=14)
    assert not a.cells.equals(c.cells)
    pd.testing.assert_frame_equal(net.cells, before)
    assert net.n_cells == 1 and net.region is REGION


def test_same_seed_same_result_with_buildings():
    houses = [shapely.box(X0 + 10 * i, Y0, X0 + 10 * i + 8, Y0 + 8) for i in range(20)]
    a = add_femtocells(make_network(), density_per_km2=300, buildings=houses, rng=15)
    b = add_femtocells(make_network(), density_per_km2=300, buildings=houses, rng=15)
    pd.testing.assert_frame_equal(a.cells, b.cells)


# ---------------------------------------------------------------------- bad arguments
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "neither"),
        ({"density_per_km2": 100, "adoption": 0.1}, "both"),
        ({"density_per_km2": -1}, "≥ 0"),
        ({"density_per_km2": np.nan}, "finite"),
        ({"density_per_km2": np.inf}, "finite"),
        ({"density_per_km2": "many"}, "not a number"),
        ({"adoption": -0.1}, r"\[0, 1\]"),
        ({"adoption": 1.5}, r"\[0, 1\]"),
        ({"adoption": np.nan}, r"\[0, 1\]"),
        ({"adoption": 0.1, "wifi_density_per_km2": -5}, "wifi_density_per_km2"),
        ({"density_per_km2": 10, "region": shapely.Polygon()}, "empty"),
        ({"density_per_km2": 10, "region": shapely.box(X0, Y0, X0, Y0 + 10)}, "empty"),
        ({"density_per_km2": 10, "region": shapely.Point(X0, Y0)}, "Polygon"),
        ({"density_per_km2": 10, "buildings": []}, "empty"),
        ({"density_per_km2": 10, "buildings": [shapely.Point(X0, Y0)]}, "rows \\[0\\]"),
        ({"density_per_km2": 10, "buildings": 5}, "sequence"),
        ({"density_per_km2": 10, "buildings": [shapely.box(0, 0, 10, 10)]}, "inside the region"),
        ({"density_per_km2": 10, "owner": "landlord"}, "owner"),
        ({"density_per_km2": 10, "height_m": -1}, "height_m"),
        ({"density_per_km2": 10, "tx_power_dbm": np.nan}, "tx_power_dbm"),
    ],
)
def test_bad_arguments_raise_validation_error(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        add_femtocells(make_network(), rng=0, **kwargs)


def test_without_a_region_femtocells_go_within_500_m_of_the_cells():
    """It failed asking for region=, where `cellopt run` of a cell file used the cells'
    convex hull buffered by 500 m: both use cells_region now."""
    net = make_network(None)
    out = add_femtocells(net, density_per_km2=300, rng=0)
    centre = net.cells.geometry.iloc[0]
    assert out.region.symmetric_difference(centre.buffer(500.0)).area < 1.0  # one cell: a disc
    femto = out.cells[out.cells["tier"] == "femto"].geometry
    assert len(femto) > 100 and (femto.distance(centre) <= 500.0).all()
    assert net.region is None


# ---------------------------------------------------------------------- limits
def test_a_huge_density_is_refused_on_its_mean_before_any_draw(monkeypatch):
    monkeypatch.setenv("CELLOPT_MAX_MEMORY_GB", "1")
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    with pytest.raises(ResourceLimitError, match=r"about 1e\+07 cells\) need about 12.1 GB"):
        add_femtocells(make_network(), density_per_km2=1e7, rng=rng)
    assert rng.bit_generator.state == state
    assert add_femtocells(make_network(), density_per_km2=1e3, rng=rng).n_cells > 900


def test_implausible_femto_parameters_warn_and_impossible_ones_raise():
    with pytest.warns(UserWarning, match="tx_power_dbm=0.1 dBm is outside the usual range"):
        add_femtocells(make_network(), density_per_km2=10, tx_power_dbm=0.1, rng=0)
    with pytest.raises(ValidationError, match=r"tx_power_dbm=2000 dBm is outside the possible range"):
        add_femtocells(make_network(), density_per_km2=10, tx_power_dbm=2000.0, rng=0)
