"""Plot helpers. Each takes ``ax=None`` (a new figure when None) and returns the Axes."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import shapely
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection

from cellopt.linktable import LinkTable
from cellopt.network import Network

__all__ = ["plot_network"]

_TIER_STYLE = {  # marker, size
    "macro": ("^", 80),
    "pico": ("s", 25),
    "femto": ("o", 12),
}
_OWNER_COLOR = {"operator": "black", "third_party": "tab:orange"}


def plot_network(
    network: Network,
    ax: Axes | None = None,
    *,
    links: LinkTable | None = None,
    serving_cell: np.ndarray | None = None,
    association_lines: bool = False,
    sector_length_m: float | None = None,
) -> Axes:
    """Map of cells (by tier and owner), sector boresights and users.

    Parameters
    ----------
    network : Network
    ax : matplotlib Axes, optional
    links : LinkTable, optional
        If given (and `serving_cell` is not), users are coloured by their max-RSRP cell.
    serving_cell : ndarray of int, shape (n_users,), optional
        Cell row serving each user (−1: none); users are coloured by it.
    association_lines : bool
        Draw a line from each user to its serving cell.
    sector_length_m : float, optional
        Length of the boresight ticks of sectorised cells [m]; default 1/10 of the
        layout's extent.

    Returns
    -------
    matplotlib.axes.Axes
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 7))
    cells, users = network.cells, network.users
    cx, cy = cells.geometry.x.to_numpy(), cells.geometry.y.to_numpy()
    if network.region is not None:
        for part in getattr(network.region, "geoms", [network.region]):
            ax.plot(*np.asarray(part.exterior.coords).T, color="0.6", lw=0.8, zorder=1)
    if serving_cell is None and links is not None:
        serving_cell = links.best_by("rsrp_dbm")
    if len(users):
        ux, uy = users.geometry.x.to_numpy(), users.geometry.y.to_numpy()
        if serving_cell is None:
            ax.scatter(ux, uy, s=4, color="tab:blue", label="users", zorder=2)
        else:
            served = serving_cell >= 0
            ax.scatter(ux[served], uy[served], s=4, c=serving_cell[served] % 20, cmap="tab20",
                       label="users (colour: serving cell)", zorder=2)
            if association_lines:
                sc = serving_cell[served]
                seg = np.stack([np.column_stack([ux[served], uy[served]]),
                                np.column_stack([cx[sc], cy[sc]])], axis=1)
                ax.add_collection(LineCollection(seg, colors="0.7", linewidths=0.3, zorder=1))
    az = cells["azimuth_deg"].to_numpy(float)
    sector = ~np.isnan(az)
    if sector.any():
        x0, y0, x1, y1 = shapely.bounds(shapely.multipoints(np.column_stack([cx, cy])))
        length = sector_length_m or 0.1 * max(x1 - x0, y1 - y0, 1.0)
        b = np.deg2rad(az[sector])
        ax.quiver(cx[sector], cy[sector], np.sin(b) * length, np.cos(b) * length, angles="xy",
                  scale_units="xy", scale=1, width=0.002, color="0.3", zorder=3)
    tiers, owners = cells["tier"].to_numpy(), cells["owner"].to_numpy()
    for tier, (marker, size) in _TIER_STYLE.items():
        for owner, color in _OWNER_COLOR.items():
            m = (tiers == tier) & (owners == owner)
            if m.any():
                label = tier if owner == "operator" else f"{tier} (third party)"
                ax.scatter(cx[m], cy[m], marker=marker, s=size, facecolor="white",
                           edgecolor=color, linewidths=1.2, label=label, zorder=4)
    ax.set_aspect("equal")
    ax.ticklabel_format(useOffset=False, style="plain")
    ax.set_xlabel(f"easting [m] ({network.crs.name})" if network.crs else "x [m]")
    ax.set_ylabel("northing [m]")
    ax.legend(loc="upper right", fontsize="small", framealpha=0.9)
    return ax
