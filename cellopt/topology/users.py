"""User drops: uniform, clustered around picos (TR 36.814 Config. 4b), indoor or outdoor."""

from __future__ import annotations

import numpy as np
import shapely

from cellopt.errors import ValidationError, check_memory
from cellopt.network import Network, check_count, check_real, users_frame
from cellopt.topology.sampling import as_rng, check_region, points_in_discs, uniform_points_in

__all__ = ["USER_BYTES", "drop_users", "drop_users_nbytes"]

#: Peak memory per user of a drop [bytes]: candidate positions, the Point geometry, the
#: columns and the copy made when users are appended (measured: about 330).
USER_BYTES = 500

_FIX = "use fewer users (n) or a lower density_per_km2, or a smaller region"


def drop_users_nbytes(n_users: float, n_existing: int = 0) -> float:
    """Estimated peak memory [bytes] of dropping `n_users` into a network that has `n_existing`."""
    return (float(n_users) + n_existing) * USER_BYTES


def drop_users(
    network: Network,
    n: int | None = None,
    *,
    density_per_km2: float | None = None,
    clustered_fraction: float = 0.0,
    cluster_radius_m: float = 40.0,
    indoor_fraction: float = 0.0,
    region: shapely.Geometry | None = None,
    weight: float = 1.0,
    demand_mbps: float = np.inf,
    rng: np.random.Generator | int | None = None,
) -> Network:
    """Drop users into the network; they are appended to any users it already has.

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
        Share of users dropped uniformly in a disc of `cluster_radius_m` around a pico
        chosen uniformly at random (2/3 and 40 m in TR 36.814 Config. 4b); the rest are
        uniform in `region`. Needs pico cells when > 0.
    cluster_radius_m : float
        Radius of the hotspot around each pico [m].
    indoor_fraction : float
        Probability that a user is indoors (wall loss applies to its links).
    region : shapely.Polygon, optional
        Where uniform users go; default ``network.region``.
    weight, demand_mbps : float
        Utility weight and traffic demand [Mbit/s] of every new user (inf = elastic).
    rng : numpy.random.Generator or int, optional

    Returns
    -------
    Network

    Raises
    ------
    ValidationError
        A parameter of the wrong type or out of range, both or neither of `n` and
        `density_per_km2`, no usable region, or clustering without picos.
    ResourceLimitError
        When the users would not fit in memory (:data:`USER_BYTES` each), before they
        are drawn.
    """
    rng = as_rng(rng)
    if not isinstance(network, Network):
        raise ValidationError(f"network is a {type(network).__name__}; fix: give a cellopt Network")
    region = network.region if region is None else region
    if region is None:
        raise ValidationError("the network has no region; fix: pass region=<shapely polygon in "
                              "the network CRS>")
    region = check_region(region)
    if (n is None) == (density_per_km2 is None):
        raise ValidationError("give exactly one of n or density_per_km2; fix: e.g. n=100 or "
                              "density_per_km2=500")
    clustered_fraction = check_real(clustered_fraction, "clustered_fraction")
    indoor_fraction = check_real(indoor_fraction, "indoor_fraction")
    cluster_radius_m = check_real(cluster_radius_m, "cluster_radius_m")
    weight = check_real(weight, "weight")
    demand_mbps = check_real(demand_mbps, "demand_mbps")
    if n is None:
        mean = check_real(density_per_km2, "density_per_km2") * region.area / 1e6
        # checked on the mean before drawing: a huge mean would also overflow the Poisson draw
        check_memory(drop_users_nbytes(mean, network.n_users),
                     f"drop_users: density_per_km2={density_per_km2:g} over {region.area / 1e6:.3g} km² "
                     f"(about {mean:.3g} users)", _FIX)
        n = int(rng.poisson(mean))
    n = check_count(n, "n", fix="give a whole number of users ≥ 0")
    check_memory(drop_users_nbytes(n, network.n_users), f"drop_users: n={n:,} users", _FIX)

    n_clustered = round(clustered_fraction * n)
    picos = network.cells[network.cells["tier"] == "pico"]
    if n_clustered and not len(picos):
        raise ValidationError("clustered_fraction > 0 needs pico cells; fix: add_picos() first "
                              "or set clustered_fraction=0")
    xy = uniform_points_in(region, n - n_clustered, rng)
    if n_clustered:
        pxy = np.column_stack([picos.geometry.x, picos.geometry.y])
        hot = pxy[rng.integers(0, len(pxy), n_clustered)]
        xy = np.vstack([xy, points_in_discs(hot, cluster_radius_m, rng)])
    indoor = rng.uniform(size=n) < indoor_fraction
    clustered = np.arange(n) >= n - n_clustered
    new = users_frame(xy[:, 0], xy[:, 1], crs=network.crs, indoor=indoor, weight=weight,
                      demand_mbps=demand_mbps, clustered=clustered)
    return network.add_users(new).validate()
