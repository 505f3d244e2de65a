"""Plot helpers. Each takes ``ax=None`` (a new figure when None) and returns the Axes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import NormalDist

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import shapely
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection

from cellopt.errors import ValidationError
from cellopt.linktable import LinkTable
from cellopt.network import Network
from cellopt.solution import Solution

__all__ = ["plot_convergence", "plot_gain_curve", "plot_network", "plot_rate_cdf"]

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
    sinr_map_db: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
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
    sinr_map_db : tuple of ndarray, optional
        ``(x_m, y_m, sinr_db)`` with ``x_m`` shape (nx,) and ``y_m`` shape (ny,) the grid
        coordinates [m] in the network's CRS and ``sinr_db`` shape (ny, nx) the SINR [dB]
        at each grid point. Drawn as a heat map under everything else, with a colorbar
        labelled "SINR [dB]"; non-finite values (e.g. −inf) are left blank.

    Returns
    -------
    matplotlib.axes.Axes
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 7))
    cells, users = network.cells, network.users
    cx, cy = cells.geometry.x.to_numpy(), cells.geometry.y.to_numpy()
    if sinr_map_db is not None:
        _draw_sinr_map(ax, *sinr_map_db)
    if network.region is not None:
        for part in getattr(network.region, "geoms", [network.region]):
            ax.plot(*np.asarray(part.exterior.coords).T, color="0.6", lw=0.8, zorder=1)
    if network.study_area is not None:
        for i, part in enumerate(getattr(network.study_area, "geoms", [network.study_area])):
            ax.plot(*np.asarray(part.exterior.coords).T, color="k", lw=1.2, ls="--", zorder=4,
                    label=None if i else "study area")
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


def _draw_sinr_map(ax: Axes, x_m: np.ndarray, y_m: np.ndarray, sinr_db: np.ndarray) -> None:
    """Heat map of `sinr_db` (ny, nx) on the grid `x_m` (nx,), `y_m` (ny,), with a colorbar."""
    x_m, y_m = np.asarray(x_m, float), np.asarray(y_m, float)
    sinr_db = np.asarray(sinr_db, float)
    if x_m.ndim != 1 or y_m.ndim != 1 or sinr_db.shape != (len(y_m), len(x_m)):
        raise ValidationError(f"sinr_map_db: expected x_m (nx,), y_m (ny,), sinr (ny, nx); got "
                         f"{x_m.shape}, {y_m.shape}, {sinr_db.shape}")
    mesh = ax.pcolormesh(x_m, y_m, np.ma.masked_invalid(sinr_db), shading="auto",
                         cmap="viridis", zorder=0)
    ax.figure.colorbar(mesh, ax=ax, label="SINR [dB]", shrink=0.8)


def plot_rate_cdf(
    rates_mbps: Mapping[str, np.ndarray],
    ax: Axes | None = None,
    *,
    log_x: bool = True,
    percentiles: Sequence[float] = (5, 50),
) -> Axes:
    """Empirical CDF of user rates, one step curve per method.

    Parameters
    ----------
    rates_mbps : mapping of str to ndarray, shape (n_users,)
        User rates [Mbit/s] per method (e.g. ``Solution.user_rate_mbps``); the key is the
        legend label. Methods may have different numbers of users; NaNs are ignored.
    ax : matplotlib Axes, optional
    log_x : bool
        Logarithmic rate axis. Zero rates cannot be shown on it: they are drawn at the
        left edge of the axis (the power of ten below the smallest positive rate)
        and the legend gives the fraction of users at 0.
    percentiles : sequence of float
        Percentiles (0–100) marked on each curve with a dot and a dotted drop line; the
        legend gives their values [Mbit/s]. Empty for none.

    Returns
    -------
    matplotlib.axes.Axes
        With one line (``ax.lines``) per method.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5))
    data = {name: np.sort(np.asarray(r, float).ravel()) for name, r in rates_mbps.items()}
    data = {name: r[~np.isnan(r)] for name, r in data.items()}
    edge = None
    if log_x:
        positive = [r[r > 0] for r in data.values()]
        low = min((p[0] for p in positive if len(p)), default=1.0)
        edge = 10.0 ** (np.ceil(np.log10(low)) - 1.0)
    for name, r in data.items():
        n = len(r)
        if n == 0:
            continue
        q = np.percentile(r, list(percentiles), method="inverted_cdf") if len(percentiles) else []
        parts = [", ".join(f"p{p:g} {v:.3g}" for p, v in zip(percentiles, q, strict=True))
                 + " Mbit/s"] if len(q) else []
        x = r
        if edge is not None:
            x = np.maximum(r, edge)
            n_zero = int(np.count_nonzero(r <= 0))
            if n_zero:
                parts.append(f"{n_zero / n:.0%} at 0")
        label = f"{name} ({'; '.join(parts)})" if parts else name
        # (x_0, 0), then a step up by 1/n at every sorted rate: ends at (x_max, 1).
        line, = ax.step(np.concatenate([x[:1], x]), np.arange(n + 1) / n, where="post",
                        label=label)
        if len(q):
            xq = np.maximum(q, edge) if edge is not None else q
            yq = np.asarray(percentiles, float) / 100.0
            color = line.get_color()
            ax.vlines(xq, 0.0, yq, colors=color, linestyles=":", linewidth=1.0)
            ax.scatter(xq, yq, s=18, color=color, zorder=3)
    if log_x:
        ax.set_xscale("log")
        ax.set_xlim(left=edge)
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("user rate [Mbit/s]")
    ax.set_ylabel("CDF")
    ax.grid(True, which="major", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:  # nothing to label when every method had no users
        ax.legend(loc="lower right", fontsize="small")
    return ax


def plot_gain_curve(
    x: np.ndarray,
    gains: Mapping[str, np.ndarray],
    ax: Axes | None = None,
    *,
    xlabel: str,
    ylabel: str = "gain over max-RSRP",
    band: float = 0.95,
) -> Axes:
    """Gain of each method against a swept parameter, with a Monte-Carlo confidence band.

    Parameters
    ----------
    x : ndarray, shape (n_x,)
        Values of the swept parameter (in the unit named by `xlabel`).
    gains : mapping of str to ndarray, shape (n_x,) or (n_drops, n_x)
        Gain per method (the key is the legend label): one curve, or one row per
        Monte-Carlo drop. The mean over drops is plotted, with the band
        mean ± z·std/√n_drops (normal approximation, sample std) when n_drops > 1.
    ax : matplotlib Axes, optional
    xlabel : str
        Label of the x axis, with its unit (e.g. ``"users per cell"``, ``"ISD [m]"``).
    ylabel : str
        Label of the y axis, with its unit if any.
    band : float
        Two-sided confidence level of the band, in (0, 1).

    Returns
    -------
    matplotlib.axes.Axes
        With one line per method and, per method with several drops, one
        ``fill_between`` PolyCollection.

    Raises
    ------
    ValueError
        If a gain array's last dimension does not match `x`, or `band` is not in (0, 1).
    """
    if not 0.0 < band < 1.0:
        raise ValidationError(f"band must be in (0, 1), got {band}")
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5))
    x = np.asarray(x, float)
    z = NormalDist().inv_cdf(0.5 + band / 2.0)
    for name, g in gains.items():
        g = np.atleast_2d(np.asarray(g, float))
        if g.ndim != 2 or g.shape[1] != len(x):
            raise ValidationError(f"gains[{name!r}]: expected shape ({len(x)},) or (n_drops, "
                             f"{len(x)}), got {np.shape(gains[name])}")
        n_drops = g.shape[0]
        mean = g.mean(axis=0)
        line, = ax.plot(x, mean, marker=".", label=name)
        if n_drops > 1:
            half = z * g.std(axis=0, ddof=1) / np.sqrt(n_drops)
            ax.fill_between(x, mean - half, mean + half, color=line.get_color(), alpha=0.2,
                            linewidth=0)
    if any(np.atleast_2d(np.asarray(g)).shape[0] > 1 for g in gains.values()):
        ax.set_title(f"mean over drops, {band:.0%} confidence band", fontsize="small")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def plot_convergence(
    solutions: Solution | Mapping[str, Solution],
    ax: Axes | None = None,
) -> Axes:
    """Objective (solid) and upper bound (dashed) against iteration, per method.

    Parameters
    ----------
    solutions : Solution or mapping of str to Solution
        A single solution (labelled by its ``method``) or several, keyed by legend label.
        Each ``history`` gives ``iteration`` and ``objective`` [utility] and, if the
        method computed one, ``upper_bound`` [utility]; a method whose history has no
        ``upper_bound`` column, or only NaN in it, gets the objective line only.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        With one line per method, plus one per method with a bound, in the same colour.
    """
    if isinstance(solutions, Solution):
        solutions = {solutions.method: solutions}
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5))
    for name, sol in solutions.items():
        h = sol.history
        if h is None or len(h) == 0:
            continue
        it = h["iteration"].to_numpy(float) if "iteration" in h else np.arange(1.0, len(h) + 1)
        marker = "o" if len(h) == 1 else None  # a single point would be invisible as a line
        obj = pd.to_numeric(h["objective"], errors="coerce").to_numpy(float)
        line, = ax.plot(it, obj, linestyle="-", marker=marker, label=f"{name} objective")
        if "upper_bound" in h:
            ub = pd.to_numeric(h["upper_bound"], errors="coerce").to_numpy(float)
            if np.isfinite(ub).any():
                ax.plot(it, ub, linestyle="--", marker=marker, color=line.get_color(),
                        label=f"{name} upper bound")
    ax.set_xlabel("iteration")
    ax.set_ylabel("objective / upper bound [utility]")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return ax
