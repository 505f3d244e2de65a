"""How the map colours, labels and describes the cells.

The ways "Colour cells by" offers (:func:`cell_colourings`: load, overload, users served,
best-RSRP share, mean SINR, airtime price, mean power, share off, offset), their style rules,
and each cell row's tooltip, colours and offset label (:func:`cell_rows`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable

import geopandas as gpd
import matplotlib as mpl
import numpy as np
import pandas as pd

from cellopt.study.report.common import (
    DASH,
    NO_LOAD_COLOR,
    as_percent,
    column,
    floats,
    format_value,
    with_unit,
)

_LOAD_CMAP = "YlOrRd"
_LOAD_RANGE = (0.12, 1.0)  # part of the colour map used for load 0..1 (skips the near-white end)
#: Diverging colour map of the cells' offsets: negative blue, 0 white, positive red.
_OFFSET_CMAP = "RdBu_r"
#: The offset colour bar spans ±max(|offset|), at least ±this [dB].
_OFFSET_MIN_SPAN_DB = 1.0
#: Range of the "mean power" colouring [dB below full power]: the ramp runs from this far
#: below (and off) to full power.
POWER_RAMP_DB = 30.0


def _load_colors(load: np.ndarray) -> list[str]:
    cmap = mpl.colormaps[_LOAD_CMAP]
    lo, hi = _LOAD_RANGE
    out = []
    for v in load:
        if not np.isfinite(v):
            out.append(NO_LOAD_COLOR)
        else:
            out.append(mpl.colors.to_hex(cmap(lo + (hi - lo) * min(max(v, 0.0), 1.0))))
    return out


def _offset_colors(ramp: np.ndarray) -> list[str]:
    """Colours of the diverging offset map at `ramp` 0..1 (0.5: white, offset 0); NaN: grey."""
    cmap = mpl.colormaps[_OFFSET_CMAP]
    return [mpl.colors.to_hex(cmap(min(max(v, 0.0), 1.0))) if np.isfinite(v) else NO_LOAD_COLOR
            for v in ramp]


def _signed(value: float, unit: str = "") -> str:
    """`value` with its sign ("+6", "−3", "0"), 4 significant digits, and `unit` if given."""
    text = ("+" if value > 0 else "−" if value < 0 else "") + format_value(abs(float(value)))
    return f"{text} {unit}" if unit else text


def _offset_label(value: float) -> str | None:
    """A cell's offset label on the map ("+6", "−3", to 0.1 dB); None for NaN and 0."""
    if not math.isfinite(value) or round(value, 1) == 0:
        return None
    return _signed(round(value, 1))


def _has_offsets(offsets: np.ndarray) -> bool:
    """Whether some finite offset is non-zero (then the offsets vary or are all one non-zero value)."""
    finite = offsets[np.isfinite(offsets)]
    return bool(finite.size) and bool((np.abs(finite) > 1e-9).any())


def _power_shares(cells: gpd.GeoDataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's mean power as a share of its full power, and its share of the band off
    (NaN where the columns are absent)."""
    mean_dbm, full_dbm = floats(cells, "mean_power_dbm"), floats(cells, "tx_power_dbm")
    with np.errstate(invalid="ignore"):
        share = 10.0 ** ((mean_dbm - full_dbm) / 10.0)
    return share, floats(cells, "share_off")


@dataclasses.dataclass(frozen=True)
class _Colouring:
    """One way the map can colour the cells (a choice of "Colour cells by")."""

    choice: str  # the radio button's label
    title: str  # the colour bar's title
    ticks: tuple[str, str, str]  # under the bar: low, middle, high
    ramp: np.ndarray  # (n_cells,) each cell's place on the bar, 0..1; NaN: no value (grey)
    diverging: bool = False  # colours of _OFFSET_CMAP (white in the middle) rather than _LOAD_CMAP
    no_value: str = "no value"  # the legend's words for the grey of NaN

    def colors(self, ramp: np.ndarray | None = None) -> list[str]:
        """The colours of `ramp` (default: the cells' own), grey for NaN."""
        ramp = self.ramp if ramp is None else ramp
        return _offset_colors(ramp) if self.diverging else _load_colors(ramp)


def cell_colourings(cells: pd.DataFrame) -> dict[str, _Colouring]:
    """The colourings the cells' columns allow, by key (``by-load``, ...; also the CSS class
    of the map row and the name of the cells' colour variable ``--by-load``).

    Load and overload where the table has them (``cellopt run`` leaves them out under full
    buffer, where they are 1 and null by construction); users served, best-RSRP share,
    mean SINR and airtime price where they vary, on a bar from their smallest (0 for
    counts, shares and prices) to their largest value; mean power and share off where some
    cell is below full power; the offset of the association rule (``offset_db``) where some
    finite offset is not 0, on a diverging bar symmetric about 0 dB (±the largest |offset|,
    at least ±1 dB; NaN, a method that is no offset rule: grey).
    """
    out: dict[str, _Colouring] = {}
    percent = ("0 %", "50 %", "100 %")
    if "load" in cells.columns:
        out["by-load"] = _Colouring("load", "Cell load (airtime used)", percent, floats(cells, "load"))
    overload = floats(cells, "overload")
    if np.isfinite(overload).any():
        out["by-overload"] = _Colouring("overload", "Airtime its users need beyond the whole",
                                        ("0 %", "50 %", "≥ 100 %"), overload)
    for name, key, choice, title, unit, from_zero in (
            ("n_users", "by-users", "users served", "Users served", "", True),
            ("best_rsrp_share", "by-best", "best-RSRP share", "Share of users whose strongest "
             "cell it is", "%", True),
            ("mean_sinr_db", "by-sinr", "mean SINR", "Mean SINR of its users", " dB", False),
            ("airtime_price", "by-price", "airtime price", "Price of its airtime (utility per "
             "unit)", "", True)):
        values = floats(cells, name)
        finite = values[np.isfinite(values)]
        if not finite.size or finite.max() <= finite.min():
            continue
        lo, hi = (0.0 if from_zero else float(finite.min())), float(finite.max())
        scale = 100.0 if unit == "%" else 1.0
        ticks = tuple(with_unit(v * scale, unit.strip()) for v in (lo, (lo + hi) / 2, hi))
        out[key] = _Colouring(choice, title, ticks, (values - lo) / (hi - lo))  # type: ignore[arg-type]
    power_share, share_off = _power_shares(cells)  # offered when some cell is below full or off
    if len(cells) and np.nanmax(np.r_[1.0 - power_share, share_off, 0.0]) > 1e-9:
        with np.errstate(divide="ignore", invalid="ignore"):  # off: −inf dB, the ramp's low end
            below_db = np.maximum(10.0 * np.log10(power_share), -POWER_RAMP_DB)
        out["by-power"] = _Colouring("mean power", "Mean power below full",
                                     (f"≤ −{POWER_RAMP_DB:g} dB", f"−{POWER_RAMP_DB / 2:g} dB", "full"),
                                     1.0 + below_db / POWER_RAMP_DB)
        out["by-off"] = _Colouring("share off", "Share of the band off", percent, share_off)
    offsets = floats(cells, "offset_db")
    if _has_offsets(offsets):
        span = max(_OFFSET_MIN_SPAN_DB, float(np.abs(offsets[np.isfinite(offsets)]).max()))
        out["by-offset"] = _Colouring("offset", "Cell offset (RSRP + offset picks the cell)",
                                      (_signed(-span, "dB"), "0 dB", _signed(span, "dB")),
                                      0.5 + 0.5 * offsets / span, diverging=True,
                                      no_value="no offset (not an offset rule)")
    return out


def colouring_css(keys: Iterable[str]) -> str:
    """The style rules of the colourings `keys`: the cells' fill, and the bar shown (and the
    offset labels, with the offset colouring only)."""
    keys = list(keys)
    return "".join(f".map-row.{k} #map .cell path{{fill:var(--{k})}}"
                   f".map-row.{k} #map .cell.third path{{stroke:var(--c)}}"
                   f".map-row:not(.{k}) #{k}-legend{{display:none}}" for k in keys) \
        + (".map-row:not(.by-offset) #layer-offsets{display:none}" if "by-offset" in keys else "")


def cell_rows(cells: gpd.GeoDataFrame) -> tuple[list[str], list[str], list[str | None]]:
    """Each cell row's tooltip, its colour variables (``--by-load``, ... of
    :func:`cell_colourings`) as a style attribute, and its offset label (None: none; every row's
    None unless the offset colouring is offered)."""
    n = len(cells)
    if n == 0:
        return [], [], []
    tier = cells["tier"].astype(str).to_numpy()
    owner = column(cells, "owner", "operator")
    load = floats(cells, "load")
    power_share, share_off = _power_shares(cells)
    colourings = cell_colourings(cells)
    colors = {key: c.colors() for key, c in colourings.items()}
    offsets = floats(cells, "offset_db")
    labels = [_offset_label(v) for v in offsets] if "by-offset" in colourings else [None] * n
    cols = {name: column(cells, name, None) for name in
            ("cell_id", "site_id", "tx_power_dbm", "n_users", "traffic_mbps", "backhaul_mbps",
             "backhaul_use", "payment", "mean_power_dbm")}
    titles, styles = [], []
    for i in range(n):
        t = tier[i]
        lines = [f"cell {format_value(cols['cell_id'][i])}"
                 + ("" if "site_id" not in cells.columns else f" (site {format_value(cols['site_id'][i])})"),
                 f"{t}, {format_value(owner[i]) if 'owner' in cells.columns else 'operator'}"]
        if "tx_power_dbm" in cells.columns:
            lines.append(f"tx power: {with_unit(cols['tx_power_dbm'][i], 'dBm')}")
        if math.isfinite(offsets[i]):
            lines.append(f"offset: {_signed(offsets[i], 'dB')}")
        if "mean_power_dbm" in cells.columns:
            lines.append(f"mean power: {with_unit(cols['mean_power_dbm'][i], 'dBm')}"
                         + (f" ({as_percent(power_share[i])} of full)" if np.isfinite(power_share[i])
                            else ""))
        if "share_off" in cells.columns:
            lines.append(f"off: {as_percent(share_off[i])} of the band")
        if "load" in cells.columns:
            lines.append(f"load: {as_percent(load[i])}")
        if "n_users" in cells.columns:
            lines.append(f"users: {format_value(cols['n_users'][i])}")
        if "traffic_mbps" in cells.columns:
            lines.append(f"traffic: {with_unit(cols['traffic_mbps'][i], 'Mbit/s')}")
        if "backhaul_mbps" in cells.columns:
            bh = cols["backhaul_mbps"][i]
            text = "unlimited" if isinstance(bh, float | np.floating) and np.isposinf(bh) \
                else with_unit(bh, "Mbit/s")
            if "backhaul_use" in cells.columns and format_value(cols["backhaul_use"][i]) != DASH:
                text += f" ({as_percent(cols['backhaul_use'][i])} used)"
            lines.append(f"backhaul: {text}")
        if "payment" in cells.columns:
            lines.append(f"payment: {format_value(cols['payment'][i])}")
        titles.append("\n".join(lines))
        styles.append(";".join(f"--{k}:{v[i]}" for k, v in colors.items()))
    return titles, styles, labels
