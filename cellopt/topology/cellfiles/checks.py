"""The row checks of coordinates and of the cell columns of plain CSV / vector input.

Each check reports its offending rows to a :class:`~cellopt.topology.cellfiles.problems._Report`
(the OpenCelliD code checks are in :mod:`cellopt.topology.cellfiles.opencellid`).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import shapely

from cellopt.checks import outside_usual
from cellopt.errors import ROWS_LISTED, ValidationError, describe_rows
from cellopt.network import CELL_RULES
from cellopt.parameters import LIMITS
from cellopt.topology.cellfiles.formats import _NUMERIC_COLUMNS
from cellopt.topology.cellfiles.problems import _plain_numbers, _Report
from cellopt.topology.cellfiles.records import Source

# The duplicate cell_id check of plain CSV / vector input: what is wrong, and the fix.
_DUPLICATE_ID = ("duplicate cell_id", "make cell_id unique (one row per cell)")


def _numbers(values: pd.Series, col: str, report: _Report, degrees: bool = False) -> np.ndarray:
    """Coerce to float, reporting missing and non-numeric entries (NaN in the result)."""
    num = pd.to_numeric(values, errors="coerce").to_numpy(float)
    missing = values.isna().to_numpy()
    report(missing, f"{col} is missing", "fill it in or drop the row")
    report(np.isnan(num) & ~missing, f"{col} is not a number", _plain_numbers(col, degrees))
    return num


def _coordinates(frame: pd.DataFrame, src: Source, found: dict | None = None
                 ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Source-CRS coordinates, shape (n,) each, and the problems found in them (gathered
    into `found` too, when given: see :class:`~cellopt.topology.cellfiles.problems._Report`)."""
    report = _Report(frame, src.name, src.id_col, found)
    xname, yname = src.labels()
    if src.xcol is not None:
        x = _numbers(frame[src.xcol], src.xcol, report, src.geographic)
        y = _numbers(frame[src.ycol], src.ycol, report, src.geographic)
    else:
        geom = frame.geometry.to_numpy()
        missing = np.asarray(shapely.is_missing(geom), bool)
        point = ~missing & (np.asarray(shapely.get_type_id(geom)) == 0)
        empty = point & np.asarray(shapely.is_empty(geom), bool)
        report(missing, "geometry is missing", "give one Point per row")
        report(~missing & ~point, "geometry is not a Point",
               "give one Point per row (e.g. the centroid of each shape)")
        report(empty, "geometry is an empty Point", "give a position or drop the row")
        ok = point & ~empty
        x = np.full(len(frame), np.nan)
        y = np.full(len(frame), np.nan)
        x[ok], y[ok] = shapely.get_x(geom[ok]), shapely.get_y(geom[ok])
        report(ok & (np.isnan(x) | np.isnan(y)), "geometry has NaN coordinates",
               "give a finite position or drop the row")
    report(np.isinf(x) | np.isinf(y), f"{xname} or {yname} is infinite",
           "give finite coordinates")
    if src.geographic:
        with np.errstate(invalid="ignore"):
            lon_bad, lat_bad = np.abs(x) > 180, np.abs(y) > 90
            swapped = lat_bad & (np.abs(y) <= 180) & (np.abs(x) <= 90)
        report(swapped, f"{yname} is outside [-90, 90] while {xname} is within [-90, 90]: "
               f"the {xname}/{yname} columns look swapped",
               f"swap the {xname} and {yname} values (longitude is x, latitude is y)")
        with np.errstate(invalid="ignore"):
            report((x == 0) & (y == 0), f"{xname} and {yname} are both 0 (a point in the Gulf "
                   "of Guinea: a missing position exported as 0?)",
                   "fill in the position, or drop the row")
        hint = _NOT_DEGREES if src.xcol is not None else _NOT_DEGREES_VECTOR
        report(lat_bad & ~swapped, f"{yname} is outside [-90, 90]",
               f"give latitudes in degrees in [-90, 90]{hint}")
        report(lon_bad & ~swapped, f"{xname} is outside [-180, 180]",
               f"give longitudes in degrees in [-180, 180]{hint}")
    return x, y, report.problems


# What coordinates outside the degrees' range usually are, and their fix.
_NOT_DEGREES = ("; degrees × 10^7 (integers such as 481374000, as some exports store them) "
                "divide by 1e7; projected coordinates in metres go in columns 'x', 'y' with "
                "source_crs=")
_NOT_DEGREES_VECTOR = ("; the CRS read is geographic (degrees): coordinates in metres need "
                       "source_crs= their projected CRS (for a file with a wrong CRS)")
# Numeric cell columns that may be left empty in a file: azimuth (omni).
_MAY_BE_EMPTY = ("azimuth_deg",)
# Columns read_cells keeps but the radio model does not read that must hold numbers where
# given (empty: not known).
_KEPT_NUMBERS = ("beamwidth_deg", "vertical_beamwidth_deg", "earfcn", "nr_arfcn")


def _file_column(col: str, plan: Any) -> str:
    """The file's name of the cellopt column `col` of a frame read with `plan`."""
    if plan is not None:
        for given, target in plan.renames.items():
            if target == col:
                return given
    return col


def _header_rows(frame: pd.DataFrame, plan: Any) -> np.ndarray:
    """Which rows of a plain table repeat its header: every field of the file's columns
    is the column's own name (compared column by column on the rows still in question)."""
    names = {target: given for given, target in plan.renames.items()}
    rows = np.arange(len(frame))
    compared = 0
    for col in frame.columns:
        if col == "cell_id" and plan.sector is not None:
            continue  # made of site and sector ids
        title = str(names.get(col, col)).strip().casefold()
        text = frame[col].iloc[rows].astype("string").str.strip().str.casefold()
        rows = rows[(text == title).fillna(False).to_numpy(bool)]
        compared += 1
        if not len(rows):
            break
    header = np.zeros(len(frame), bool)
    if compared >= 2:
        header[rows] = True
    return header


def _repeated_header(frame: pd.DataFrame, src: Source, found: dict | None = None) -> list[str]:
    """The rows of a plain table that repeat its header line (:func:`_header_rows`); checked
    first, as their other problems follow from it."""
    report = _Report(frame, src.name, src.id_col, found)
    if src.plan is not None and src.kind == "csv" and len(frame):
        report(_header_rows(frame, src.plan), "the row repeats the header line (exports "
               "joined into one file?)", "delete the repeated header lines")
    return report.problems


def _cell_problems(frame: pd.DataFrame, name: str, found: dict | None = None,
                   plan: Any = None) -> list[str]:
    """Ids and numeric optional columns of plain CSV / vector input (named as the file names
    them, by `plan`).

    With `found` (the chunks of one file, see
    :class:`~cellopt.topology.cellfiles.problems._Report`), duplicate ids are left to the
    caller, who has the ids of every chunk: this only marks the check's place.
    """
    id_col = "cell_id" if "cell_id" in frame.columns else None
    report = _Report(frame, name, id_col, found)
    if id_col:
        ids = frame["cell_id"]
        report(ids.isna(), "cell_id is missing", "give every row a cell_id, or drop the "
               "column to number the cells 0..n-1")
        dup = np.zeros(len(ids), bool) if found is not None else ids.duplicated(keep=False)
        report(dup & ids.notna(), *_DUPLICATE_ID)
    if "site_id" in frame.columns:
        report(frame["site_id"].isna(), "site_id is missing",
               "give every row a site_id, or drop the column (one site per cell)")
    for col in ("cell_id", "site_id"):
        if col in frame.columns:  # a quoted field across lines, or a pasted tab
            broken = frame[col].astype("string").str.contains(r"[\r\n\t]", regex=True)
            report(broken.fillna(False).to_numpy(bool), f"{col} holds a line break or tab "
                   "(a quoted field that runs over lines?)",
                   f"remove the line breaks and tabs from the {col} values")
    for col in (*_NUMERIC_COLUMNS, *_KEPT_NUMBERS):
        if col in frame.columns:
            values = frame[col]
            num = pd.to_numeric(values, errors="coerce")
            given = _file_column(col, plan)
            label = col if given == col else f"'{given}' (read as {col})"
            if col not in (*_MAY_BE_EMPTY, *_KEPT_NUMBERS):
                report(values.isna(), f"{label} is empty",
                       f"fill in '{given}' or drop the row (an empty value has no default; "
                       "without the column every cell takes the default)")
            report(num.isna() & values.notna(), f"{label} is not a number", _plain_numbers(given))
    return report.problems


def _log10(values: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return 10.0 * np.log10(np.where(values > 0, values, np.nan))


# The cell columns checked against their usual range, by the key of
# :data:`cellopt.parameters.LIMITS` that declares it (the range a scenario key of that
# name is checked against), the unit cellopt reads, and the units a file's values may
# have been meant in instead, each with its conversion to cellopt's unit (for the hint
# that names the likely unit slip).
_USUAL_CHECKS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "tx_power_dbm": ("tx_power_dbm", "dBm", {
        "dBm": lambda v: v, "W": lambda v: _log10(v) + 30.0, "mW": _log10,
        "kW": lambda v: _log10(v) + 60.0, "dBW": lambda v: v + 30.0}),
    "antenna_gain_dbi": ("antenna_gain_dbi", "dBi", {
        "dBi": lambda v: v, "dBd": lambda v: v + 2.15, "linear (times)": _log10}),
    "height_m": ("height_m", "m", {
        "m": lambda v: v, "ft": lambda v: v * 0.3048, "km": lambda v: v * 1000.0,
        "cm": lambda v: v / 100.0}),
    "tilt_deg": ("tilt_deg", "deg", {}),
    "electrical_tilt_deg": ("tilt_deg", "deg", {}),
    "frequency_mhz": ("frequency_mhz", "MHz", {
        "MHz": lambda v: v, "GHz": lambda v: v * 1e3, "kHz": lambda v: v * 1e-3,
        "Hz": lambda v: v * 1e-6}),
    "beamwidth_deg": ("theta_3db_deg", "deg", {"radians": np.degrees}),
}


# The name of a column whose unit read_cells converts (``Power_W``), by cellopt column;
# and the units a name may give.
_NAMED_UNITS = {"tx_power_dbm": "Power", "antenna_gain_dbi": "Gain", "height_m": "Height",
                "frequency_mhz": "Freq",
                **dict.fromkeys(("dBm", "W", "mW", "kW", "dBW", "dBi", "dBd", "m", "ft", "km",
                                 "MHz", "GHz", "kHz", "Hz"))}


def _warn_unusual(cells: pd.DataFrame, frame: pd.DataFrame, src: Source, defaults: Any) -> None:
    """Warn, per column, about the cells whose transmit power, gain, height or tilts are
    outside the usual range that :data:`cellopt.parameters.LIMITS` declares for the scenario
    key of that name (the tier's range, where it has one per tier), naming the file's
    column (or the read_cells default), the rows, and the likely unit slip."""
    uses = {} if src.plan is None else {u.target: u for u in src.plan.uses
                                        if u.column is not None and u.target}
    convert = {} if src.plan is None else src.plan.convert
    same_rows = len(frame) == len(cells)
    positions = frame.index.to_numpy() if same_rows else np.arange(len(cells))
    ids = cells["cell_id"].to_numpy(object)
    tiers = cells["tier"].to_numpy(object)
    tier_given = "tier" in uses
    for target, (kind, unit, meanings) in _USUAL_CHECKS.items():
        if target not in cells.columns:
            continue
        values = pd.to_numeric(cells[target], errors="coerce").to_numpy(float)
        bad = outside_usual(values, kind, tiers)
        if not bad.any():
            continue
        limit = LIMITS[kind]
        rows = describe_rows(positions[bad], ids[bad], total=int(bad.sum()))
        shown = ", ".join(f"{v:.4g}" for v in pd.unique(values[bad])[:5])
        ranges = []
        for tier in pd.unique(tiers[bad]):
            lo, hi = limit.usual_for(tier)
            ranges.append(f"[{lo:g}, {hi:g}] {limit.unit} for {tier} cells")
        use = uses.get(target)
        if use is None and target not in defaults.as_columns():
            continue  # derived from another column (a frequency from an EARFCN)
        if use is None:
            given = getattr(defaults, target, None)
            what = f"the default read_cells(..., {target}={given!r})"
            fix = (f"pass read_cells(..., {target}=...) a value in the usual range of these "
                   f"cells' tier, or give the file a column of {target}")
            slip = ""
        else:
            what = f"column '{use.column}'"
            quantity, col, given_unit = convert.get(target, (None, None, unit))
            raw = values if col is None else pd.to_numeric(frame[col], errors="coerce").to_numpy(
                float)
            slip, fix = "", limit.fix
            fits = []  # (unit meant, the values read so) that are in the usual range
            for meant, to_unit in meanings.items():
                if (quantity in ("eirp", "earfcn", "nrarfcn") or meant == given_unit
                        or not same_rows):
                    continue
                alt = to_unit(raw[bad])
                if np.isfinite(alt).all() and not outside_usual(alt, kind, tiers[bad]).any():
                    fits.append((meant, alt))
            if fits:  # every unit that fits is named: 500 in a metre column is ft or cm
                meant = fits[0][0]
                read_as = "; ".join(f"read as {m} they would be "
                                    f"{', '.join(f'{v:.4g}' for v in pd.unique(alt)[:5])} "
                                    f"{limit.unit}" for m, alt in fits)
                slip = (f"; they look like {' or '.join(m for m, _ in fits)} given as "
                        f"{given_unit}: {read_as}")
                fix = (f"convert the values of '{use.column}' from "
                       f"{' or '.join(m for m, _ in fits)} to {given_unit}")
                if meant in _NAMED_UNITS:
                    fix += (f", or rename the column '{_NAMED_UNITS[target]}_{meant}' so that "
                            "read_cells converts them")
        if not tier_given and limit.usual_per_tier:
            fix += (f" (the tier is read_cells(..., tier={defaults.tier!r}); give a tier column, "
                    "or tier=, if these cells are of another tier)")
        warnings.warn(f"{src.name}: {rows}: {what} gives {target} = {shown} {limit.unit}, outside "
                      f"the usual range {', '.join(ranges)} (cellopt.parameters.LIMITS"
                      f"['{kind}'], the range the scenario key {kind} is checked against; legal, "
                      f"so read as given){slip}; fix: {fix}", UserWarning, stacklevel=3)


#: Cells sharing a site id must lie within this distance of each other [m]: the sectors of
#: one mast (antennas on the corners of one roof included). A site's cells share its
#: shadowing, so a site id reused for another mast would give both masts the same.
SITE_TOLERANCE_M = 200.0
# A site with more cells than this is measured by its bounding box, not cell by cell.
_PAIRWISE_CELLS = 2000


def _check_site_spread(site_ids: np.ndarray, xy_m: np.ndarray, frame: pd.DataFrame,
                       src: Source) -> None:
    """Refuse sites whose cells are more than :data:`SITE_TOLERANCE_M` apart, naming the
    site id, its rows and the distance."""
    codes, sites = pd.factorize(pd.Series(site_ids, dtype=object))
    counts = np.bincount(codes, minlength=len(sites))
    centre = np.column_stack([np.bincount(codes, xy_m[:, k], len(sites)) for k in (0, 1)])
    centre /= np.maximum(counts, 1)[:, None]
    from_centre = np.hypot(*(xy_m - centre[codes]).T)
    reach = np.zeros(len(sites))
    np.maximum.at(reach, codes, from_centre)
    problems = []
    suspects = np.flatnonzero(reach > SITE_TOLERANCE_M / 2)  # apart by up to twice that
    for n, k in enumerate(suspects):
        if len(problems) == ROWS_LISTED:  # the others: those surely spread, counted
            more = int((reach[suspects[n:]] > SITE_TOLERANCE_M).sum())
            if more:
                problems.append(f"{src.name}: {more} more site(s) spread likewise; fix: as above")
            break
        mine = np.flatnonzero(codes == k)
        xy = xy_m[mine]
        if len(mine) <= _PAIRWISE_CELLS:
            span = float(np.sqrt(((xy[:, None, :] - xy[None, :, :]) ** 2).sum(-1)).max())
        else:
            span = float(np.hypot(*np.ptp(xy, axis=0)))
        if span <= SITE_TOLERANCE_M:
            continue
        ids = None if src.id_col is None else frame[src.id_col].to_numpy(object)[mine]
        problems.append(
            f"{src.name}: site_id {sites[k]!r}, {describe_rows(frame.index.to_numpy()[mine], ids)}: "
            f"the cells of this site are {span / 1e3:,.2f} km apart, more than the "
            f"{SITE_TOLERANCE_M:g} m the sectors of one mast may be (a site's cells share its "
            "shadowing); fix: give the cells of different masts different site ids, or correct "
            "their positions (or drop the site column: cells at the same position are then one "
            "site)")
    if problems:
        raise ValidationError(problems)


def _warn_colocated_sites(site_ids: np.ndarray, xy_m: np.ndarray, frame: pd.DataFrame,
                          src: Source) -> None:
    """Warn about cells at one position (within 1 m) with different site ids: one mast
    given several ids, whose cells then get independent shadowing."""
    spot = pd.DataFrame({"x": np.round(xy_m[:, 0]), "y": np.round(xy_m[:, 1]),
                         "site": pd.Series(site_ids, dtype=object).astype(str)})
    n_sites = spot.groupby(["x", "y"])["site"].transform("nunique").to_numpy()
    shared = n_sites > 1
    if not shared.any():
        return
    ids = None if src.id_col is None else frame[src.id_col].to_numpy(object)[shared]
    rows = describe_rows(frame.index.to_numpy()[shared], ids, total=int(shared.sum()))
    names = pd.unique(spot["site"].to_numpy(object)[shared])[:ROWS_LISTED].tolist()
    warnings.warn(f"{src.name}: {rows}: cells at one position have different site ids "
                  f"({names}), so they are read as different masts with independent "
                  "shadowing; fix: give the cells of one mast one site id (or move the "
                  "positions of different masts apart)", UserWarning, stacklevel=3)


# A row is read as swapped when, with its two coordinates swapped, it lies within this
# radius of the other rows' centre (the median lon / lat) and as given beyond it: at least
# _SWAP_RADIUS_KM, and _SWAP_SPREAD times the median distance of the rows from the centre.
_SWAP_RADIUS_KM = 50.0
_SWAP_SPREAD = 5.0


def _great_circle_km(lon: np.ndarray, lat: np.ndarray, lon0: float, lat0: float) -> np.ndarray:
    lon, lat, lon0, lat0 = map(np.radians, (lon, lat, lon0, lat0))
    h = (np.sin((lat - lat0) / 2) ** 2
         + np.cos(lat) * np.cos(lat0) * np.sin((lon - lon0) / 2) ** 2)
    return 2 * 6371.0088 * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))


def _check_row_swaps(lon: np.ndarray, lat: np.ndarray, frame: pd.DataFrame, src: Source) -> None:
    """Refuse rows whose longitude and latitude look swapped: far from the other rows as
    given, among them with the two swapped (a file swapped whole is the land check's)."""
    if not src.geographic or len(lon) < 3:
        return
    lon0, lat0 = float(np.median(lon)), float(np.median(lat))
    given = _great_circle_km(lon, lat, lon0, lat0)
    radius = max(_SWAP_RADIUS_KM, _SWAP_SPREAD * float(np.median(given)))
    swappable = np.abs(lon) <= 90
    swapped = np.full(len(lon), np.inf)
    swapped[swappable] = _great_circle_km(lat[swappable], lon[swappable], lon0, lat0)
    bad = (given > radius) & (swapped <= radius)
    if not bad.any() or bad.sum() * 2 >= len(lon):
        return
    xname, yname = src.labels()
    report = _Report(frame, src.name, src.id_col)
    report(bad, f"'{xname}' and '{yname}' look swapped in these rows: as given they lie up to "
           f"{given[bad].max():,.0f} km from the other cells (median position {lat0:.4f}° lat, "
           f"{lon0:.4f}° lon), swapped within {swapped[bad].max():,.1f} km of them",
           f"swap the values of '{xname}' and '{yname}' in these rows (longitude is east-west, "
           "x; latitude north-south, y)")
    raise ValidationError(report.problems)


# Hints added to Network.validate's fix, by cellopt column, for values read from a file.
_RULE_HINTS = {"azimuth_deg": " (a bearing of −120° or 480° is 240° or 120°: take the values "
                              "modulo 360; radians go × 180/π)",
               "tier": " (in lower case)", "owner": " (in lower case)"}


def _check_cell_values(cells: pd.DataFrame, frame: pd.DataFrame, src: Source,
                       defaults: Any) -> None:
    """Refuse, as :meth:`cellopt.Network.validate` would, the cells whose values are not
    possible, naming the file, the column the values come from (or the read_cells
    argument) and the rows by their row in the file."""
    if len(frame) != len(cells):  # OpenCelliD: rows merged; validate names the cells
        return
    columns = {} if src.plan is None else {u.target: u.column for u in src.plan.uses
                                           if u.used and u.column is not None and u.target}
    # rows by their row in the file, ids as the network has them (0..n-1 without a column)
    named = pd.DataFrame({"cell_id": cells["cell_id"].to_numpy(object)}, index=frame.index)
    report = _Report(named, src.name, "cell_id")
    problems = []
    for col, rule, what, fix in CELL_RULES:
        if col not in cells.columns:
            continue
        bad = np.asarray(rule(cells[col]), bool)
        if not bad.any():
            continue
        given = columns.get(col)
        if given is None and col in defaults.as_columns():
            value = getattr(defaults, col)
            problems.append(f"{src.name}: read_cells(..., {col}={value!r}), the value of every "
                            f"cell (the file has no column of it): {what}; fix: {fix}")
            continue
        report(bad, f"{what} (column '{given or col}')", fix + _RULE_HINTS.get(col, ""))
    problems += report.problems
    if problems:
        raise ValidationError(problems)


# Angle columns, the largest magnitude their values in radians would have, and what the
# angle is: a column whose values all lie within it, not all whole numbers, looks like radians.
_RADIANS = {"azimuth_deg": (2 * np.pi, "azimuth"), "tilt_deg": (np.pi / 4, "mechanical tilt"),
            "electrical_tilt_deg": (np.pi / 4, "electrical tilt"),
            "vertical_beamwidth_deg": (np.pi / 4, "vertical beamwidth")}


def _warn_angles(cells: pd.DataFrame, frame: pd.DataFrame, src: Source) -> None:
    """Warn about angle columns of a file whose values look like radians, and tilt columns
    whose values are all negative (an uptilt sign convention: cellopt's downtilt is
    positive below the horizon)."""
    if src.plan is None:
        return
    columns = {u.target: u.column for u in src.plan.uses if u.column is not None and u.target}
    for col, (largest, what) in _RADIANS.items():
        if col not in cells.columns or col not in columns:
            continue
        values = pd.to_numeric(cells[col], errors="coerce").to_numpy(float)
        given = values[np.isfinite(values)]
        if not len(given) or not np.any(given != 0):
            continue
        fix = f"fix: give '{columns[col]}' in degrees"
        if np.all(np.abs(given) <= largest) and np.any(given % 1 != 0):
            warnings.warn(f"{src.name}: column '{columns[col]}' (read as {col}, degrees) holds "
                          f"only values within ±{largest:.3g} ({what} in radians would; "
                          f"e.g. {given[given != 0][0]:g}), which read as degrees are "
                          f"unusual; {fix} (radians × 180/π)", UserWarning, stacklevel=3)
        elif col in ("tilt_deg", "electrical_tilt_deg") and np.all(given <= 0):
            warnings.warn(f"{src.name}: column '{columns[col]}' (read as {col}) has only "
                          f"negative or zero tilts (e.g. {given.min():g}°): cellopt's tilt is a "
                          "downtilt, positive below the horizon, so these point the antennas "
                          f"above it; {fix}, positive downwards (negate them if the export "
                          "counts a downtilt as negative)", UserWarning, stacklevel=3)
    for col, standard in (("earfcn", "TS 36.101 Table 5.7.3-1"),
                          ("nr_arfcn", "TS 38.104 Table 5.4.2.1-1")):
        if col in cells.columns and "frequency_mhz" in cells.columns and len(frame) == len(
                cells):
            number = pd.to_numeric(cells[col], errors="coerce").to_numpy(float)
            lost = np.isfinite(number) & np.isnan(
                pd.to_numeric(cells["frequency_mhz"], errors="coerce").to_numpy(float))
            if lost.any():
                ids = None if src.id_col is None else frame[src.id_col].to_numpy(object)[lost]
                rows = describe_rows(frame.index.to_numpy()[lost], ids, total=int(lost.sum()))
                warnings.warn(f"{src.name}: {rows}: column '{columns.get(col, col)}' holds "
                              f"numbers that are no downlink channel of {standard} (uplink "
                              "channels, or numbers outside the table), so their "
                              "frequency_mhz is NaN; fix: give the downlink channel numbers",
                              UserWarning, stacklevel=3)
