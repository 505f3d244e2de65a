"""Tests of drop_users' placement options: the hotspot tier, users inside the buildings of
femtocells, and demands per user."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely
from scipy.spatial import cKDTree

from cellopt import ValidationError
from cellopt.network import Network
from cellopt.topology import add_femtocells, add_picos, drop_users, hex_grid

#: Building radius of the default radio model [m].
RADIUS_M = 15.0


def xy_of(frame) -> np.ndarray:
    return np.column_stack([frame.geometry.x.to_numpy(), frame.geometry.y.to_numpy()])


def tier_xy(net: Network, tier: str) -> np.ndarray:
    return xy_of(net.cells[net.cells["tier"] == tier])


def nearest_m(points: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Distance [m] from each point to the nearest centre, shape (len(points),)."""
    return cKDTree(centres).query(points)[0]


def within_sd(count: float, trials: int, p: float, k: float = 4.0) -> bool:
    """`count` is within k binomial standard deviations of trials × p."""
    return abs(count - trials * p) <= k * math.sqrt(trials * p * (1 - p)) + 1e-9


@pytest.fixture(scope="module")
def picos() -> Network:
    return add_picos(hex_grid(n_rings=1), per_sector=2, rng=7)


@pytest.fixture(scope="module")
def femtos() -> Network:
    return add_femtocells(hex_grid(n_rings=1), density_per_km2=50, rng=1)


# ---------------------------------------------------------------------- defaults
#: The first and last positions [m], indoor and clustered counts of
#: ``drop_users(picos, 500, clustered_fraction=2/3, indoor_fraction=0.5, rng=3)``, taken
#: from the drop before the hotspot tier, co-location and demand options existed.
FROZEN_FIRST = [[499401.93608818215, 999605.2157598941],
                [500434.85223367374, 1000123.2430540966],
                [499414.1751562482, 999899.6904103548]]
FROZEN_LAST = [[500116.2979607739, 999478.082969262],
               [500087.4155066655, 1000180.1331380663],
               [499747.4132536734, 1000212.6641434062]]
FROZEN_INDOOR_HEAD = [1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 0]
FROZEN_COUNTS = (259, 333)
#: Count and first position [m] of ``drop_users(picos, density_per_km2=300,
#: indoor_fraction=0.3, rng=11)``, frozen the same way.
FROZEN_POISSON = (427, [500146.5002601415, 999293.033512558])


def test_defaults_are_bit_identical_to_the_explicit_call(picos):
    kw = {"clustered_fraction": 2 / 3, "indoor_fraction": 0.5, "rng": 3}
    a = drop_users(picos, 500, **kw).users
    b = drop_users(picos, 500, cluster_tier="pico", colocated_fraction=0.0, colocated_tier="femto",
                   building_radius_m=15.0, demand_mbps=np.inf, **kw).users
    np.testing.assert_array_equal(xy_of(a), xy_of(b))
    for column in ("indoor", "clustered", "colocated", "demand_mbps", "weight", "user_id"):
        np.testing.assert_array_equal(a[column].to_numpy(), b[column].to_numpy())
    assert not a["colocated"].any()


def test_defaults_match_the_frozen_drop(picos):
    users = drop_users(picos, 500, clustered_fraction=2 / 3, indoor_fraction=0.5, rng=3).users
    xy = xy_of(users)
    np.testing.assert_allclose(xy[:3], FROZEN_FIRST, rtol=0, atol=1e-6)
    np.testing.assert_allclose(xy[-3:], FROZEN_LAST, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(users["indoor"].to_numpy()[:12], FROZEN_INDOOR_HEAD)
    assert (int(users["indoor"].sum()), int(users["clustered"].sum())) == FROZEN_COUNTS
    poisson = drop_users(picos, density_per_km2=300, indoor_fraction=0.3, rng=11).users
    assert len(poisson) == FROZEN_POISSON[0]
    np.testing.assert_allclose(xy_of(poisson)[0], FROZEN_POISSON[1], rtol=0, atol=1e-6)


# ---------------------------------------------------------------------- co-located users
def test_colocated_users_are_inside_femto_buildings(femtos):
    n, p = 2000, 0.6
    base = drop_users(femtos, n, indoor_fraction=0.8, rng=5).users
    net = drop_users(femtos, n, indoor_fraction=0.8, colocated_fraction=p, rng=5)
    users = net.users
    femto_xy = tier_xy(net, "femto")
    indoor = users["indoor"].to_numpy(bool)
    eligible = indoor & ~users["clustered"].to_numpy(bool)
    np.testing.assert_array_equal(indoor, base["indoor"].to_numpy(bool))  # drawn before
    near = nearest_m(xy_of(users), femto_xy) <= RADIUS_M + 1e-9
    near0 = nearest_m(xy_of(base), femto_xy) <= RADIUS_M + 1e-9
    m, by_chance = int(eligible.sum()), int((near0 & eligible).sum())
    # each eligible user away from femtocells in the baseline moves there with probability p
    assert within_sd((near & eligible).sum() - by_chance, m - by_chance, p)
    colocated = users["colocated"].to_numpy(bool)
    assert within_sd(colocated.sum(), m, p)
    assert indoor[colocated].all() and near[colocated].all()
    assert not (near & ~near0 & ~indoor).any()  # outdoor users never move
    # the others keep their baseline positions exactly
    np.testing.assert_array_equal(xy_of(users)[~colocated], xy_of(base)[~colocated])


def test_without_colocation_the_share_near_femtos_is_the_area_share(femtos):
    n = 2000
    users = drop_users(femtos, n, indoor_fraction=0.8, rng=6).users
    assert not users["colocated"].any()
    discs = shapely.union_all(shapely.buffer(shapely.points(tier_xy(femtos, "femto")), RADIUS_M,
                                             quad_segs=64))
    share = shapely.intersection(discs, femtos.region).area / femtos.region.area
    near = nearest_m(xy_of(users), tier_xy(femtos, "femto")) <= RADIUS_M
    assert 0.01 < share < 0.1
    assert within_sd(near.sum(), n, share)


def test_colocated_all_and_radius(femtos):
    users = drop_users(femtos, 300, indoor_fraction=1.0, colocated_fraction=1.0,
                       building_radius_m=5.0, rng=2).users
    assert users["colocated"].all()
    assert nearest_m(xy_of(users), tier_xy(femtos, "femto")).max() <= 5.0 + 1e-9


def test_clustered_users_are_never_colocated(femtos):
    kw = {"clustered_fraction": 0.5, "cluster_tier": "femto", "indoor_fraction": 1.0, "rng": 4}
    base = drop_users(femtos, 400, **kw).users
    users = drop_users(femtos, 400, colocated_fraction=1.0, **kw).users
    clustered = users["clustered"].to_numpy(bool)
    colocated = users["colocated"].to_numpy(bool)
    np.testing.assert_array_equal(colocated, ~clustered)
    np.testing.assert_array_equal(xy_of(users)[clustered], xy_of(base)[clustered])


def test_colocation_with_another_tier(picos):
    users = drop_users(picos, 200, indoor_fraction=1.0, colocated_fraction=1.0,
                       colocated_tier="pico", rng=1).users
    assert nearest_m(xy_of(users), tier_xy(picos, "pico")).max() <= RADIUS_M + 1e-9


# ---------------------------------------------------------------------- hotspot tier
def test_cluster_around_femtocells(femtos):
    users = drop_users(femtos, 300, clustered_fraction=1.0, cluster_tier="femto", rng=3).users
    assert users["clustered"].all()
    d = nearest_m(xy_of(users), tier_xy(femtos, "femto"))
    assert d.max() <= 40.0 + 1e-9
    hit = cKDTree(tier_xy(femtos, "femto")).query(xy_of(users))[1]
    assert len(np.unique(hit)) > 0.8 * 76  # spread over the femtocells


def test_cluster_around_macros(picos):
    users = drop_users(picos, 200, clustered_fraction=0.5, cluster_tier="macro",
                       cluster_radius_m=30.0, rng=3).users
    clustered = users["clustered"].to_numpy(bool)
    assert clustered.sum() == 100
    assert nearest_m(xy_of(users)[clustered], tier_xy(picos, "macro")).max() <= 30.0 + 1e-9


@pytest.mark.parametrize("tier", ["giant", "Pico", 3, None])
def test_unknown_cluster_tier_raises(picos, tier):
    with pytest.raises(ValidationError, match=r"cluster_tier=.*fix: give one of"):
        drop_users(picos, 10, clustered_fraction=0.5, cluster_tier=tier, rng=0)


def test_unknown_colocated_tier_raises(femtos):
    with pytest.raises(ValidationError, match=r"colocated_tier='home'.*fix:"):
        drop_users(femtos, 10, colocated_fraction=0.5, colocated_tier="home", rng=0)


def test_missing_tiers_raise(picos, femtos):
    with pytest.raises(ValidationError, match=r"needs femto cells.*fix: .*clustered_fraction=0"):
        drop_users(picos, 10, clustered_fraction=0.5, cluster_tier="femto", rng=0)
    with pytest.raises(ValidationError, match=r"needs pico cells.*fix: add_picos\(\)"):
        drop_users(femtos, 10, clustered_fraction=0.5, rng=0)
    with pytest.raises(ValidationError, match=r"colocated_fraction > 0.*femto.*fix: add femtocells "
                                              r".*colocated_fraction = 0"):
        drop_users(picos, 10, indoor_fraction=1.0, colocated_fraction=0.5, rng=0)


# ---------------------------------------------------------------------- demand
def test_scalar_demand(femtos):
    users = drop_users(femtos, 20, demand_mbps=2.5, rng=0).users
    assert (users["demand_mbps"] == 2.5).all()


def test_demand_per_user(femtos):
    demand = np.linspace(0.5, 10.0, 20)
    demand[3] = np.inf  # full buffer
    users = drop_users(femtos, 20, demand_mbps=demand, rng=0).users
    np.testing.assert_array_equal(users["demand_mbps"].to_numpy(), demand)
    same = drop_users(femtos, 20, rng=0).users
    np.testing.assert_array_equal(xy_of(users), xy_of(same))  # no draw for the demands


def test_demand_array_of_the_wrong_shape_raises(femtos):
    with pytest.raises(ValidationError, match=r"demand_mbps has shape \(3,\).*\(5,\); fix:"):
        drop_users(femtos, 5, demand_mbps=np.ones(3), rng=0)
    with pytest.raises(ValidationError, match=r"demand_mbps has shape \(5,\).*density_per_km2.*fix:"):
        drop_users(femtos, density_per_km2=10, demand_mbps=np.ones(5), rng=0)


def test_demand_drawn_by_a_callable(femtos):
    def lognormal(rng, n):
        return rng.lognormal(0.0, 0.5, n)

    a = drop_users(femtos, 300, indoor_fraction=0.5, colocated_fraction=0.5,
                   demand_mbps=lognormal, rng=9).users
    b = drop_users(femtos, 300, indoor_fraction=0.5, colocated_fraction=0.5,
                   demand_mbps=lognormal, rng=9).users
    plain = drop_users(femtos, 300, indoor_fraction=0.5, colocated_fraction=0.5, rng=9).users
    demand = a["demand_mbps"].to_numpy()
    assert (demand > 0).all() and np.isfinite(demand).all() and demand.std() > 0
    np.testing.assert_array_equal(demand, b["demand_mbps"].to_numpy())
    np.testing.assert_array_equal(xy_of(a), xy_of(plain))  # drawn after every other draw
    c = drop_users(femtos, 300, demand_mbps=lambda rng, n: rng.lognormal(0.0, 0.5, n), rng=10)
    assert not np.array_equal(c.users["demand_mbps"].to_numpy(), demand)


def test_callable_demand_with_a_density(femtos):
    users = drop_users(femtos, density_per_km2=100, demand_mbps=lambda rng, n: rng.uniform(1, 2, n),
                       rng=1).users
    assert len(users) > 0 and users["demand_mbps"].between(1, 2).all()


@pytest.mark.parametrize("bad", [-1.0, 0.0, np.nan])
def test_bad_demands_name_their_rows(femtos, bad):
    demand = np.ones(10)
    demand[[2, 7]] = bad
    fix = r"fix: give demands > 0 in Mbit/s, or inf for full buffer"
    with pytest.raises(ValidationError, match=rf"rows 2, 7 \(2 in all\).*{fix}"):
        drop_users(femtos, 10, demand_mbps=demand, rng=0)
    with pytest.raises(ValidationError, match=rf"callable.*rows 2, 7 \(2 in all\).*{fix}"):
        drop_users(femtos, 10, demand_mbps=lambda rng, n: demand, rng=0)
    with pytest.raises(ValidationError, match=r"demand_mbps=.*fix: give a demand > 0"):
        drop_users(femtos, 10, demand_mbps=bad, rng=0)


def test_many_bad_demands_show_the_first_few(femtos):
    with pytest.raises(ValidationError, match=r"rows 0, 1, 2, 3, 4, … \(10 in all\)"):
        drop_users(femtos, 10, demand_mbps=-np.ones(10), rng=0)


@pytest.mark.parametrize("result, match", [
    (lambda rng, n: rng.uniform(1, 2, n + 1), r"shape \(11,\).*\(10,\)"),
    (lambda rng, n: 3.0, r"shape \(\)"),
    (lambda rng, n: np.array(["a"] * n), "dtype"),
])
def test_callable_demand_of_the_wrong_shape_raises(femtos, result, match):
    with pytest.raises(ValidationError, match=match):
        drop_users(femtos, 10, demand_mbps=result, rng=0)


# ---------------------------------------------------------------------- bad values
@pytest.mark.parametrize("kwargs, match", [
    ({"colocated_fraction": 1.5}, r"colocated_fraction=1\.5 .*fix: give a fraction in \[0, 1\]"),
    ({"colocated_fraction": -0.1}, r"colocated_fraction=-0\.1 .*fix:"),
    ({"colocated_fraction": np.nan}, r"colocated_fraction=nan .*fix:"),
    ({"colocated_fraction": "0.5"}, r"colocated_fraction='0\.5' .*fix:"),
    ({"building_radius_m": 0.0}, r"building_radius_m=0 .*fix: give a building radius > 0"),
    ({"building_radius_m": -5.0}, r"building_radius_m=-5 .*fix:"),
    ({"building_radius_m": np.inf}, r"building_radius_m=inf .*fix:"),
    ({"demand_mbps": "fast"}, r"demand_mbps='fast' .*fix:"),
])
def test_bad_values_are_named(femtos, kwargs, match):
    with pytest.raises(ValidationError, match=match):
        drop_users(femtos, 10, indoor_fraction=0.5, **kwargs, rng=0)


# ------------------------------------------------------------------ minimum distance by redraw
def wrapped_nearest_m(net: Network, points: np.ndarray, tier: str) -> np.ndarray:
    """Distance [m] to the nearest cell of `tier` or wraparound image of one."""
    xy = tier_xy(net, tier)
    images = np.vstack([xy + shift for shift in net.wrap_shifts_m])
    return nearest_m(points, images)


def test_min_distance_redraws_users_too_close_to_a_cell():
    base = add_picos(hex_grid(2, wraparound=True), rng=1)
    near = drop_users(base, 3000, clustered_fraction=2 / 3, rng=2)
    far = drop_users(base, 3000, clustered_fraction=2 / 3, rng=2,
                     min_distance_m={"macro": 35.0, "pico": 10.0})
    before, after = xy_of(near.users), xy_of(far.users)
    # without the option some users are inside the keep-out discs (the test can fail)
    assert (wrapped_nearest_m(near, before, "macro") < 35).sum() > 0
    assert (wrapped_nearest_m(near, before, "pico") < 10).sum() > 0
    assert wrapped_nearest_m(far, after, "macro").min() >= 35.0
    assert wrapped_nearest_m(far, after, "pico").min() >= 10.0
    # users outside the discs keep their places; redrawn hotspot users stay in a hotspot
    kept = (wrapped_nearest_m(near, before, "macro") >= 35) & (
        wrapped_nearest_m(near, before, "pico") >= 10)
    np.testing.assert_array_equal(before[kept], after[kept])
    hot = far.users["clustered"].to_numpy()
    assert nearest_m(after[hot], tier_xy(far, "pico")).max() <= 40.0 + 1e-9


def test_min_distance_default_draws_nothing_and_bad_values_are_refused():
    base = hex_grid(1)
    a = drop_users(base, 200, rng=4)
    b = drop_users(base, 200, rng=4, min_distance_m=0.0)
    np.testing.assert_array_equal(xy_of(a.users), xy_of(b.users))
    with pytest.raises(ValidationError, match="unknown tiers"):
        drop_users(base, 10, rng=4, min_distance_m={"marco": 35.0})
    with pytest.raises(ValidationError, match="min_distance_m"):
        drop_users(base, 10, rng=4, min_distance_m=-1.0)
    with pytest.raises(ValidationError, match="redraws"):
        drop_users(base, 10, rng=4, min_distance_m=1000.0)
