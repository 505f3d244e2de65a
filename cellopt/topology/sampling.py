"""Random points in shapely geometries, vectorized (rejection sampling in the bounding box)."""

from __future__ import annotations

import numpy as np
import shapely

__all__ = ["as_rng", "points_in_discs", "uniform_points_in"]


def as_rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    """``numpy.random.default_rng(rng)``; a Generator passes through unchanged."""
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


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
    """
    if n == 0:
        return np.empty((0, 2))
    if geometry.is_empty or geometry.area <= 0:
        raise ValueError("cannot draw points in an empty geometry or one with zero area")
    x0, y0, x1, y1 = geometry.bounds
    fill = geometry.area / ((x1 - x0) * (y1 - y0))
    shapely.prepare(geometry)
    out: list[np.ndarray] = []
    have = 0
    while have < n:
        m = int((n - have) / fill * 1.2) + 16
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
    n = len(centers_m)
    r = radius_m * np.sqrt(rng.uniform(size=n))
    phi = rng.uniform(0, 2 * np.pi, size=n)
    return centers_m + np.column_stack([r * np.cos(phi), r * np.sin(phi)])
