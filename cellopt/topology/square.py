"""A square grid of omni macro sites: the simplest regular layout, a torus if wrapped."""

from __future__ import annotations

import numpy as np

from cellopt.checks import check_count, check_real
from cellopt.errors import ValidationError, check_memory
from cellopt.network import CELL_BYTES, Network, cells_frame
from cellopt.topology.hexgrid import SYNTHETIC_ORIGIN_M, layout_crs
from cellopt.topology.poisson import square_network

__all__ = ["square_grid", "square_grid_nbytes"]

#: Memory per site of a square grid beyond its cell [bytes]: its position and its square.
SQUARE_SITE_BYTES = 200


def square_grid_nbytes(n_side: int) -> float:
    """Estimated peak memory of :func:`square_grid` [bytes], before anything is allocated.

    Parameters
    ----------
    n_side : int
        Sites along each side.

    Returns
    -------
    float
        ``n_side² × (CELL_BYTES + SQUARE_SITE_BYTES)``; inf for an infinite count.
    """
    n = float(n_side)  # a product, not a power: a float overflows to inf, never raises
    return n * n * (CELL_BYTES + SQUARE_SITE_BYTES)


def square_grid(
    n_side: int = 5,
    spacing_m: float = 500.0,
    *,
    wraparound: bool = True,
    tx_power_dbm: float = 46.0,
    antenna_gain_dbi: float = 0.0,
    height_m: float = 25.0,
    bandwidth_mhz: float = 10.0,
    origin_lonlat: tuple[float, float] | None = None,
    crs: str | None = None,
) -> Network:
    """A square grid of ``n_side × n_side`` omni macro sites, `spacing_m` apart.

    Parameters
    ----------
    n_side : int
        Sites along each side (≥ 1): 5 → 25 sites.
    spacing_m : float
        Distance between neighbouring sites [m].
    wraparound : bool
        Store the 8 translations by ``± n_side × spacing_m`` (and the zero shift) so that
        the radio model measures every distance to the nearest copy of each site, as if
        the grid tiled the plane (a torus, without edge effect).
    tx_power_dbm, antenna_gain_dbi, height_m : float
        46 dBm, 0 dBi (omni), 25 m.
    bandwidth_mhz : float
        System bandwidth [MHz].
    origin_lonlat, crs : optional
        Where the layout lies: its centre at (lon, lat) [degrees] (default Munich), or
        a projected CRS given instead, as for :func:`~cellopt.topology.hex_grid`.

    Returns
    -------
    Network
        ``n_side²`` macro cells, one per site; ``region`` the square the sites' squares
        cover.

    Raises
    ------
    ValidationError
        A parameter of the wrong type or outside its possible range
        (:data:`cellopt.parameters.LIMITS`); values outside the usual range warn.
    ResourceLimitError
        When the grid would not fit in memory (:func:`square_grid_nbytes`).
    """
    n_side = check_count(n_side, "n_side", fix="give a whole number of sites per side ≥ 1 "
                         "(5 → 25 sites)", minimum=1)
    spacing_m = check_real(spacing_m, "spacing_m", "isd_m")
    if not isinstance(wraparound, (bool, np.bool_)):
        raise ValidationError(f"wraparound={wraparound!r}; fix: give True or False")
    tx_power_dbm = check_real(tx_power_dbm, "tx_power_dbm", tier="macro")
    antenna_gain_dbi = check_real(antenna_gain_dbi, "antenna_gain_dbi")
    height_m = check_real(height_m, "height_m")
    bandwidth_mhz = check_real(bandwidth_mhz, "bandwidth_mhz")
    crs = layout_crs(crs, origin_lonlat)
    check_memory(square_grid_nbytes(n_side), f"square_grid: n_side={n_side:,} "
                 f"({n_side * n_side:,} sites)", "use fewer sites per side (n_side)")
    side_m = n_side * spacing_m
    offsets = (np.arange(n_side) + 0.5) * spacing_m - side_m / 2
    x, y = np.meshgrid(offsets, offsets, indexing="ij")
    xy = np.column_stack([x.ravel(), y.ravel()]) + SYNTHETIC_ORIGIN_M
    cells = cells_frame(
        xy[:, 0], xy[:, 1], crs=crs, tier="macro", site_id=np.arange(len(xy)),
        azimuth_deg=np.nan, tx_power_dbm=tx_power_dbm, antenna_gain_dbi=antenna_gain_dbi,
        height_m=height_m,
    )
    return square_network(cells, SYNTHETIC_ORIGIN_M - side_m / 2, side_m, wraparound, bandwidth_mhz)
