"""What every part of the report shares: its colours, how a value is written, and small HTML pieces.

The leaf of the package: it imports no other module of the report. Values become text here
(:func:`format_value`, :func:`with_unit`, :func:`as_percent`), text becomes HTML (:func:`esc`),
map coordinates become SVG numbers (:func:`coord`), and the legend's pieces shared by the map
and its coverage layers (:func:`chip`, :func:`ramp_legend`) are drawn.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from cellopt import network

#: Fill colour of each tier, as in the plots; users take the colour of their serving tier,
#: unserved users the "none" grey.
TIER_COLORS: dict[str, str] = {**network.TIER_COLORS, "none": network.UNSERVED_COLOR}
OTHER_COLOR = "#6f4e7c"  # cells of an unknown tier
NO_LOAD_COLOR = "#c8c8c8"  # cells without a finite load
#: The text of a missing value.
DASH = "–"
#: Outline colour and dash pattern [screen px] of each area, in turn.
AREA_STYLES = (("#1b1b1b", ""), ("#b2182b", "9 5"), ("#2166ac", "3 4"), ("#5e3c99", "12 4 3 4"),
               ("#1b7837", "1.5 3"), ("#8c510a", "6 3 6 8"))


def format_value(value: Any) -> str:
    """The text shown for one value of a table or tooltip (not yet HTML-escaped).

    Parameters
    ----------
    value : Any
        A scalar.

    Returns
    -------
    str
        "–" for None/NaN/NA; "∞"/"−∞" for infinities; "yes"/"no" for booleans; integers in
        full; other floats rounded to 4 significant digits without trailing zeros, in fixed
        notation between 0.001 and 10⁶ (e.g. ``12350``, ``3.142``, ``0.5``, ``0.001235``) and
        in scientific notation outside (``1.235e+07``, ``1e-09``); anything else as
        ``str(value)``.
    """
    if value is None or value is pd.NA or value is pd.NaT:
        return DASH
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        v = float(value)
        if math.isnan(v):
            return DASH
        if math.isinf(v):
            return "∞" if v > 0 else "−∞"
        if v == 0:
            return "0"
        r = float(f"{v:.4g}")
        a = abs(r)
        if a >= 1e6 or a < 1e-3:
            mantissa, exponent = f"{v:.3e}".split("e")
            return f"{_strip_zeros(mantissa)}e{exponent}"
        return _strip_zeros(f"{r:.{max(0, 3 - math.floor(math.log10(a)))}f}")
    try:
        if pd.isna(value):
            return DASH
    except (TypeError, ValueError):  # array-likes
        pass
    return str(value)


def _strip_zeros(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def esc(value: Any) -> str:
    """`value` as HTML text (quotes escaped too, for attributes)."""
    return html.escape(str(value), quote=True)


def coord(v: float) -> str:
    """A coordinate rounded to 0.1 m, without a trailing ``.0``."""
    s = f"{v:.1f}"
    if s.endswith(".0"):
        s = s[:-2]
    return "0" if s == "-0" else s


def slug(name: str, used: set[str], prefix: str) -> str:
    """An id ``<prefix>-<name in lower case and dashes>`` not yet in `used` (then added to it)."""
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "item"
    slug, k = f"{prefix}-{base}", 2
    while slug in used:
        slug, k = f"{prefix}-{base}-{k}", k + 1
    used.add(slug)
    return slug


def column(frame: pd.DataFrame, name: str, default: Any) -> np.ndarray:
    """Column `name` as an array (missing column: `default` in every row)."""
    if name in frame.columns:
        return frame[name].to_numpy()
    return np.full(len(frame), default, dtype=object)


def bools(frame: pd.DataFrame, name: str) -> np.ndarray:
    """Column `name` as bool (missing column or missing values: True)."""
    if name not in frame.columns:
        return np.ones(len(frame), bool)
    v = frame[name]
    return v.where(v.notna(), True).astype(bool).to_numpy()


def floats(frame: pd.DataFrame, name: str) -> np.ndarray:
    """Column `name` as float (missing column, or a value that is no number: NaN)."""
    if name not in frame.columns:
        return np.full(len(frame), np.nan)
    return pd.to_numeric(frame[name], errors="coerce").to_numpy(float)


def with_unit(value: Any, unit: str) -> str:
    """`value` as :func:`format_value` writes it, then `unit` (a missing value: the dash alone)."""
    text = format_value(value)
    return text if text == DASH else f"{text} {unit}"


def as_percent(value: Any) -> str:
    """A share 0..1 as a percentage ("35 %")."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return format_value(value)
    return with_unit(v * 100, "%")


def chip(fill: str) -> str:
    """A legend's square of colour `fill`."""
    return (f'<svg class="sw" viewBox="-14 -14 28 28" aria-hidden="true"><rect x="-7" y="-7" width="14" '
            f'height="14" fill="{fill}"/></svg>')


def ramp_legend(key: str, title: str, colours: Sequence[str], ticks: Sequence[str], notes_html: str,
                *, attrs: str = "", classes: str = "ramp-legend") -> str:
    """A colour bar: `colours` evenly spread from left to right, `ticks` under it."""
    stops = "".join(f'<stop offset="{v:.2f}" stop-color="{c}"/>'
                    for v, c in zip(np.linspace(0, 1, len(colours)), colours, strict=True))
    return (f'<div class="{classes}" id="{key}-legend"{attrs}><div class="legend-title">{title}</div>'
            '<svg class="ramp" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">'
            f'<defs><linearGradient id="{key}-ramp">{stops}</linearGradient></defs>'
            f'<rect width="100" height="10" fill="url(#{key}-ramp)"/></svg>'
            f'<div class="ramp-labels">{"".join(f"<span>{esc(t)}</span>" for t in ticks)}</div>'
            f"{notes_html}</div>")
