"""Column names as planning exports and public data write them, and how each was read.

A plain CSV or vector file's column names are matched to cellopt's columns after
folding case and punctuation (``"Antenna Height (m)"``, ``"ant_height_m"`` and ``"AGL"``
are all the antenna height), with the unit read from the end of the name (``Power_W``,
``EIRP (dBm)``, ``Freq_GHz``). :func:`_plan_columns` decides, from the header alone, what
becomes of every column (renamed, converted, kept, or not used) and refuses names that
cannot be read safely (a power without a unit, an EIRP without an antenna gain, two
columns for one quantity); :func:`_convert_columns` then converts the values (the units:
:mod:`cellopt.topology.cellfiles.units`).
:class:`ColumnReading` is the resulting table, as ``read_cells(..., return_reading=True)``
returns it and the log shows it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from cellopt.errors import ValidationError
from cellopt.topology.cellfiles.problems import _plain_numbers, _Report
from cellopt.topology.cellfiles.units import (
    _HZ,
    _METRES,
    _METRES_HOW,
    _POWER_UNITS,
    _RADIANS_HOW,
    earfcn_to_mhz,
    nr_arfcn_to_mhz,
)

__all__ = ["ColumnReading", "ColumnUse"]

# Unit tokens that may end a column name, and the unit they mean. A unit is a token of its
# own (``Power_W``, ``Height (m)``) or glued to a one-word or CamelCase name (``PowerW``,
# ``HeightM``, ``TxPowerDBm``, ``AzimuthDeg``): see :func:`_fold`.
_UNITS = {
    "deg": "deg", "degs": "deg", "degree": "deg", "degrees": "deg",
    "m": "m", "meter": "m", "meters": "m", "metre": "m", "metres": "m",
    "km": "km", "kilometer": "km", "kilometers": "km", "kilometre": "km", "kilometres": "km",
    "ft": "ft", "feet": "ft", "cm": "cm", "mm": "mm",
    "rad": "rad", "rads": "rad", "radian": "rad", "radians": "rad",
    "dbm": "dBm", "dbw": "dBW", "w": "W", "watt": "W", "watts": "W", "kw": "kW", "mw": "mW",
    "dbi": "dBi", "dbd": "dBd", "db": "dB",
    "mhz": "MHz", "ghz": "GHz", "khz": "kHz", "hz": "Hz",
}
# The unit tokens, longest first: a name ending in "dbm" ends in "m" too.
_UNIT_SUFFIXES = tuple(sorted(_UNITS.items(), key=lambda kv: -len(kv[0])))

# Quantity of each folded name (tokens joined, unit removed). Ordered by quantity.
_ALIASES: dict[str, tuple[str, ...]] = {
    "lat": ("lat", "latitude", "lati", "latwgs84", "wgs84lat", "wgs84latitude", "gpslat",
            "gpslatitude", "sitelat", "sitelatitude", "celllat", "celllatitude", "latdecimal"),
    "lon": ("lon", "long", "lng", "longitude", "lonwgs84", "longwgs84", "wgs84lon",
            "wgs84long", "wgs84longitude", "gpslon", "gpslong", "gpslongitude", "sitelon",
            "sitelong", "sitelongitude", "celllon", "celllong", "celllongitude", "londecimal"),
    "site": ("site", "siteid", "sitename", "sitecode", "siteref", "sitenumber", "siteno",
             "enodeb", "enodebid", "enodebname", "enb", "enbid", "enbname", "gnodeb",
             "gnodebid", "gnodebname", "gnb", "gnbid", "gnbname", "nodeb", "nodebid",
             "nodebname", "bts", "btsid", "btsname", "mast", "mastid", "tower", "towerid"),
    "sector": ("sector", "sectorid", "sectorno", "sectornumber", "sectorname", "sect", "sec"),
    "cell": ("cell", "cellid", "cellname", "cellcode", "ci", "eci", "cgi", "ecgi", "nci",
             "ncgi", "cellidentity"),
    "azimuth": ("azimuth", "azi", "az", "azim", "bearing", "orientation", "direction",
                "antennaazimuth", "antazimuth", "antennabearing", "antennadirection",
                "antennaorientation", "boresight"),
    "height": ("height", "antennaheight", "antheight", "heightagl", "antennaheightagl",
               "antheightagl", "agl", "hagl", "antennaagl", "heightaboveground"),
    "tilt": ("tilt", "downtilt", "antennatilt", "anttilt", "antennadowntilt", "antdowntilt"),
    "mtilt": ("mtilt", "mechtilt", "mechanicaltilt", "mechanicaldowntilt", "mdowntilt",
              "mechdowntilt", "mdt"),
    "etilt": ("etilt", "electilt", "electricaltilt", "electricaldowntilt", "edowntilt",
              "elecdowntilt", "edt", "ret", "rettilt"),
    "power": ("power", "txpower", "pwr", "txpwr", "maxpower", "maxtxpower", "transmitpower",
              "outputpower", "powerout", "totalpower", "txp", "rfpower"),
    "eirp": ("eirp", "maxeirp"),
    "gain": ("gain", "antennagain", "antgain", "maxgain"),
    "band": ("band", "freqband", "frequencyband", "lteband", "nrband", "operatingband",
             "bandname"),
    "frequency": ("frequency", "freq", "carrierfrequency", "carrierfreq", "dlfrequency",
                  "dlfreq", "centrefrequency", "centerfrequency", "dlcarrierfrequency"),
    "earfcn": ("earfcn", "dlearfcn", "earfcndl"),
    "nrarfcn": ("nrarfcn", "dlnrarfcn", "nrarfcndl", "ssbarfcn", "arfcnnr"),
    "beamwidth": ("beamwidth", "hbw", "hbeamwidth", "horizontalbeamwidth", "beamwidthh",
                  "horizbeamwidth", "hpbw", "h3db", "azimuthbeamwidth"),
    "vbeamwidth": ("vbw", "vbeamwidth", "verticalbeamwidth", "beamwidthv", "vertbeamwidth",
                   "v3db"),
    "bandwidth": ("bandwidth", "bw", "channelbandwidth", "carrierbandwidth", "dlbandwidth",
                  "chbw", "cellbandwidth"),
    "filter": ("radio", "mcc", "mnc", "net"),
}
_QUANTITY = {alias: q for q, aliases in _ALIASES.items() for alias in aliases}

# cellopt's own names, matched as they always were (case and surrounding spaces aside).
_OWN_NAMES = ("cell_id", "site_id", "tier", "owner", "height_m", "azimuth_deg",
              "antenna_gain_dbi", "tx_power_dbm", "backhaul_mbps", "price_per_mbps",
              "tilt_deg", "electrical_tilt_deg", "panel_rows", "panel_columns", "lon", "lat",
              "longitude", "latitude", "x", "y", "x_m", "y_m")
# Own names the radio model or the network reads (the others are kept only).
_MODEL_COLUMNS = ("cell_id", "site_id", "tier", "owner", "height_m", "azimuth_deg",
                  "antenna_gain_dbi", "tx_power_dbm", "backhaul_mbps", "price_per_mbps",
                  "tilt_deg", "electrical_tilt_deg", "panel_rows", "panel_columns")

# The quantity of cellopt's own names (the others are their own quantity), so that a file
# giving one quantity twice (``Lat`` and ``Latitude``, ``Height`` and ``height_m``) is refused.
_OWN_QUANTITY = {"cell_id": "cell", "site_id": "site", "height_m": "height",
                 "azimuth_deg": "azimuth", "antenna_gain_dbi": "gain", "tx_power_dbm": "power",
                 "tilt_deg": "mtilt", "electrical_tilt_deg": "etilt", "longitude": "lon",
                 "latitude": "lat", "x_m": "x", "y_m": "y"}
# The cellopt column of each quantity, for messages.
_QUANTITY_COLUMN = {"lat": "lat", "lon": "lon", "x": "x", "y": "y", "site": "site_id",
                    "cell": "cell_id", "sector": "sector", "azimuth": "azimuth_deg",
                    "height": "height_m", "tilt": "tilt_deg", "mtilt": "tilt_deg",
                    "etilt": "electrical_tilt_deg", "power": "tx_power_dbm",
                    "eirp": "tx_power_dbm", "gain": "antenna_gain_dbi", "band": "band",
                    "frequency": "frequency_mhz", "earfcn": "earfcn", "nrarfcn": "nr_arfcn",
                    "beamwidth": "beamwidth_deg", "vbeamwidth": "vertical_beamwidth_deg"}
# How to name a column of each quantity so that it is read (hints for names not recognised).
_EXAMPLE_NAMES = {"lat": "'Latitude'", "lon": "'Longitude'", "site": "'Site'", "cell": "'Cell'",
                  "sector": "'Sector'", "azimuth": "'Azimuth_deg'", "height": "'Height_m'",
                  "tilt": "'M-Tilt' or 'E-Tilt'", "mtilt": "'M-Tilt'", "etilt": "'E-Tilt'",
                  "power": "'Power_dBm' or 'Power_W'", "eirp": "'EIRP_dBm'",
                  "gain": "'Gain_dBi'", "band": "'Band'", "frequency": "'Freq_MHz'",
                  "earfcn": "'EARFCN'", "nrarfcn": "'NR-ARFCN'", "beamwidth": "'HBW_deg'",
                  "vbeamwidth": "'VBW_deg'"}
_COORDINATES = ("lon", "lat", "x", "y")

# What the units allowed for each quantity become: (factor or converter name, what to say).
_DEGREES = {None: "degrees", "deg": "degrees"}
_NOT_USED_YET = "kept; not used by the radio model"


@dataclasses.dataclass(frozen=True)
class ColumnUse:
    """How one column of a cell file was read.

    Attributes
    ----------
    column : str or None
        The file's column name; None for a cellopt column the file does not give (its
        default is used).
    target : str or None
        The cellopt column it became; None if it was not used (kept as it is).
    how : str
        The conversion, or why it is not used.
    used : bool
        True if the network or the radio model reads the result (or the filters of
        :func:`~cellopt.topology.cellfiles.read_cells` do); False for columns kept only.
    """

    column: str | None
    target: str | None
    how: str
    used: bool


@dataclasses.dataclass(frozen=True)
class ColumnReading:
    """How :func:`~cellopt.topology.cellfiles.read_cells` read a file: one row per column.

    ``str(reading)`` is the table as the log shows it; :meth:`to_frame` gives it as a
    DataFrame for a report.

    Attributes
    ----------
    file : str
        The file's name.
    uses : tuple of ColumnUse
        One per file column, in the file's order, then the cellopt columns the file does
        not give (with their defaults).
    notes : tuple of str
        Sites, the position of the data in words (:mod:`cellopt.topology.gazetteer`), and
        any other remark on the reading.
    """

    file: str
    uses: tuple[ColumnUse, ...]
    notes: tuple[str, ...] = ()

    @property
    def not_used(self) -> list[ColumnUse]:
        """The file columns the network and the radio model do not read."""
        return [u for u in self.uses if u.column is not None and not u.used]

    def to_frame(self) -> pd.DataFrame:
        """The table as a DataFrame with columns ``file column``, ``cellopt column``,
        ``how``, ``used``."""
        return pd.DataFrame({
            "file column": [u.column if u.column is not None else "" for u in self.uses],
            "cellopt column": [u.target if u.target is not None else "" for u in self.uses],
            "how": [u.how for u in self.uses],
            "used": [u.used for u in self.uses]})

    def __str__(self) -> str:
        rows = [("file column", "cellopt column", "how")] + [
            (u.column if u.column is not None else "(none)",
             u.target if u.target is not None else "not used", u.how) for u in self.uses]
        w0 = max(len(r[0]) for r in rows)
        w1 = max(len(r[1]) for r in rows)
        lines = [f"{self.file}: how the columns were read"]
        lines += [f"  {a:<{w0}}  {b:<{w1}}  {c}".rstrip() for a, b, c in rows]
        lines += [f"  {note}" for note in self.notes]
        return "\n".join(lines)


@dataclasses.dataclass(frozen=True)
class _Plan:
    """What becomes of each column of a plain table, decided from its header."""

    file: str
    renames: dict[str, str]  # file column -> name in the frame read
    uses: tuple[ColumnUse, ...]  # file columns only, in the file's order
    convert: dict[str, tuple[str, str, str | None]]  # target -> (quantity, frame col, unit)
    sector: str | None  # frame column of sector ids to make cell_id from (no cell column)
    site: str | None  # frame column of site ids
    id_columns: tuple[str, ...]  # file columns to read as text
    consumed: tuple[str, ...]  # frame columns dropped once converted

    def id_target(self, column: str) -> str | None:
        return self.renames.get(column)


def _fold(name: str) -> tuple[str, str | None]:
    """A column name as (folded quantity name, unit or None): ``"Antenna Height (m)"`` ->
    ``("antennaheight", "m")``.

    The unit is the last token (``Power_W``, ``Height (m)``), or a unit glued to the end
    of the name (``PowerW``, ``HeightM``, ``Tx PowerDBm``, ``LatDeg``) when what comes
    before it is a known name and the whole name is not one (``Azim`` is an azimuth, not
    an ``Azi`` in metres).
    """
    tokens = re.findall(r"[a-z0-9]+", str(name).casefold())
    if len(tokens) > 1 and tokens[-1] in _UNITS:
        return "".join(tokens[:-1]), _UNITS[tokens[-1]]
    key = "".join(tokens)
    if key not in _QUANTITY:
        for token, meaning in _UNIT_SUFFIXES:
            head = key[:-len(token)]
            if key.endswith(token) and head in _QUANTITY:
                return head, meaning
    return key, None


def _claim(name: str, own: dict[str, str]) -> str | None:
    """The quantity a column name gives (cellopt's own names included), or None."""
    if name.casefold() in own:
        canonical = own[name.casefold()]
        return _OWN_QUANTITY.get(canonical, canonical)
    key, _ = _fold(name)
    quantity = _QUANTITY.get(key)
    if quantity == "filter":
        return {"net": "mnc"}.get(key, key)
    return quantity


def _looks_like(name: str) -> str | None:
    """The quantity a name not recognised starts like (``'Power per port (W)'``: power),
    or None: for the hint of the reading table."""
    tokens = re.findall(r"[a-z0-9]+", str(name).casefold())
    starts = [*tokens, "".join(tokens)]
    hits = [(len(alias), quantity) for alias, quantity in _QUANTITY.items()
            if len(alias) >= 4 and quantity in _EXAMPLE_NAMES
            and any(t.startswith(alias) for t in starts)]
    # a name cut short (a shapefile's 10 characters: 'Antenna_He', 'Mechanical')
    key = "".join(tokens)
    hits += [(len(key), quantity) for alias, quantity in _QUANTITY.items()
             if len(key) >= 5 and quantity in _EXAMPLE_NAMES and alias.startswith(key)
             and alias != key]
    return max(hits)[1] if hits else None


def _plan_columns(names: Sequence[str], file: str, *, geometry: bool = False) -> _Plan:
    """Decide what becomes of each column of a plain CSV / vector file from its names.

    Parameters
    ----------
    names : sequence of str
        The file's column names (a vector file's attributes).
    file : str
        The file's name, for messages.
    geometry : bool
        The positions come from a geometry (a vector file): coordinate columns are kept,
        not used.

    Raises
    ------
    ValidationError
        A power column without a unit, an EIRP without a gain or power column, a unit
        that does not fit the quantity, or two columns for one quantity (cellopt's own
        names included: ``Lat`` and ``Latitude``, ``Height`` and ``height_m``).
    """
    names = [str(n).strip() for n in names]
    own = {n.casefold(): n for n in _OWN_NAMES}
    found: dict[str, list[tuple[str, str | None]]] = {}  # quantity -> [(column, unit)]
    problems: list[str] = []
    for col in names:
        if not col:
            continue
        if col.casefold() in own:
            continue
        key, unit = _fold(col)
        quantity = _QUANTITY.get(key)
        if quantity is not None:
            found.setdefault(quantity, []).append((col, unit))
    owned = {own[n.casefold()] for n in names if n.casefold() in own}
    claims: dict[str, list[str]] = {}  # quantity -> the columns giving it
    for col in names:
        quantity = _claim(col, own) if col else None
        if quantity is not None:
            claims.setdefault(quantity, []).append(col)
    for quantity, cols in claims.items():
        if len(cols) > 1:
            target = _QUANTITY_COLUMN.get(quantity, quantity)
            problems.append(f"{file}: columns {cols} all read as {quantity} (cellopt's "
                            f"'{target}'), so which to use is ambiguous; fix: keep one of them "
                            "(drop or rename the others)")

    renames: dict[str, str] = {}
    uses: dict[str, ColumnUse] = {}
    convert: dict[str, tuple[str, str, str | None]] = {}
    consumed: list[str] = []

    def one(quantity: str) -> tuple[str, str | None] | None:
        """The column of `quantity` (a second one is refused above)."""
        cols = found.get(quantity, [])
        return cols[0] if cols else None

    def taken(target: str, col: str) -> bool:
        """True if the file has cellopt's own column `target` as well (refused above)."""
        return target in owned

    def radians(col: str, target: str) -> None:
        """Convert the angles of column `col`, in radians, to degrees as `target`."""
        convert[target] = ("angle", col, "rad")
        consumed.append(col)

    def bad_unit(col: str, unit: str | None, allowed: str) -> None:
        problems.append(f"{file}: column '{col}' has the unit {unit} in its name, which is not "
                        f"{allowed}; fix: convert the values and rename the column")

    # Coordinates: renamed to lon / lat, which the coordinate reader takes.
    for quantity in ("lon", "lat"):
        hit = one(quantity)
        same = {"lon": {"lon", "longitude"}, "lat": {"lat", "latitude"}}[quantity]
        if hit and not (same & owned):
            col, unit = hit
            if unit not in _DEGREES:
                bad_unit(col, unit, "degrees")
            renames[col] = quantity
            uses[col] = ColumnUse(col, quantity, f"{'longitude' if quantity == 'lon' else 'latitude'}"
                                  " [°]", True)
    # Ids.
    site = one("site")
    if site and not taken("site_id", site[0]):
        renames[site[0]] = "site_id"
        uses[site[0]] = ColumnUse(site[0], "site_id", "site id: rows with the same value are "
                                  "the sectors of one site", True)
    cell = one("cell")
    sector = one("sector")
    if cell and not taken("cell_id", cell[0]):
        renames[cell[0]] = "cell_id"
        uses[cell[0]] = ColumnUse(cell[0], "cell_id", "cell id, as it is", True)
    sector_col = None
    if sector:
        renames[sector[0]] = sector_col = "sector"
        if cell or "cell_id" in owned:
            uses[sector[0]] = ColumnUse(sector[0], "sector", "kept (the cell id comes from "
                                        f"'{cell[0] if cell else 'cell_id'}')", False)
            sector_col = None
        elif site:
            uses[sector[0]] = ColumnUse(sector[0], "cell_id", f"cell id '{{{site[0]}}}-"
                                        f"{{{sector[0]}}}' (sector within its site); kept as "
                                        "'sector' too", True)
        else:
            uses[sector[0]] = ColumnUse(sector[0], "cell_id", "cell id, as it is; kept as "
                                        "'sector' too", True)
    # Angles and height: renamed when the unit is the model's, converted otherwise.
    for quantity, target, what in (
            ("azimuth", "azimuth_deg", "azimuth [°] clockwise from north; empty = omni"),
            ("mtilt", "tilt_deg", "mechanical downtilt [°] below the horizon (3-D antenna)"),
            ("etilt", "electrical_tilt_deg", "electrical downtilt [°] below the horizon "
             "(3-D antenna)")):
        hit = one(quantity)
        if hit and not taken(target, hit[0]):
            col, unit = hit
            if unit == "rad":
                radians(col, target)
                uses[col] = ColumnUse(col, target, f"{what}; {_RADIANS_HOW}", True)
                continue
            if unit not in _DEGREES:
                bad_unit(col, unit, "degrees or radians")
            renames[col] = target
            uses[col] = ColumnUse(col, target, what + ("" if unit else "; no unit in the name: "
                                                        "read as degrees"), True)
    tilt = one("tilt")
    if tilt:
        col, unit = tilt
        if unit not in (*_DEGREES, "rad"):
            bad_unit(col, unit, "degrees or radians")
        if "mtilt" in found or "tilt_deg" in owned:
            uses[col] = ColumnUse(col, None, "not used: the mechanical tilt comes from "
                                  f"'{found['mtilt'][0][0] if 'mtilt' in found else 'tilt_deg'}'"
                                  " (rename this one if it is the electrical tilt)", False)
        else:
            if unit == "rad":
                radians(col, "tilt_deg")
            else:
                renames[col] = "tilt_deg"
            uses[col] = ColumnUse(col, "tilt_deg", f"'{col}' alone is ambiguous: read as the "
                                  "mechanical downtilt [°] below the horizon (3-D antenna); "
                                  "rename it E-Tilt if it is electrical" + (
                                      f"; {_RADIANS_HOW}" if unit == "rad" else ""), True)
    height = one("height")
    if height and not taken("height_m", height[0]):
        col, unit = height
        if unit in (None, "m"):
            renames[col] = "height_m"
            uses[col] = ColumnUse(col, "height_m", "antenna height above ground [m]" + (
                "" if unit else "; no unit in the name: read as metres"), True)
        elif unit in _METRES:
            convert["height_m"] = ("height", col, unit)
            consumed.append(col)
            uses[col] = ColumnUse(col, "height_m", f"{_METRES_HOW[unit]} = metres", True)
        else:
            bad_unit(col, unit, "m, cm, mm, km or ft")
    # Gain, power and EIRP.
    gain = one("gain")
    if gain and not taken("antenna_gain_dbi", gain[0]):
        col, unit = gain
        if unit in (None, "dBi", "dB"):
            renames[col] = "antenna_gain_dbi"
            note = {None: "; no unit in the name: read as dBi", "dB": "; dB read as dBi"}
            uses[col] = ColumnUse(col, "antenna_gain_dbi", "boresight gain [dBi]"
                                  + note.get(unit, ""), True)
        elif unit == "dBd":
            convert["antenna_gain_dbi"] = ("gain", col, unit)
            consumed.append(col)
            uses[col] = ColumnUse(col, "antenna_gain_dbi", "dBd + 2.15 = dBi", True)
        else:
            bad_unit(col, unit, "dBi or dBd")
    power, eirp = one("power"), one("eirp")
    has_gain = bool(gain) or "antenna_gain_dbi" in owned
    for hit, what in ((power, "transmit power"), (eirp, "EIRP")):
        if hit is None:
            continue
        col, unit = hit
        if unit not in (*_POWER_UNITS, None):
            bad_unit(col, unit, "dBm, dBW, W, kW or mW")
        elif unit is None:
            problems.append(f"{file}: column '{col}' is a {what} without a unit in its name, so "
                            f"whether it is dBm or W is unknown; fix: rename it {col}_dBm (values "
                            f"in dBm) or {col}_W (values in watts)")
    if power and power[1] in _POWER_UNITS and not taken("tx_power_dbm", power[0]):
        col, unit = power
        if unit == "dBm":
            renames[col] = "tx_power_dbm"
        else:
            convert["tx_power_dbm"] = ("power", col, unit)
            consumed.append(col)
        uses[col] = ColumnUse(col, "tx_power_dbm", _POWER_UNITS[unit], True)
        if eirp:
            renames[eirp[0]] = "eirp_dbm" if eirp[1] == "dBm" else eirp[0]
            uses[eirp[0]] = ColumnUse(eirp[0], renames[eirp[0]], "not used: the transmit power "
                                      f"comes from '{col}'", False)
    elif eirp and eirp[1] in _POWER_UNITS and "tx_power_dbm" in owned:
        uses[eirp[0]] = ColumnUse(eirp[0], None, "not used: the transmit power comes from "
                                  f"'{own['tx_power_dbm']}'; kept as an extra column", False)
    elif eirp and eirp[1] in _POWER_UNITS:
        col, unit = eirp
        if not has_gain:
            problems.append(f"{file}: column '{col}' is an EIRP (transmit power + antenna "
                            "gain), but the file has no antenna gain column, so the transmit "
                            "power is unknown; fix: add the gain (e.g. a column 'Gain_dBi') or "
                            "give the transmit power instead (a column 'Power_dBm' or 'Power_W')")
        else:
            convert["tx_power_dbm"] = ("eirp", col, unit)
            consumed.append(col)
            gain_col = gain[0] if gain else "antenna_gain_dbi"
            how = {"dBm": "EIRP [dBm]", "dBW": "EIRP [dBW] + 30", "W": "10·log10(EIRP [W]) + 30",
                   "kW": "10·log10(EIRP [kW]) + 60", "mW": "10·log10(EIRP [mW])"}[unit]
            uses[col] = ColumnUse(col, "tx_power_dbm", f"{how} − '{gain_col}' [dBi] (cable "
                                  "losses taken as 0)", True)
    # Carrier: band, frequency, EARFCN, NR-ARFCN; beamwidths. Kept, not used.
    hit = one("band")
    if hit:
        renames[hit[0]] = "band"
        uses[hit[0]] = ColumnUse(hit[0], "band", "kept as text; not used by the radio model", False)
    freq = one("frequency")
    if freq:
        col, unit = freq
        if unit in _HZ:
            convert["frequency_mhz"] = ("frequency", col, unit)
            consumed.append(col)
            how = "MHz" if unit == "MHz" else f"{unit} → MHz"
            uses[col] = ColumnUse(col, "frequency_mhz", f"carrier frequency, {how}; {_NOT_USED_YET}"
                                  " (its carrier frequency is a RadioModel parameter)", False)
        else:
            uses[col] = ColumnUse(col, None, "not used: a frequency without a unit in its name; "
                                  f"rename it {col}_MHz or {col}_GHz", False)
    for quantity, target, standard in (("earfcn", "earfcn", "TS 36.101 §5.7.3"),
                                       ("nrarfcn", "nr_arfcn", "TS 38.104 §5.4.2.1")):
        hit = one(quantity)
        if hit:
            renames[hit[0]] = target
            derive = "frequency_mhz" not in convert
            if derive:
                convert["frequency_mhz"] = (quantity, target, None)
            uses[hit[0]] = ColumnUse(hit[0], target, f"{_NOT_USED_YET}" + (
                f"; downlink carrier frequency_mhz from it ({standard})" if derive else ""), False)
    for quantity, target, what in (("beamwidth", "beamwidth_deg", "horizontal"),
                                   ("vbeamwidth", "vertical_beamwidth_deg", "vertical")):
        hit = one(quantity)
        if hit:
            col, unit = hit
            if unit == "rad":
                radians(col, target)
            elif unit not in _DEGREES:
                bad_unit(col, unit, "degrees or radians")
            else:
                renames[col] = target
            uses[col] = ColumnUse(col, target, f"{what} half-power beamwidth [°]"
                                  + (f", {_RADIANS_HOW}" if unit == "rad" else "")
                                  + f"; {_NOT_USED_YET} (its beamwidth θ_3dB is a RadioModel "
                                  "parameter)", False)
    for col, _ in found.get("filter", []):
        uses[col] = ColumnUse(col, col, "kept, for the radio / mcc / mnc filters", True)
    if problems:
        raise ValidationError(problems)

    # The positions: lon / lat if both are given, else x / y; a vector file's geometry.
    if geometry:
        positions, source = (), "the geometry"
    elif "lon" in claims and "lat" in claims:
        positions, source = ("lon", "lat"), f"'{claims['lon'][0]}', '{claims['lat'][0]}'"
    elif "x" in claims and "y" in claims:
        positions, source = ("x", "y"), f"'{claims['x'][0]}', '{claims['y'][0]}'"
    else:
        positions, source = _COORDINATES, ""  # refused for lack of coordinates, if at all
    out = []
    for col in names:
        quantity = _claim(col, own) if col else None
        if quantity in _COORDINATES and quantity not in positions:
            out.append(ColumnUse(col, None, f"not used: the positions come from {source}; "
                                 "kept as an extra column", False))
        elif col in uses:
            out.append(uses[col])
        elif col.casefold() in own:
            canonical = own[col.casefold()]
            used = canonical in _MODEL_COLUMNS or canonical in ("lon", "lat", "longitude",
                                                                 "latitude", "x", "y", "x_m", "y_m")
            target = {"longitude": "lon", "latitude": "lat"}.get(canonical, canonical)
            how = {"lon": "longitude [°]", "lat": "latitude [°]"}.get(target, "cellopt's own "
                                                                      "column, as it is")
            out.append(ColumnUse(col, target, how, used))
        elif quantity == "bandwidth":
            out.append(ColumnUse(col, None, "not used: a network has one bandwidth for all its "
                                 "cells, read_cells(..., bandwidth_mhz=) ([network] "
                                 "bandwidth_mhz in a scenario); kept as an extra column", False))
        elif col:
            like = _looks_like(col)
            how = "not recognised: kept as an extra column"
            if like is not None:
                how = (f"not recognised, though the name starts like {like} "
                       f"('{_QUANTITY_COLUMN[like]}'): kept as an extra column; rename it "
                       f"{_EXAMPLE_NAMES[like]} (with its unit) to use it")
            if geometry and file.casefold().endswith(".shp") and len(col) == 10:
                how += ("; shapefiles cut field names to 10 characters: give the cells as "
                        "GeoPackage or GeoJSON, or name the field so that it fits")
            out.append(ColumnUse(col, None, how, False))
    ids = tuple(c for c, t in renames.items() if t in ("cell_id", "site_id", "sector"))
    return _Plan(file, renames, tuple(out), convert, sector_col,
                 "site_id" if (site or "site_id" in owned) else None, ids, tuple(consumed))


def _rename(frame: pd.DataFrame, plan: _Plan) -> pd.DataFrame:
    """The frame's columns renamed per `plan`, and ``cell_id`` made from sector ids where
    the file has sectors but no cell ids (row by row, so chunks give the same)."""
    frame = frame.rename(columns=plan.renames)
    if plan.sector is not None:
        sector = _text(frame[plan.sector])
        if plan.site is not None:
            site = _text(frame[plan.site])
            frame["cell_id"] = (site + "-" + sector).astype(object).where(
                site.notna() & sector.notna(), np.nan).to_numpy(object)
        else:
            frame["cell_id"] = sector.astype(object).where(sector.notna(), np.nan).to_numpy(object)
    return frame


def _text(values: pd.Series) -> pd.Series:
    text = pd.Series(values.astype(object).where(values.notna(), None), dtype="string",
                     index=values.index).str.strip()
    return text.mask(text == "")


def _convert_columns(frame: pd.DataFrame, plan: _Plan, id_col: str | None) -> dict[str, np.ndarray]:
    """The converted cellopt columns of `plan` (``tx_power_dbm`` from W or EIRP, ...).

    Raises
    ------
    ValidationError
        Naming the rows whose values cannot be converted (not numbers, powers ≤ 0 W) and
        the fix.
    """
    report = _Report(frame, plan.file, id_col)
    out: dict[str, np.ndarray] = {}

    def numbers(col: str) -> np.ndarray:
        values = frame[col]
        num = pd.to_numeric(values, errors="coerce").to_numpy(float)
        report(values.isna().to_numpy(), f"{col} is missing", f"fill in '{col}' or drop the row")
        report(np.isnan(num) & values.notna().to_numpy(), f"{col} is not a number",
               _plain_numbers(col))
        return num

    for target, (quantity, col, unit) in plan.convert.items():
        if quantity == "height":
            out[target] = numbers(col) * _METRES[unit]
        elif quantity == "gain":
            out[target] = numbers(col) + 2.15
        elif quantity in ("power", "eirp"):
            value = numbers(col)
            if unit in ("W", "kW", "mW"):
                with np.errstate(invalid="ignore"):
                    report(value <= 0, f"{col} is not a power > 0 {unit}",
                           f"give positive powers in '{col}' (or the power in dBm in a column "
                           "'Power_dBm')")
                with np.errstate(divide="ignore", invalid="ignore"):
                    value = 10 * np.log10(np.where(value > 0, value, np.nan)) + {
                        "W": 30.0, "kW": 60.0, "mW": 0.0}[unit]
            elif unit == "dBW":
                value = value + 30.0
            if quantity == "eirp":
                gain = out.get("antenna_gain_dbi")
                if gain is None:
                    gain = numbers("antenna_gain_dbi")
                value = value - gain
            out[target] = value
        elif quantity == "frequency":
            out[target] = numbers(col) * _HZ[unit]
        elif quantity == "angle":  # empty: omni azimuth, the model's tilt, unknown beamwidth
            values = frame[col]
            num = pd.to_numeric(values, errors="coerce").to_numpy(float)
            report(np.isnan(num) & values.notna().to_numpy(), f"{col} is not a number",
                   _plain_numbers(col))
            out[target] = np.degrees(num)
        elif quantity in ("earfcn", "nrarfcn"):
            num = pd.to_numeric(frame[col], errors="coerce").to_numpy(float)
            out[target] = earfcn_to_mhz(num) if quantity == "earfcn" else nr_arfcn_to_mhz(num)
    if report.problems:
        raise ValidationError(report.problems)
    return out
