"""User drops: uniform, clustered around hotspot cells (TR 36.814 Config. 4b), indoor or
outdoor, co-located with indoor cells, with a demand per user."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import shapely
from scipy.spatial import cKDTree

from cellopt.checks import check_count, check_real
from cellopt.errors import ValidationError, check_memory
from cellopt.network import TIERS, Network, users_frame
from cellopt.topology.areas import cells_region
from cellopt.topology.sampling import as_rng, check_region, points_in_discs, uniform_points_in

__all__ = ["USER_BYTES", "Demand", "drop_users", "drop_users_nbytes"]

#: Peak memory per user of a drop [bytes]: candidate positions, the Point geometry, the
#: columns and the copy made when users are appended (measured: about 330).
USER_BYTES = 500

#: A traffic demand [Mbit/s]: one number for every user, one per user (shape (n,)), or a
#: callable ``f(rng, n)`` that draws the n demands.
Demand = float | np.ndarray | Callable[[np.random.Generator, int], np.ndarray]

_FIX = "use fewer users (n) or a lower density_per_km2, or a smaller region"
_DEMAND_FIX = "give demands > 0 in Mbit/s, or inf for full buffer"
#: How to give a network cells of each tier, for error messages.
_ADD = {"macro": "add macro cells (e.g. hex_grid())", "pico": "add_picos()",
        "femto": "add femtocells (add_femtocells())"}
#: Offending rows named in an error message before it says "…".
_SHOW = 5


def drop_users_nbytes(n_users: float, n_existing: int = 0) -> float:
    """Estimated peak memory [bytes] of dropping `n_users` into a network that has `n_existing`."""
    return (float(n_users) + n_existing) * USER_BYTES


def _check_tier(tier: object, name: str) -> str:
    """`tier` if it is one of :data:`~cellopt.network.TIERS`, else a ValidationError."""
    if not isinstance(tier, str) or tier not in TIERS:
        raise ValidationError(f"{name}={tier!r} is not a tier; fix: give one of "
                              f"{', '.join(map(repr, TIERS))}")
    return tier


def _tier_xy(network: Network, tier: str) -> np.ndarray:
    """Positions [m] of the cells of `tier`, shape (n_tier_cells, 2)."""
    cells = network.cells[network.cells["tier"] == tier]
    return np.column_stack([cells.geometry.x.to_numpy(float), cells.geometry.y.to_numpy(float)])


def _keep_out_m(min_distance_m: float | Mapping[str, float]) -> dict[str, float]:
    """The checked `min_distance_m` of :func:`drop_users` as {tier: distance > 0}."""
    if isinstance(min_distance_m, Mapping):
        unknown = [t for t in min_distance_m if t not in TIERS]
        if unknown:
            raise ValidationError(f"min_distance_m has unknown tiers {unknown}; fix: use tiers "
                                  f"from {list(TIERS)}")
        given = dict(min_distance_m)
    else:
        given = dict.fromkeys(TIERS, min_distance_m)
    out = {t: check_real(v, f"min_distance_m[{t!r}]", "min_dist_macro_m") for t, v in given.items()}
    return {t: v for t, v in out.items() if v > 0}


#: Rounds of redrawing before :func:`drop_users` gives up on `min_distance_m`.
_REDRAW_ROUNDS = 200


def _redraw_close(xy: np.ndarray, network: Network, keep_out: Mapping[str, float],
                  region: shapely.Geometry, hot: np.ndarray, cluster_radius_m: float,
                  rng: np.random.Generator) -> None:
    """Draw users closer than ``keep_out[tier]`` to a cell of that tier again, in place.

    The first ``len(xy) − len(hot)`` users are uniform in `region`, the rest in the disc
    around their hotspot `hot`; each is redrawn from its own distribution.
    """
    trees = [(cKDTree(_images(_tier_xy(network, t), network.wrap_shifts_m)), d)
             for t, d in keep_out.items() if (network.cells["tier"] == t).any()]
    n_uniform = len(xy) - len(hot)
    todo = np.arange(len(xy))
    for _ in range(_REDRAW_ROUNDS):
        close = np.zeros(len(todo), bool)
        for tree, d in trees:
            close |= tree.query(xy[todo], distance_upper_bound=d)[0] < d
        todo = todo[close]
        if not len(todo):
            return
        uniform = todo[todo < n_uniform]
        xy[uniform] = uniform_points_in(region, len(uniform), rng)
        clustered = todo[todo >= n_uniform]
        xy[clustered] = points_in_discs(hot[clustered - n_uniform], cluster_radius_m, rng)
    raise ValidationError(f"{len(todo)} users are still within min_distance_m={dict(keep_out)} of "
                          f"a cell after {_REDRAW_ROUNDS} redraws; fix: a smaller min_distance_m "
                          "(or a larger cluster_radius_m)")


def _images(xy: np.ndarray, shifts: np.ndarray | None) -> np.ndarray:
    """`xy` and its wraparound images (all `shifts`), shape (n × images, 2)."""
    if shifts is None:
        return xy
    return (xy[None, :, :] + np.asarray(shifts)[:, None, :]).reshape(-1, 2)


def _rows(mask: np.ndarray) -> str:
    """The first few rows where `mask` is True, e.g. ``"3, 8, 12 (of 40)"``."""
    rows = np.flatnonzero(mask)
    shown = ", ".join(map(str, rows[:_SHOW])) + (", …" if len(rows) > _SHOW else "")
    return f"{shown} ({len(rows)} in all)"


def _demand_array(values: object, n: int, what: str) -> np.ndarray:
    """`values` as demands [Mbit/s] of shape (n,), each > 0 (inf allowed), else a ValidationError.

    Parameters
    ----------
    values : array_like, shape (n,)
        Demands [Mbit/s] given or drawn.
    n : int
        Number of users of the drop.
    what : str
        How messages name the values, e.g. ``"demand_mbps"``.

    Returns
    -------
    ndarray, shape (n,)
        The demands as floats [Mbit/s].
    """
    arr = np.asarray(values)
    if arr.dtype.kind not in "iuf":
        raise ValidationError(f"{what} has dtype {arr.dtype}, not numbers; fix: {_DEMAND_FIX}")
    if arr.shape != (n,):
        raise ValidationError(f"{what} has shape {arr.shape}, but the drop has n={n} users, "
                              f"shape ({n},); fix: give one demand per user")
    arr = arr.astype(float)
    bad = ~(arr > 0)  # NaN, zero and negative values (and -inf); +inf is full buffer
    if bad.any():
        raise ValidationError(f"{what} is not > 0 for the users in rows {_rows(bad)} of the drop "
                              f"(first values: {arr[bad][:_SHOW].tolist()}); fix: {_DEMAND_FIX}")
    return arr


def drop_users(
    network: Network,
    n: int | None = None,
    *,
    density_per_km2: float | None = None,
    clustered_fraction: float = 0.0,
    cluster_radius_m: float = 40.0,
    cluster_tier: str = "pico",
    indoor_fraction: float = 0.0,
    colocated_fraction: float = 0.0,
    colocated_tier: str = "femto",
    building_radius_m: float = 15.0,
    region: shapely.Geometry | None = None,
    weight: float = 1.0,
    demand_mbps: Demand = np.inf,
    min_distance_m: float | Mapping[str, float] = 0.0,
    rng: np.random.Generator | int | None = None,
) -> Network:
    """Drop users into the network; they are appended to any users it already has.

    The draws come in a fixed order: the count (with `density_per_km2`), the uniform
    positions, the hotspot cells and positions of the clustered users, the redraws of
    users too close to a cell (only with `min_distance_m`), the indoor flags,
    then, only when ``colocated_fraction > 0``, the co-location of indoor users, and
    last, only when `demand_mbps` is a callable, the demands. Options left at their
    defaults draw nothing, so adding an option never moves the draws before it.

    Parameters
    ----------
    network : Network
    n : int, optional
        Number of users (≥ 0; 0 gives a valid network without new users). Give either
        `n` or `density_per_km2`.
    density_per_km2 : float, optional
        Users per km² of `region`; the count is Poisson(density × area), a Poisson point
        process.
    clustered_fraction : float
        Share of users, in [0, 1], dropped uniformly in a disc of `cluster_radius_m`
        around a cell of `cluster_tier` chosen uniformly at random (picos, 2/3 and 40 m
        in TR 36.814 Config. 4b); the rest are uniform in `region`. The count is
        ``round(clustered_fraction × n)``. Needs cells of `cluster_tier` when > 0.
    cluster_radius_m : float
        Radius of the hotspot around each cell of `cluster_tier` [m].
    cluster_tier : {'macro', 'pico', 'femto'}
        The tier whose cells are the hotspot centres.
    indoor_fraction : float
        Probability, in [0, 1], that a user is indoors (wall loss applies to its links).
    colocated_fraction : float
        Probability, in [0, 1], that an indoor user who is not clustered is inside the
        building of a cell of `colocated_tier`: it moves to a point drawn uniformly in
        the disc of `building_radius_m` around such a cell, chosen uniformly at random.
        This models the traffic of people inside the homes and shops that have a
        femtocell: their link to it crosses no wall (see
        :attr:`cellopt.radio.RadioModel.indoor_tiers`). Needs cells of `colocated_tier`
        when > 0.
    colocated_tier : {'femto', 'pico', 'macro'}
        The tier of the cells whose buildings hold the co-located users.
    building_radius_m : float
        Radius of a building around its cell [m], > 0 and finite; give the
        :attr:`~cellopt.radio.RadioModel.building_radius_m` of the radio model (15 m by
        default) so that co-located users count as inside.
    region : shapely.Polygon, optional
        Where uniform users go; default ``network.region``, and for a network without
        one (e.g. read by :func:`~cellopt.topology.read_cells`) its cells' convex hull
        buffered by 500 m (:func:`~cellopt.topology.cells_region`, what ``cellopt run``
        uses for a cell file), which then becomes the region of the network returned.
    weight : float
        Utility weight of every new user (> 0).
    demand_mbps : float, ndarray of shape (n,), or callable
        Traffic demand of the new users [Mbit/s], each > 0 (inf = elastic, full buffer):
        one number for every user; one value per user (needs `n`, not
        `density_per_km2`); or a callable ``f(rng, n) -> ndarray of shape (n,)`` called
        with this function's generator after all its other draws, e.g.
        ``lambda rng, n: rng.lognormal(0.0, 0.5, n)``.
    min_distance_m : float or mapping tier -> float
        Users closer than this [m] to a cell of the tier (or to its nearest wraparound
        image) are drawn again from the same distribution (the same hotspot for a
        clustered user) until none is (TR 36.814: 35 m from a macro, 10 m from a pico).
        One number holds for every tier; 0 (default) draws nothing. The radio model's
        own ``min_distance_m`` only raises short distances in the path loss; this keeps
        the users out instead.
    rng : numpy.random.Generator or int, optional

    Returns
    -------
    Network
        A copy with the new users appended. Besides the required user columns, the new
        rows have the bool columns ``clustered`` (dropped in a hotspot) and
        ``colocated`` (inside the building of a cell of `colocated_tier`).

    Raises
    ------
    ValidationError
        A parameter of the wrong type or out of range, both or neither of `n` and
        `density_per_km2`, no usable region, an unknown tier, clustering or co-location
        without cells of the tier, or demands that are not > 0 or of the wrong shape
        (the message names the rows), or a `min_distance_m` that leaves no room.
    ResourceLimitError
        When the users would not fit in memory (:data:`USER_BYTES` each), before they
        are drawn.
    """
    rng = as_rng(rng)
    if not isinstance(network, Network):
        raise ValidationError(f"network is a {type(network).__name__}; fix: give a cellopt Network")
    default = region is None and network.region is None
    region = network.region if region is None else region
    if region is None:  # e.g. read from a cell file: what `cellopt run` gives it
        region = cells_region(network)
    region = check_region(region)
    if (n is None) == (density_per_km2 is None):
        raise ValidationError("give exactly one of n or density_per_km2; fix: e.g. n=100 or "
                              "density_per_km2=500")
    clustered_fraction = check_real(clustered_fraction, "clustered_fraction")
    indoor_fraction = check_real(indoor_fraction, "indoor_fraction")
    cluster_radius_m = check_real(cluster_radius_m, "cluster_radius_m")
    cluster_tier = _check_tier(cluster_tier, "cluster_tier")
    colocated_fraction = check_real(colocated_fraction, "colocated_fraction")
    colocated_tier = _check_tier(colocated_tier, "colocated_tier")
    building_radius_m = check_real(building_radius_m, "building_radius_m")
    if building_radius_m == 0:
        raise ValidationError("building_radius_m=0 m leaves no room for co-located users; fix: "
                              "give a building radius > 0 in metres (15 m by default)")
    weight = check_real(weight, "weight")
    keep_out = _keep_out_m(min_distance_m)
    draw_demand = callable(demand_mbps)
    per_user = isinstance(demand_mbps, (np.ndarray, list, tuple))
    if per_user and n is None:
        raise ValidationError(
            f"demand_mbps has shape {np.shape(demand_mbps)}, one value per user, but "
            "density_per_km2 draws a random number of users; fix: give n, or a callable "
            "demand_mbps(rng, n) that draws the demands")
    if not draw_demand and not per_user:
        demand_mbps = check_real(demand_mbps, "demand_mbps")
    colocated_xy = _tier_xy(network, colocated_tier)
    if colocated_fraction > 0 and not len(colocated_xy):
        raise ValidationError(
            f"colocated_fraction > 0 places indoor users inside the buildings of {colocated_tier} "
            f"cells, but the network has none; fix: {_ADD[colocated_tier]} first, give another "
            "colocated_tier, or set colocated_fraction = 0")
    if n is None:
        mean = check_real(density_per_km2, "density_per_km2") * region.area / 1e6
        # checked on the mean before drawing: a huge mean would also overflow the Poisson draw
        check_memory(drop_users_nbytes(mean, network.n_users),
                     f"drop_users: density_per_km2={density_per_km2:g} over {region.area / 1e6:.3g} km² "
                     f"(about {mean:.3g} users)", _FIX)
        n = int(rng.poisson(mean))
    n = check_count(n, "n", fix="give a whole number of users ≥ 0")
    check_memory(drop_users_nbytes(n, network.n_users), f"drop_users: n={n:,} users", _FIX)
    if per_user:
        demand_mbps = _demand_array(demand_mbps, n, "demand_mbps")

    n_clustered = round(clustered_fraction * n)
    hotspots = _tier_xy(network, cluster_tier)
    if n_clustered and not len(hotspots):
        raise ValidationError(f"clustered_fraction > 0 needs {cluster_tier} cells "
                              f"(cluster_tier={cluster_tier!r}); fix: {_ADD[cluster_tier]} first, "
                              "give another cluster_tier, or set clustered_fraction=0")
    xy = uniform_points_in(region, n - n_clustered, rng)
    hot = np.empty((0, 2))
    if n_clustered:
        hot = hotspots[rng.integers(0, len(hotspots), n_clustered)]
        xy = np.vstack([xy, points_in_discs(hot, cluster_radius_m, rng)])
    if keep_out:
        _redraw_close(xy, network, keep_out, region, hot, cluster_radius_m, rng)
    indoor = rng.uniform(size=n) < indoor_fraction
    clustered = np.arange(n) >= n - n_clustered
    colocated = np.zeros(n, dtype=bool)
    if colocated_fraction > 0:
        candidates = np.flatnonzero(indoor & ~clustered)
        chosen = candidates[rng.uniform(size=len(candidates)) < colocated_fraction]
        homes = colocated_xy[rng.integers(0, len(colocated_xy), len(chosen))]
        xy[chosen] = points_in_discs(homes, building_radius_m, rng)
        colocated[chosen] = True
    if draw_demand:
        demand_mbps = _demand_array(demand_mbps(rng, n), n, "demand_mbps drawn by the callable")
    new = users_frame(xy[:, 0], xy[:, 1], crs=network.crs, indoor=indoor, weight=weight,
                      demand_mbps=demand_mbps, clustered=clustered, colocated=colocated)
    out = network.add_users(new)
    return (out.replace(region=region) if default else out).validate()
