"""Plot helpers. Each takes ``ax=None`` (a new figure when None) and returns the Axes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import NormalDist

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.cm import ScalarMappable
from matplotlib.collections import LineCollection
from matplotlib.colors import Colormap, ListedColormap, Normalize, to_rgba
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.transforms import ScaledTranslation, blended_transform_factory

from cellopt.errors import ValidationError
from cellopt.linktable import LinkTable
from cellopt.network import TIER_COLORS, UNSERVED_COLOR, Network
from cellopt.solution import Solution

__all__ = ["TIER_COLORS", "UNSERVED_COLOR", "plot_convergence", "plot_gain_curve", "plot_network",
           "plot_rate_cdf"]

_TIER_STYLE = {  # marker, size [points²]
    "macro": ("^", 90),
    "pico": ("s", 32),
    "femto": ("o", 18),
}
_OWNER_COLOR = {"operator": "black", "third_party": "#cc79a7"}
_COLOR_BY = ("tier", "load", "cell")
_GUARD_ALPHA = 0.22  # users outside the study area
_SECTOR_TICK_IN = 0.22  # default length of the boresight ticks on the page [in]
_LEGEND_PAD_IN = 0.08  # gap between the axes' decorations and an outside legend [in]


def plot_network(
    network: Network,
    ax: Axes | None = None,
    *,
    links: LinkTable | None = None,
    serving_cell: np.ndarray | None = None,
    association_lines: bool = False,
    sector_length_m: float | None = None,
    sinr_map_db: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    color_by: str = "tier",
    cell_load: np.ndarray | None = None,
) -> Axes:
    """Map of cells (marker: tier, outline: owner), sector boresights and users.

    Users are coloured by what decides the association: by default the tier of their
    serving cell, so offloading to small cells is visible at a glance. The legend is
    placed outside the axes, to the right (beyond any colorbar), and never covers the map.

    Parameters
    ----------
    network : Network
    ax : matplotlib Axes, optional
        Axes to draw on. When None a new figure is made and widened so that the legend
        (and any colorbar) fits in it, whether saved with ``bbox_inches="tight"`` or not.
        With your own `ax`, leave room on its right (or save with ``bbox_inches="tight"``).
    links : LinkTable, optional
        If given (and `serving_cell` is not), users are coloured by their max-RSRP cell.
    serving_cell : ndarray of int, shape (n_users,), optional
        Cell row serving each user (−1: none, drawn grey as "not served").
    association_lines : bool
        Draw a thin, transparent line from each served user to its serving cell, in the
        user's colour.
    sector_length_m : float, optional
        Length of the boresight ticks of sectorised cells [m]. By default they are
        0.22 inch long on the page whatever the scale, so that they show past the cell
        markers on dense real layouts without covering the map.
    sinr_map_db : tuple of ndarray, optional
        ``(x_m, y_m, sinr_db)`` with ``x_m`` shape (nx,) and ``y_m`` shape (ny,) the grid
        coordinates [m] in the network's CRS and ``sinr_db`` shape (ny, nx) the SINR [dB]
        at each grid point. Drawn as a heat map under everything else, with a colorbar
        labelled "SINR [dB]"; non-finite values (e.g. −inf) are left blank.
    color_by : {"tier", "load", "cell"}
        What the colours show.

        - ``"tier"`` (default): users in the fixed colour of their serving cell's tier
          (:data:`TIER_COLORS`: macro blue, pico green, femto vermillion; grey
          :data:`UNSERVED_COLOR` for none), cells filled with a light tint of it.
        - ``"load"``: cells filled by `cell_load` on a sequential colormap (yellow: idle,
          dark red: fully loaded) with a colorbar labelled "cell load (airtime share)";
          users in the colour of their serving cell's load.
        - ``"cell"``: users in one of 20 colours cycled over their serving cell's row
          (neighbouring cells may share a colour), cells filled white.
    cell_load : ndarray of float, shape (n_cells,), optional
        Load of each cell as its share of airtime, in [0, 1] (e.g.
        ``solution.cell_airtime.mean(axis=1)``). Required for, and only used with,
        ``color_by="load"``.

    Returns
    -------
    matplotlib.axes.Axes
        The users are one scatter (gid ``"users"``) with one point per user, in the
        order of ``network.users``. Users outside ``network.study_area`` (the guard
        band), if the network has one, are drawn faded.

    Raises
    ------
    ValidationError
        For an unknown `color_by`, a missing or misshaped `cell_load`, a misshaped or
        out-of-range `serving_cell`, or a misshaped `sinr_map_db`.
    """
    if color_by not in _COLOR_BY:
        raise ValidationError(f"color_by={color_by!r} is unknown; fix: pass one of "
                              + ", ".join(repr(c) for c in _COLOR_BY))
    cells, users = network.cells, network.users
    n_cells, n_users = len(cells), len(users)
    load = _check_cell_load(cell_load, color_by, n_cells)
    if serving_cell is None and links is not None:
        serving_cell = links.best_by("rsrp_dbm")
    serving = None if serving_cell is None else _check_serving(serving_cell, n_users, n_cells)

    own_figure = ax is None
    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 7), layout="none")
        fig.subplots_adjust(left=0.12, right=0.95, bottom=0.09, top=0.93)
    fig = ax.figure
    cx, cy = cells.geometry.x.to_numpy(), cells.geometry.y.to_numpy()
    tiers, owners = cells["tier"].to_numpy(), cells["owner"].to_numpy()
    colorbar_axes = []
    area_handles: list = []
    user_handles: list = []
    if sinr_map_db is not None:
        colorbar_axes.append(_draw_sinr_map(ax, *sinr_map_db))
    if network.region is not None:
        for part in getattr(network.region, "geoms", [network.region]):
            ax.plot(*np.asarray(part.exterior.coords).T, color="0.6", lw=0.8, zorder=1)
    if network.study_area is not None:
        for i, part in enumerate(getattr(network.study_area, "geoms", [network.study_area])):
            line, = ax.plot(*np.asarray(part.exterior.coords).T, color="k", lw=1.2, ls="--",
                            zorder=4, label=None if i else "study area")
            if not i:
                area_handles.append(line)

    cmap, norm = _load_cmap(), Normalize(0.0, 1.0)
    if color_by == "tier":
        cell_rgba = np.array([to_rgba(TIER_COLORS.get(t, UNSERVED_COLOR)) for t in tiers])
        cell_rgba = cell_rgba.reshape(n_cells, 4)
    elif color_by == "load":
        cell_rgba = cmap(norm(load)).reshape(n_cells, 4)
    else:
        cell_rgba = np.tile(to_rgba("white"), (n_cells, 1))

    if n_users:
        ux, uy = users.geometry.x.to_numpy(), users.geometry.y.to_numpy()
        rgba = np.tile(to_rgba("0.3"), (n_users, 1))
        if serving is not None:
            served = serving >= 0
            rgba[~served] = to_rgba(UNSERVED_COLOR)
            if color_by == "cell":
                rgba[served] = plt.get_cmap("tab20")(serving[served] % 20)
            else:
                rgba[served] = cell_rgba[serving[served]]
        if network.study_area is not None:
            guard = ~np.asarray(network.in_study_area(), bool)
            rgba[guard, 3] = _GUARD_ALPHA
        else:
            guard = np.zeros(n_users, bool)
        if serving is not None and association_lines and served.any():
            sc = serving[served]
            seg = np.stack([np.column_stack([ux[served], uy[served]]),
                            np.column_stack([cx[sc], cy[sc]])], axis=1)
            line_rgba = rgba[served].copy()
            line_rgba[:, 3] *= 0.35
            ax.add_collection(LineCollection(seg, colors=line_rgba, linewidths=0.4, zorder=1.5))
        # Above the cells' (light) markers: users next to a small cell stay visible.
        dots = ax.scatter(ux, uy, s=6, c=rgba, linewidths=0, zorder=4.5, label="users")
        dots.set_gid("users")
        user_handles = _user_handles(color_by, serving, tiers, guard)

    az = cells["azimuth_deg"].to_numpy(float)
    sector = ~np.isnan(az)
    if sector.any():
        b = np.deg2rad(az[sector])
        if sector_length_m:  # [m], in data units
            u, v, units, scale = np.sin(b) * sector_length_m, np.cos(b) * sector_length_m, "xy", 1
        else:  # a fixed length on the page, past the marker however dense the sites
            u, v, units, scale = np.sin(b), np.cos(b), "inches", 1.0 / _SECTOR_TICK_IN
        ax.quiver(cx[sector], cy[sector], u, v, angles="xy", scale_units=units, scale=scale,
                  width=0.002, color="0.3", zorder=3)
    cell_handles = []
    cell_face = _tint(cell_rgba) if color_by == "tier" else cell_rgba  # light: users show on top
    for tier, (marker, size) in _TIER_STYLE.items():
        for owner, edge in _OWNER_COLOR.items():
            m = (tiers == tier) & (owners == owner)
            if m.any():
                label = f"{tier} cell" if owner == "operator" else f"{tier} cell (third party)"
                ax.scatter(cx[m], cy[m], marker=marker, s=size, c=cell_face[m], edgecolors=edge,
                           linewidths=1.6 if owner == "third_party" else 1.0, label=label,
                           zorder=4)
        if (tiers == tier).any():
            face = _tint(to_rgba(TIER_COLORS[tier])) if color_by == "tier" else "white"
            cell_handles.append(Line2D([], [], ls="", marker=marker, ms=np.sqrt(size), mfc=face,
                                       mec="black", label=f"{tier} cell"))
    if (owners == "third_party").any():
        cell_handles.append(Line2D([], [], ls="", marker="o", ms=6, mfc="white",
                                   mec=_OWNER_COLOR["third_party"], mew=1.6,
                                   label="third-party cell (outline)"))
    handles = area_handles + cell_handles + user_handles
    if color_by == "load":
        mappable = ScalarMappable(norm=norm, cmap=cmap)
        cbar = fig.colorbar(mappable, ax=ax, label="cell load (airtime share)", shrink=0.8)
        colorbar_axes.append(cbar.ax)

    ax.set_aspect("equal")
    ax.ticklabel_format(useOffset=False, style="plain")
    ax.set_xlabel(f"easting [m] ({network.crs.name})" if network.crs else "x [m]")
    ax.set_ylabel("northing [m]")
    if handles:
        _legend_outside(ax, handles, side="right", beyond=colorbar_axes)
    if own_figure:
        _fit_figure(fig)
    return ax


def _check_serving(serving_cell: np.ndarray, n_users: int, n_cells: int) -> np.ndarray:
    """`serving_cell` as int64 (n_users,) with values in −1..n_cells−1, else ValidationError."""
    s = np.asarray(serving_cell)
    if s.shape != (n_users,):
        raise ValidationError(f"serving_cell has shape {s.shape}; fix: give one cell row per "
                              f"user of the network, shape ({n_users},), −1 for none")
    if s.dtype.kind == "f" and np.all(np.isfinite(s)) and np.all(s == np.round(s)):
        s = s.astype(np.int64)
    if s.dtype.kind not in "iu":
        raise ValidationError(f"serving_cell has dtype {s.dtype}; fix: give integer cell rows "
                              "(−1 for none)")
    bad = np.flatnonzero((s < -1) | (s >= n_cells))
    if len(bad):
        raise ValidationError(f"serving_cell: users at positions {bad[:5].tolist()} have cell "
                              f"rows {s[bad[:5]].tolist()} outside −1..{n_cells - 1}; fix: give "
                              "rows of network.cells, −1 for none")
    return s.astype(np.int64)


def _check_cell_load(cell_load: np.ndarray | None, color_by: str, n_cells: int) -> np.ndarray:
    """`cell_load` as float (n_cells,) in [0, 1] when ``color_by="load"``, else ValidationError."""
    if color_by != "load":
        if cell_load is not None:
            raise ValidationError(f"cell_load is only used with color_by='load' (got "
                                  f"color_by={color_by!r}); fix: pass color_by='load' or drop "
                                  "cell_load")
        return np.zeros(0)
    if cell_load is None:
        raise ValidationError("color_by='load' needs cell_load; fix: pass the airtime share of "
                              f"each cell, shape ({n_cells},), e.g. "
                              "solution.cell_airtime.mean(axis=1)")
    load = np.asarray(cell_load, float)
    if load.shape != (n_cells,):
        raise ValidationError(f"cell_load has shape {load.shape}; fix: give one airtime share "
                              f"per cell, shape ({n_cells},) (e.g. solution.cell_airtime.mean("
                              "axis=1))")
    bad = np.flatnonzero(~np.isfinite(load) | (load < 0) | (load > 1 + 1e-6))
    if len(bad):
        raise ValidationError(f"cell_load: cells at rows {bad[:5].tolist()} have load "
                              f"{load[bad[:5]].tolist()}; fix: give airtime shares in [0, 1]")
    return load


def _tint(rgba: np.ndarray | tuple, amount: float = 0.55) -> np.ndarray:
    """`rgba` (..., 4) mixed with white by `amount`: the light fill of cell markers."""
    out = np.array(rgba, float)
    out[..., :3] = out[..., :3] + amount * (1.0 - out[..., :3])
    return out


def _load_cmap() -> Colormap:
    """Sequential colormap of cell load: light yellow (idle) to dark red (full)."""
    base = plt.get_cmap("YlOrRd")
    return ListedColormap(base(np.linspace(0.25, 1.0, 256)), name="cellopt_load")


def _user_handles(color_by: str, serving: np.ndarray | None, tiers: np.ndarray,
                  guard: np.ndarray) -> list[Line2D]:
    """Legend proxies of the users' colours."""
    def dot(color: object, label: str, alpha: float = 1.0) -> Line2D:
        return Line2D([], [], ls="", marker="o", ms=4.5, mfc=color, mec="none", alpha=alpha,
                      label=label)

    if serving is None:
        out = [dot("0.3", "user")]
    else:
        served = serving >= 0
        if color_by == "tier":
            used = set(tiers[serving[served]])
            out = [dot(TIER_COLORS[t], f"user served by {t}") for t in TIER_COLORS if t in used]
        elif color_by == "load":
            out = [dot(_load_cmap()(0.7), "user (colour: its cell's load)")]
        else:
            out = [dot(plt.get_cmap("tab20")(0), "user (colour: serving cell)")]
        if (~served).any():
            out.append(dot(UNSERVED_COLOR, "user not served"))
    if guard.any():
        out.append(dot("0.3", "user in guard band (faded)", _GUARD_ALPHA))
    return out


def _legend_outside(ax: Axes, handles: list | None = None, *, side: str,
                    beyond: Sequence[Axes] = (), **kwargs: object) -> Legend:
    """Legend of `ax` outside its data area: ``"right"`` or ``"below"`` its decorations.

    The anchor is kept in the figure's transforms (axes fraction plus a fixed offset in
    inches), so it follows the axes when the figure is resized or re-laid out. With
    ``side="right"`` it goes beyond the rightmost of `ax` and the axes in `beyond`
    (colorbars), past their tick labels and axis label.
    """
    fig = ax.figure
    if side == "right":
        anchors = [ax, *beyond]
        anchor = max(anchors, key=lambda a: a.get_position().x1)
        offset = _decoration_in(anchor, "right") + _LEGEND_PAD_IN
        x_trans = anchor.transAxes + ScaledTranslation(offset, 0.0, fig.dpi_scale_trans)
        trans = blended_transform_factory(x_trans, ax.transAxes)
        loc, xy = "upper left", (1.0, 1.0)
    elif side == "below":
        offset = _decoration_in(ax, "below") + _LEGEND_PAD_IN
        trans = ax.transAxes + ScaledTranslation(0.0, -offset, fig.dpi_scale_trans)
        loc, xy = "upper center", (0.5, 0.0)
    else:  # pragma: no cover - internal
        raise ValueError(side)
    kw = {"fontsize": "small", "framealpha": 0.95, "borderaxespad": 0.0}
    kw.update(kwargs)
    if handles is not None:
        kw["handles"] = handles
    return ax.legend(loc=loc, bbox_to_anchor=xy, bbox_transform=trans, **kw)


def _decoration_in(ax: Axes, side: str) -> float:
    """Extent of `ax`'s axis decorations (tick labels, labels) beyond its box on `side` [in]."""
    tight = ax.get_tightbbox(bbox_extra_artists=[])
    box = ax.get_window_extent()
    if tight is None:
        return 0.0
    extent = tight.x1 - box.x1 if side == "right" else box.y0 - tight.y0
    return max(float(extent), 0.0) / ax.figure.dpi


def _fit_figure(fig: Figure, pad_in: float = 0.1) -> None:
    """Grow `fig` (keeping its axes' size in inches) until all its artists lie inside it."""
    if fig.get_layout_engine() is not None:  # a layout engine places everything itself
        return
    w, h = fig.get_size_inches()
    tb = fig.get_tightbbox()  # [in]
    left, right = max(pad_in - tb.x0, 0.0), max(tb.x1 - (w - pad_in), 0.0)
    bottom, top = max(pad_in - tb.y0, 0.0), max(tb.y1 - (h - pad_in), 0.0)
    if not (left or right or bottom or top):
        return
    sp = fig.subplotpars
    l_in, r_in, b_in, t_in = sp.left * w, sp.right * w, sp.bottom * h, sp.top * h
    nw, nh = w + left + right, h + bottom + top
    fig.set_size_inches(nw, nh)
    fig.subplots_adjust(left=(l_in + left) / nw, right=(r_in + left) / nw,
                        bottom=(b_in + bottom) / nh, top=(t_in + bottom) / nh)


def _draw_sinr_map(ax: Axes, x_m: np.ndarray, y_m: np.ndarray, sinr_db: np.ndarray) -> Axes:
    """Heat map of `sinr_db` (ny, nx) on the grid `x_m` (nx,), `y_m` (ny,); its colorbar's Axes."""
    x_m, y_m = np.asarray(x_m, float), np.asarray(y_m, float)
    sinr_db = np.asarray(sinr_db, float)
    if x_m.ndim != 1 or y_m.ndim != 1 or sinr_db.shape != (len(y_m), len(x_m)):
        raise ValidationError(f"sinr_map_db: expected x_m (nx,), y_m (ny,), sinr (ny, nx); got "
                         f"{x_m.shape}, {y_m.shape}, {sinr_db.shape}")
    mesh = ax.pcolormesh(x_m, y_m, np.ma.masked_invalid(sinr_db), shading="auto",
                         cmap="viridis", zorder=0)
    return ax.figure.colorbar(mesh, ax=ax, label="SINR [dB]", shrink=0.8).ax


#: Line styles of distinct CDF curves, cycled; identical curves get :data:`_DUP_STYLES`.
_CURVE_STYLES = ("-", "-.", ":", (0, (7, 2, 1, 2, 1, 2)))
_DUP_STYLES = ((0, (5, 4)), (2, (2, 3)), (0, (9, 3, 2, 3)))
_CURVE_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<")
_MARK_STEP = 0.11  # spacing of the sparse markers along a curve [fraction of axes diagonal]


def plot_rate_cdf(
    rates_mbps: Mapping[str, np.ndarray],
    ax: Axes | None = None,
    *,
    log_x: bool = True,
    percentiles: Sequence[float] = (5, 50),
) -> Axes:
    """Empirical CDF of user rates, one step curve per method.

    Every curve has its own line style and sparse markers (placed at different points
    along each curve), so curves that coincide stay distinguishable. A curve identical
    to an earlier one (same number of users and sorted rates equal within 1e-9
    relative) is drawn dashed on top of it and labelled ``"<label> (= <earlier label>)"``.
    The legend is placed below the axes, outside the data area.

    Parameters
    ----------
    rates_mbps : mapping of str to ndarray, shape (n_users,)
        User rates [Mbit/s] per method (e.g. ``Solution.user_rate_mbps``); the key is the
        legend label. Methods may have different numbers of users; NaNs are ignored.
    ax : matplotlib Axes, optional
        Axes to draw on. When None a new figure is made and grown so that the legend
        fits in it. With your own `ax`, leave room below it (or save with
        ``bbox_inches="tight"``).
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
        With one line (``ax.lines``) per method with users, in the order of `rates_mbps`.
    """
    own_figure = ax is None
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5), layout="none")
    data = {name: np.sort(np.asarray(r, float).ravel()) for name, r in rates_mbps.items()}
    data = {name: r[~np.isnan(r)] for name, r in data.items()}
    edge = None
    if log_x:
        positive = [r[r > 0] for r in data.values()]
        low = min((p[0] for p in positive if len(p)), default=1.0)
        edge = 10.0 ** (np.ceil(np.log10(low)) - 1.0)
    drawn: dict[str, np.ndarray] = {}  # label -> sorted rates of the curves drawn so far
    n_dup = 0
    for name, r in data.items():
        n = len(r)
        if n == 0:
            continue
        i = len(drawn)
        same_as = next((k for k, v in drawn.items() if _same_curve(v, r)), None)
        drawn[name] = r
        q = np.percentile(r, list(percentiles), method="inverted_cdf") if len(percentiles) else []
        parts = [", ".join(f"p{p:g} {v:.3g}" for p, v in zip(percentiles, q, strict=True))
                 + " Mbit/s"] if len(q) else []
        x = r
        if edge is not None:
            x = np.maximum(r, edge)
            n_zero = int(np.count_nonzero(r <= 0))
            if n_zero:
                parts.append(f"{n_zero / n:.0%} at 0")
        if same_as is not None:  # its statistics are those of the curve it equals
            label, style = f"{name} (= {same_as})", _DUP_STYLES[n_dup % len(_DUP_STYLES)]
            n_dup += 1
        else:
            label = f"{name} ({'; '.join(parts)})" if parts else name
            style = _CURVE_STYLES[i % len(_CURVE_STYLES)]
        # (x_0, 0), then a step up by 1/n at every sorted rate: ends at (x_max, 1).
        line, = ax.step(np.concatenate([x[:1], x]), np.arange(n + 1) / n, where="post",
                        label=label, linestyle=style, linewidth=1.6,
                        marker=_CURVE_MARKERS[i % len(_CURVE_MARKERS)], markersize=5,
                        markevery=(_MARK_STEP * ((0.3 + 0.618 * i) % 1.0), _MARK_STEP),
                        zorder=2.0 + 0.01 * i)
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
    handles, labels = ax.get_legend_handles_labels()
    if handles:  # nothing to label when every method had no users
        longest = max(len(t) for t in labels)
        ncol = max(1, min(len(labels), 3, 90 // max(longest, 1)))
        _legend_outside(ax, side="below", ncol=ncol, handlelength=3.0)
    if own_figure:
        _fit_figure(ax.figure)
    return ax


def _same_curve(a: np.ndarray, b: np.ndarray, rtol: float = 1e-9) -> bool:
    """Whether sorted rates `a` and `b` give the same CDF (equal within `rtol` relative)."""
    if a.shape != b.shape:
        return False
    with np.errstate(invalid="ignore"):
        close = np.abs(a - b) <= rtol * np.maximum(np.abs(a), np.abs(b))
    return bool(np.all((a == b) | close))


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
        Axes to draw on. The legend goes below the axes (outside the data area); when
        None a new figure is made and grown so that it fits.
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
    own_figure = ax is None
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5), layout="none")
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
    if gains:
        _legend_outside(ax, side="below", ncol=min(len(gains), 3))
    if own_figure:
        _fit_figure(ax.figure)
    return ax


def plot_convergence(
    solutions: Solution | Mapping[str, Solution],
    ax: Axes | None = None,
    *,
    bound: float | None = None,
    bound_label: str = "best upper bound",
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
        Axes to draw on. The legend goes below the axes (outside the data area); when
        None a new figure is made and grown so that it fits.
    bound : float, optional
        A bound shared by the methods (e.g. the best of a run [utility]), drawn as a
        dotted black horizontal line labelled `bound_label`.
    bound_label : str

    Returns
    -------
    matplotlib.axes.Axes
        With one line per method, plus one per method with a bound, in the same colour,
        and the line of `bound`.
    """
    if isinstance(solutions, Solution):
        solutions = {solutions.method: solutions}
    own_figure = ax is None
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5), layout="none")
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
    if bound is not None and np.isfinite(bound):
        ax.axhline(bound, color="black", linestyle=":", linewidth=1.2, label=bound_label)
    ax.set_xlabel("iteration")
    ax.set_ylabel("objective / upper bound [utility]")
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        _legend_outside(ax, side="below", ncol=2)
    if own_figure:
        _fit_figure(ax.figure)
    return ax
