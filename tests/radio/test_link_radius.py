"""Link tables with an interference radius against the full computation."""

from __future__ import annotations

import numpy as np
import pytest

from cellopt import radio, topology
from cellopt.errors import ValidationError
from cellopt.radio.far_field import FarField, auto_radius_m, ring_integral_m2
from cellopt.radio.model import CouplingGains, RadioModel
from cellopt.radio.pathloss import SingleSlope


def link_keys(lt):
    return (lt.user * lt.n_cells + lt.cell) * lt.n_resources + lt.resource


def common_links(a, b):
    """Indices into `a` and `b` of the links present in both."""
    _, i, j = np.intersect1d(link_keys(a), link_keys(b), return_indices=True)
    return i, j


@pytest.fixture(scope="module")
def hetnet():
    net = topology.hex_grid(n_rings=3, wraparound=False)
    net = topology.add_picos(net, per_sector=1, rng=1)
    net = topology.add_femtocells(net, density_per_km2=20.0, rng=4)
    return topology.drop_users(net, 3000, indoor_fraction=0.5, colocated_fraction=0.2, rng=2)


@pytest.fixture(scope="module")
def poisson():
    tiers = {"macro": {"density_per_km2": 1.0}, "pico": {"density_per_km2": 4.0}}
    net = topology.poisson_layout(tiers, side_m=16000.0, wraparound=False, rng=1)
    return topology.drop_users(net, 4000, rng=2)


def test_pair_gains_equal_the_dense_gains_bit_for_bit(hetnet):
    coupling = CouplingGains(hetnet, RadioModel(), 7)
    users = np.arange(0, hetnet.n_users, 37)
    dense = coupling.gain_db(users)
    dx, dy = coupling.displacement_m(users)
    uu, cc = np.meshgrid(users, np.arange(hetnet.n_cells), indexing="ij")
    pairs = coupling.pair_gain_db(uu.ravel(), cc.ravel(), dx.ravel(), dy.ravel())
    assert np.array_equal(pairs.reshape(dense.shape), dense)


@pytest.mark.slow
def test_a_radius_covering_every_cell_gives_the_full_table(hetnet):
    full = radio.link_table(hetnet, rng=3)
    wide = radio.link_table(hetnet, rng=3, interference_radius_m=1e6, far_field=False)
    for col in ("user", "cell", "resource", "rsrp_dbm"):
        assert np.array_equal(getattr(wide, col), getattr(full, col)), col
    # the interference sums run in another order: equal to round-off
    np.testing.assert_allclose(wide.sinr_db, full.sinr_db, rtol=0, atol=1e-9)
    np.testing.assert_allclose(wide.rate_mbps, full.rate_mbps, rtol=1e-12, atol=1e-12)
    assert wide.radius_m == 1e6 and np.all(wide.far_field_db == 0)
    assert full.radius_m is None and full.far_field_db is None


@pytest.mark.parametrize("far_field", [True, False])
def test_the_near_only_sinr_bounds_the_exact_one(poisson, far_field):
    full = radio.link_table(poisson, rng=3)
    lt = radio.link_table(poisson, rng=3, interference_radius_m=2000.0, far_field=far_field)
    i, j = common_links(lt, full)
    assert len(i) > 0.7 * len(full)
    near_only = lt.sinr_db[i] + lt.far_field_db[i]
    assert np.all(near_only >= full.sinr_db[j] - 1e-9)
    assert np.all(lt.far_field_db >= 0)
    if not far_field:
        assert np.all(lt.far_field_db == 0)
        np.testing.assert_array_equal(near_only, lt.sinr_db[i])


@pytest.mark.slow
def test_rates_within_the_documented_tolerance(poisson):
    """docs/model.md: at a 4 km radius on this layout (5 cells per km²), the far field
    halves the SINR error; ≥ 97 % of the links are found, best cells agree, the mean
    |ΔSINR| is below 0.1 dB and the mean |Δrate| below 0.05 Mbit/s."""
    full = radio.link_table(poisson, rng=3)
    errors = {}
    for far_field in (True, False):
        lt = radio.link_table(poisson, rng=3, interference_radius_m=4000.0, far_field=far_field)
        i, j = common_links(lt, full)
        assert len(i) >= 0.97 * len(full)
        assert np.mean(lt.best_by() == full.best_by()) >= 0.999
        errors[far_field] = (np.abs(lt.sinr_db[i] - full.sinr_db[j]).mean(),
                             np.abs(lt.rate_mbps[i] - full.rate_mbps[j]).mean())
    assert errors[True][0] < 0.1 and errors[True][1] < 0.05
    assert errors[True][0] < 0.7 * errors[False][0]


def test_every_user_keeps_its_candidates_where_no_cell_is_within_the_radius():
    tiers = {"macro": {"density_per_km2": 0.05, "sectors": 1}}
    net = topology.poisson_layout(tiers, side_m=40000.0, wraparound=False, rng=5)
    net = topology.drop_users(net, 500, rng=6)
    full = radio.link_table(net, n_candidates=4, rng=1)
    lt = radio.link_table(net, n_candidates=4, rng=1, interference_radius_m=500.0)
    assert np.array_equal(np.bincount(lt.user, minlength=net.n_users), np.full(net.n_users, 4))
    assert np.mean(lt.best_by() == full.best_by()) > 0.99


def test_wraparound_radius_finds_the_nearest_image():
    net = topology.hex_grid(n_rings=2, wraparound=True)
    net = topology.drop_users(net, 1500, rng=2)
    full = radio.link_table(net, rng=3)
    lt = radio.link_table(net, rng=3, interference_radius_m=1000.0, far_field=False)
    i, j = common_links(lt, full)
    np.testing.assert_array_equal(lt.rsrp_dbm[i], full.rsrp_dbm[j])
    assert np.all(lt.sinr_db[i] >= full.sinr_db[j] - 1e-9)
    with pytest.raises(ValidationError, match="half the wraparound period"):
        radio.link_table(net, rng=3, interference_radius_m=5000.0)


@pytest.mark.parametrize("bad", [0.0, -5.0, np.nan, np.inf, "far", True, [100.0]])
def test_bad_radius_is_refused(hetnet, bad):
    with pytest.raises(ValidationError, match="interference_radius_m"):
        radio.link_table(hetnet, interference_radius_m=bad)


def test_auto_radius_follows_the_density():
    sparse = topology.poisson_layout({"macro": {"density_per_km2": 0.5}}, side_m=30000.0,
                                     wraparound=False, rng=1)
    dense = topology.poisson_layout({"macro": {"density_per_km2": 8.0}}, side_m=30000.0,
                                    wraparound=False, rng=1)
    r_sparse, r_dense = auto_radius_m(sparse), auto_radius_m(dense)
    assert r_sparse > 2 * r_dense > 0
    assert auto_radius_m(dense, far_share=0.001) > r_dense
    with pytest.raises(ValidationError, match="far_share"):
        auto_radius_m(dense, far_share=1.5)


def test_ring_integral_matches_the_closed_form():
    """Single slope L(d) = L0 + 10 n log10 d: ∫_R^D 2π r 10^(−L/10) dr
    = 2π 10^(−L0/10) (R^(2−n) − D^(2−n)) / (n − 2)."""
    model = SingleSlope(exponent=4.0, reference_loss_db=40.0)
    exact = 2 * np.pi * 1e-4 * (500.0**-2 - 20000.0**-2) / 2.0
    assert ring_integral_m2(model, 1.0, 500.0, 20000.0) == pytest.approx(exact, rel=1e-5)
    net = topology.hex_grid(n_rings=1, wraparound=False)
    coupling = CouplingGains(net, RadioModel(pathloss={"macro": model, "pico": model, "femto": model}), 0)
    far = FarField(coupling, np.ones((net.n_cells, 1)), 20000.0)
    per_area = far.per_area(np.array([500.0]))[0, 0]
    assert per_area == pytest.approx(exact / (np.pi * 500.0**2), rel=1e-4)


COUNTRY = """
name = "small_country"
methods = ["max_rsrp", "dual"]

[network]
builder = "country"
side_m = 40000.0
n_cities = 3
city_radius_m = [1000.0, 3000.0]

[network.rural.macro]
density_per_km2 = 0.2
sectors = 3
antenna_gain_dbi = 14.0

[network.urban.macro]
density_per_km2 = 3.0
sectors = 3
antenna_gain_dbi = 14.0

[network.urban.pico]
density_per_km2 = 6.0

[users]
n = 3000
clustered_fraction = 0.7
cluster_tier = "pico"
cluster_radius_m = 300.0

[radio]
n_candidates = 4
interference_radius_m = 1000.0
"""


def test_a_small_country_scenario_builds_and_solves(tmp_path):
    from cellopt.study import load_scenario

    path = tmp_path / "small_country.toml"
    path.write_text(COUNTRY, encoding="utf-8")
    drop = load_scenario(path).build()
    cells = drop.network.cells
    assert set(cells["area"]) == {"rural", "urban"}
    assert set(cells.loc[cells["area"] == "urban", "tier"]) == {"macro", "pico"}
    assert cells["cell_id"].is_unique and cells["site_id"].nunique() < len(cells)
    assert drop.links.radius_m == 1000.0 and drop.links.far_field_db is not None
    sol = drop.solve("ipm", tol=1e-4)
    assert sol.status == "optimal"
    with pytest.raises(ValidationError, match="city_radius_m"):
        topology.country_layout(side_m=10000.0, city_radius_m=(1000.0, 6000.0), rng=1)
    with pytest.raises(ValidationError, match="n_cities"):
        topology.country_layout(n_cities=-1, rng=1)
