"""User drops: uniform, clustered around picos (TR 36.814 Config. 4b), indoor or outdoor."""

from __future__ import annotations

import numpy as np
import shapely

from cellopt.errors import ValidationError
from cellopt.network import Network, users_frame
from cellopt.topology.sampling import as_rng, points_in_discs, uniform_points_in

__all__ = ["drop_users"]


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
        Number of users. Give either `n` or `density_per_km2`.
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
    """
    rng = as_rng(rng)
    region = network.region if region is None else region
    if region is None:
        raise ValidationError("the network has no region; fix: pass region=<shapely polygon in "
                              "the network CRS>")
    if (n is None) == (density_per_km2 is None):
        raise ValidationError("give exactly one of n or density_per_km2")
    if n is None:
        if not (np.isfinite(density_per_km2) and density_per_km2 >= 0):
            raise ValidationError(f"density_per_km2={density_per_km2}; fix: give a value ≥ 0")
        n = int(rng.poisson(density_per_km2 * region.area / 1e6))
    if n < 0 or int(n) != n:
        raise ValidationError(f"n={n}; fix: give a whole number of users ≥ 0")
    for name, value in (("clustered_fraction", clustered_fraction),
                        ("indoor_fraction", indoor_fraction)):
        if not 0 <= value <= 1:
            raise ValidationError(f"{name}={value}; fix: give a fraction in [0, 1]")

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
