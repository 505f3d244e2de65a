"""A synthetic national network: a rural Poisson layout with dense city windows on top."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd

from cellopt.checks import check_count, check_number
from cellopt.errors import ValidationError
from cellopt.network import Network
from cellopt.topology.hexgrid import SYNTHETIC_ORIGIN_M, layout_crs
from cellopt.topology.poisson import poisson_layout
from cellopt.topology.sampling import as_rng

__all__ = ["RURAL_TIERS", "URBAN_TIERS", "country_layout"]

#: Rural tiers: three-sector macro sites, about 2.2 km apart (0.2 sites per km²).
RURAL_TIERS: dict[str, dict[str, Any]] = {"macro": {"density_per_km2": 0.2, "sectors": 3}}
#: Urban tiers: three-sector macro sites about 580 m apart (3 per km²) and 6 picos per km².
URBAN_TIERS: dict[str, dict[str, Any]] = {
    "macro": {"density_per_km2": 3.0, "sectors": 3},
    "pico": {"density_per_km2": 6.0},
}


def country_layout(
    *,
    side_m: float = 316_000.0,
    n_cities: int = 50,
    city_radius_m: tuple[float, float] = (1500.0, 8000.0),
    rural: Mapping[str, Mapping[str, Any]] = RURAL_TIERS,
    urban: Mapping[str, Mapping[str, Any]] = URBAN_TIERS,
    bandwidth_mhz: float = 10.0,
    origin_lonlat: tuple[float, float] | None = None,
    crs: str | None = None,
    rng: np.random.Generator | int | None = None,
) -> Network:
    """A national-scale network: rural cells everywhere, dense cells in city discs.

    The country is a square of side `side_m` (default about 10⁵ km²) covered by a rural
    :func:`~cellopt.topology.poisson_layout`. Each of `n_cities` cities is a disc,
    centred uniformly in the square (kept a radius away from the border), with a radius
    drawn log-uniformly from `city_radius_m`; its cells are an urban
    :func:`~cellopt.topology.poisson_layout` in the disc (rural cells inside the disc
    are kept: cities have their rural-style masts too). No wraparound: a country has
    borders. With the defaults: about 60,000 rural and 40,000 urban cells, 100,000 in
    all; drop users with ``drop_users(net, n, clustered_fraction=0.7,
    cluster_tier="pico")`` to put 70 % of them in the cities.

    Parameters
    ----------
    side_m : float
        Side of the country [m] (316 km: 10⁵ km²).
    n_cities : int
        Number of cities (≥ 0).
    city_radius_m : (float, float)
        Smallest and largest city radius [m]; 0 < low ≤ high < side_m / 2.
    rural, urban : mapping tier -> mapping
        Tier tables of the rural and urban layouts (as
        :func:`~cellopt.topology.poisson_layout`).
    bandwidth_mhz : float
    origin_lonlat, crs : optional
        Where the layout lies: its centre at (lon, lat) [degrees] (default Munich), or
        a projected CRS given instead, as for :func:`~cellopt.topology.hex_grid`.
    rng : numpy.random.Generator or int, optional
        The one generator of every draw: rural layout, city centres and radii, then
        each city's layout in turn.

    Returns
    -------
    Network
        Rural cells first, then each city's; ``cell_id`` ``0..n_cells-1``, ``site_id``
        distinct; an ``area`` column (``'rural'`` or ``'urban'``); region the square; no
        users.
    """
    gen = as_rng(rng)
    n_cities = check_count(n_cities, "n_cities", fix="give a whole number of cities ≥ 0")
    crs = layout_crs(crs, origin_lonlat)
    fix = "give (smallest, largest) radii in metres, 0 < smallest ≤ largest < side_m / 2"
    if isinstance(city_radius_m, (str, bytes)) or not isinstance(city_radius_m, Sequence) \
            or len(city_radius_m) != 2:
        raise ValidationError(f"city_radius_m={city_radius_m!r}; fix: {fix}")
    low, high = (check_number(v, f"city_radius_m[{k}]", low=0.0, low_open=True, unit="m", fix=fix)
                 for k, v in enumerate(city_radius_m))
    country = poisson_layout(rural, side_m=side_m, wraparound=False, bandwidth_mhz=bandwidth_mhz,
                             crs=crs, rng=gen)  # checks side_m, the tiers and the band
    side_m = float(side_m)
    if not (0 < low <= high < side_m / 2):
        raise ValidationError(f"city_radius_m=({low:g}, {high:g}) with side_m={side_m:g}; fix: give "
                              "0 < smallest ≤ largest < side_m / 2")
    radius = np.exp(gen.uniform(math.log(low), math.log(high), n_cities))
    centre = SYNTHETIC_ORIGIN_M + gen.uniform(-0.5, 0.5, (n_cities, 2)) * (side_m - 2 * radius[:, None])
    frames = [country.cells.assign(area="rural")]
    for (cx, cy), r in zip(centre, radius, strict=True):  # a loop over cities, each many cells
        city = poisson_layout(urban, side_m=2 * r, wraparound=False, bandwidth_mhz=bandwidth_mhz,
                              crs=crs, rng=gen).cells
        shift = np.array([cx, cy]) - SYNTHETIC_ORIGIN_M
        xy = np.column_stack([city.geometry.x, city.geometry.y]) + shift
        inside = np.hypot(xy[:, 0] - cx, xy[:, 1] - cy) <= r
        city = city[inside].assign(area="urban")
        frames.append(city.set_geometry(gpd.points_from_xy(xy[inside, 0], xy[inside, 1], crs=crs)))
    cells = gpd.GeoDataFrame(pd.concat(frames, ignore_index=True), crs=crs)
    # ids run on across the pieces; sectors of one site keep one site id
    piece = np.repeat(np.arange(len(frames)), [len(f) for f in frames])
    _, cells["site_id"] = np.unique(np.column_stack([piece, cells["site_id"].to_numpy()]), axis=0,
                                    return_inverse=True)
    cells["cell_id"] = np.arange(len(cells))
    return country.replace(cells=cells).validate()
