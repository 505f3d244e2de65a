"""Random points in shapely geometries, vectorized (rejection sampling in the bounding box)."""

from __future__ import annotations

from typing import Any

import numpy as np
import shapely

from cellopt.checks import as_float_array, check_count, check_number
from cellopt.errors import ValidationError

__all__ = ["as_rng", "check_region", "points_in_discs", "uniform_points_in"]

#: Most candidate points one rejection round draws (2**24: 256 MiB of coordinates). Only
#: regions that fill a tiny share of their bounding box, or drops of more than about ten
#: million points, reach it; below it the draws are exactly those of an uncapped round.
MAX_CANDIDATES = 1 << 24

_POLYGONAL = ("Polygon", "MultiPolygon")


def as_rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    """``numpy.random.default_rng(rng)``; a Generator passes through unchanged.

    Raises
    ------
    ValidationError
        Anything numpy cannot seed from (negative ints, floats, strings, booleans).
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (bool, np.bool_, float, str)):
        raise ValidationError(f"rng={rng!r} is a {type(rng).__name__}; fix: give an int seed ≥ 0, "
                              "a numpy.random.Generator or None")
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError) as err:
        raise ValidationError(f"rng={rng!r} cannot seed a generator ({err}); fix: give an int "
                              "seed ≥ 0, a numpy.random.Generator or None") from None


def check_region(region: Any, name: str = "region") -> shapely.Geometry:
    """`region` if it is a shapely (Multi)Polygon with positive area, else a ValidationError."""
    if not isinstance(region, shapely.Geometry) or region.geom_type not in _POLYGONAL:
        raise ValidationError(
            f"{name} is a {type(region).__name__}"
            + (f" ({region.geom_type})" if isinstance(region, shapely.Geometry) else "")
            + "; fix: give a shapely Polygon or MultiPolygon in the network CRS"
        )
    if region.is_empty or not region.area > 0 or not np.isfinite(region.bounds).all():
        raise ValidationError(
            f"{name} is empty or has zero area; fix: give a polygon with positive area "
            "in the network CRS (metres)"
        )
    return region


def uniform_points_in(
    geometry: shapely.Geometry, n: int, rng: np.random.Generator
) -> np.ndarray:
    """Draw `n` points uniformly in a (multi)polygon.

    Parameters
    ----------
    geometry : shapely.Polygon or MultiPolygon
        The area, in metres.
    n : int
        Number of points.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (n, 2)
        Coordinates [m].

    Raises
    ------
    ValidationError
        A geometry that is not a polygon with positive area (when n > 0).
    """
    n = check_count(n, "n", fix="give a whole number of points ≥ 0")
    _check_generator(rng)
    if n == 0:
        return np.empty((0, 2))
    check_region(geometry)
    x0, y0, x1, y1 = geometry.bounds
    fill = geometry.area / ((x1 - x0) * (y1 - y0))
    shapely.prepare(geometry)
    out: list[np.ndarray] = []
    have = 0
    while have < n:
        m = min(int((n - have) / fill * 1.2) + 16, MAX_CANDIDATES)
        xy = rng.uniform((x0, y0), (x1, y1), size=(m, 2))
        xy = xy[shapely.contains_xy(geometry, xy[:, 0], xy[:, 1])]
        out.append(xy)
        have += len(xy)
    return np.concatenate(out)[:n]


def points_in_discs(centers_m: np.ndarray, radius_m: float, rng: np.random.Generator) -> np.ndarray:
    """One point uniformly in the disc of `radius_m` around each centre.

    Parameters
    ----------
    centers_m : ndarray, shape (n, 2)
    radius_m : float
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (n, 2)
    """
    centers_m = as_float_array(centers_m, "centers_m", fix="give centre positions in metres, "
                               "shape (n, 2)")
    if centers_m.ndim != 2 or centers_m.shape[1] != 2:
        raise ValidationError(f"centers_m has shape {centers_m.shape}; fix: give centre positions "
                              "in metres, shape (n, 2)")
    radius_m = check_number(radius_m, "radius_m", low=0.0, unit="m",
                            fix="give a finite radius ≥ 0 in metres")
    _check_generator(rng)
    n = len(centers_m)
    r = radius_m * np.sqrt(rng.uniform(size=n))
    phi = rng.uniform(0, 2 * np.pi, size=n)
    return centers_m + np.column_stack([r * np.cos(phi), r * np.sin(phi)])


def _check_generator(rng: Any) -> None:
    if not isinstance(rng, np.random.Generator):
        raise ValidationError(f"rng is a {type(rng).__name__}; fix: give a numpy.random.Generator "
                              "(as_rng(seed) makes one)")
