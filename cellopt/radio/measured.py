"""Link tables from measurements: drive tests and MDT / trace exports of RSRP per position.

:func:`link_table_from_frame` turns a long table — one row per (user position, measured
cell) with the RSRP [dBm] or the path loss [dB] — into the network's users and their link
table, with the SINR and peak rate of every link computed from the measurements as
:func:`cellopt.radio.link_table` computes them from the propagation model. The table's
format, what unmeasured cells count as and the errors are in docs/measured_links.md.

Positions come as a GeoDataFrame's Point geometries (any CRS: projected to the
network's) or as ``x_m``, ``y_m`` columns in the network's CRS. A file, or a frame with
longitude / latitude columns under the names planners write, is read by
:func:`cellopt.topology.read_measurements`, which finds the columns by their names (the
cell-file reader's matching), checks for swapped longitude / latitude and projects.
"""

from __future__ import annotations

import warnings

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from scipy.spatial import cKDTree

from cellopt.checks import check_count, check_number, check_real
from cellopt.errors import ROWS_LISTED, ValidationError, check_memory, describe_rows
from cellopt.linktable import LinkTable
from cellopt.network import Network, users_frame
from cellopt.radio.links import LINK_BYTES, resource_power_dbm
from cellopt.radio.model import RadioModel, thermal_noise_dbm
from cellopt.radio.raster_io import RSRP_RANGE_DBM

__all__ = ["MAX_DISTANCE_M", "MEASURED_COLUMNS", "link_table_from_frame"]

#: The columns of a measurement table, and what each holds. Exactly one of ``rsrp_dbm``
#: and ``path_loss_db``; the positions as geometry or as ``x_m``, ``y_m``.
MEASURED_COLUMNS: dict[str, str] = {
    "geometry": "Point position of the measurement (a GeoDataFrame with a CRS), or:",
    "x_m, y_m": "position [m] in the network's CRS",
    "cell_id": "the measured cell, as the network's cells table names it",
    "rsrp_dbm": "RSRP of the cell at the position [dBm per resource element]",
    "path_loss_db": "coupling loss from the cell's antenna connector to the receiver [dB] "
                    "(antenna gains and every loss included; a UE's pathloss = "
                    "referenceSignalPower − RSRP)",
    "user_id": "optional: the user the row belongs to (default: one user per position)",
    "weight": "optional: the user's utility weight w_i > 0 (default 1)",
    "demand_mbps": "optional: the user's demand [Mbit/s]; inf = full buffer (default)",
}
#: Positions farther than this from every cell, and outside the network's region, are
#: refused [m] (a wrong CRS or swapped coordinates).
MAX_DISTANCE_M = 50_000.0
#: Two rows of one user_id whose positions differ by more than this are refused [m].
_SAME_POSITION_M = 1e-6


def link_table_from_frame(
    network: Network,
    frame: pd.DataFrame,
    *,
    model: RadioModel | None = None,
    n_candidates: int | None = None,
    window_db: float | None = None,
    weight: float | None = None,
    demand_mbps: float | None = None,
    max_distance_m: float | None = MAX_DISTANCE_M,
    name: str | None = None,
) -> tuple[Network, LinkTable]:
    """The users and link table of a table of measurements (drive test, MDT, traces).

    Users are made from the rows: one per distinct ``user_id`` if the table has that
    column, else one per distinct position, in order of first appearance. Each row whose
    cell is in `network` is a link of its user. Its coupling gain is
    ``g = RSRP − (P_c − o)`` [dB], with ``P_c`` the cell's ``tx_power_dbm`` and
    ``o = model.rsrp_offset_db(bandwidth)`` (so ``P_c − o`` is its power per resource
    element); a path-loss row has ``g = −L`` and ``RSRP = P_c − o − L``. On resource k
    the SINR is ``g_c p_ck / (N_k + Σ_{c' ≠ c} g_c' p_c'k)``, the sum over the cells
    measured at the same user (``p_ck`` the cell's power on the resource,
    :func:`~cellopt.radio.links.resource_power_dbm`; ``N_k`` thermal noise with the
    model's noise figure), and the peak rate is ``W_k η(SINR)`` with the model's
    spectral efficiency: the formulas of :func:`~cellopt.radio.link_table`, with the
    measured gains in place of the modelled ones.

    **Unmeasured cells** (not in the table at a user) contribute no interference there:
    each SINR is an upper bound on the SINR with every cell counted, too high by the
    unmeasured cells' power at the user. A receiver measures its strongest neighbours,
    so the bias is small where they dominate, and grows where many weak cells add up
    (a dense layout measured by a receiver that reports few neighbours).

    **Several resources.** The measured RSRP is wideband (per resource element of the
    cell's maximum power spread evenly over the band), so a link's gain is the same on
    every resource; the resources differ in their power share and noise, as in
    :func:`~cellopt.radio.link_table`.

    Parameters
    ----------
    network : Network
        The cells (ids, ``tx_power_dbm``) and the band. Its users, if any, are replaced.
    frame : pandas.DataFrame or geopandas.GeoDataFrame, L rows
        One row per (position, cell): the columns of :data:`MEASURED_COLUMNS`. Files
        and frames with longitude / latitude columns: read them with
        :func:`cellopt.topology.read_measurements` first.
    model : RadioModel, optional
        Its noise figure, spectral efficiency and RSRP offset (``rat``,
        ``subcarrier_spacing_khz``); default :class:`RadioModel` (). The propagation
        parameters are not used: the gains are measured.
    n_candidates : int, optional
        Keep each user's `n_candidates` strongest cells as links (default: every
        measured cell). Every measured cell interferes, kept or not.
    window_db : float, optional
        Keep only links within this many dB of the user's strongest RSRP.
    weight, demand_mbps : float, optional
        Every user's weight and demand [Mbit/s] where the table has no such column
        (default 1 and inf). Refused when the table has the column too.
    max_distance_m : float or None
        Refuse positions farther than this from every cell and outside the network's
        region [m] (default :data:`MAX_DISTANCE_M`); None: no check.
    name : str, optional
        How messages name the table (default ``frame.attrs["source"]``, which
        :func:`~cellopt.topology.read_measurements` sets to the file's name, else
        ``"frame"``). Rows are numbered from 0 in the table's order.

    Returns
    -------
    network : Network
        `network` with the measured users: ``user_id`` (the table's, or 0..U-1 by
        position), their positions in the network's CRS, ``weight``, ``demand_mbps``,
        ``indoor`` False (walls are in the measurements).
    links : LinkTable
        Rows sorted by user, then by RSRP (strongest first; equal RSRPs by cell row),
        then by resource; ``rsrp_dbm`` as measured (or from the path loss). It records
        no radio model or shadowing seed (:meth:`LinkTable.radio_settings` refuses it):
        what recomputes gains from the model (load coupling, power patterns, coverage
        maps) does not apply to measured links. ``Drop.from_network(network, links)``
        makes the drop: ``cellopt.Drop.from_network(*link_table_from_frame(net, frame))``.

    Raises
    ------
    ValidationError
        Naming the table, the column, the rows (by position, with their cell ids) and the
        fix: missing columns (or both ``rsrp_dbm`` and ``path_loss_db``); an empty table;
        positions that are missing, not Points, NaN or infinite, or farther than
        `max_distance_m` from every cell outside the network's region; missing cell ids;
        RSRP or path loss missing, not a number, infinite; RSRP above 0 (a path loss or a
        gain in the wrong column) or outside
        :data:`~cellopt.radio.raster_io.RSRP_RANGE_DBM`; a negative path loss (an RSRP in
        the wrong column); weights not finite and > 0, demands not > 0; one
        user_id at several positions, or with several weights or demands; the same
        (user, cell) twice; no row with a cell of the network.

    ResourceLimitError
        A table whose links would need more memory than cellopt may use
        (:func:`cellopt.errors.check_memory`), before any allocation.

    Warns
    -----
    UserWarning
        Once, counting the rows whose cell is not in `network` and naming a few of their
        ids: they are left out (their power counts neither as signal nor as
        interference). Once, counting the users without a link of positive rate (none
        with a known cell, or every SINR below the spectral efficiency's threshold):
        they are outage users, at rate 0 in every table.
    """
    if not isinstance(network, Network):
        raise ValidationError(f"network is a {type(network).__name__}; fix: give a cellopt Network")
    network.validate()
    if network.n_cells == 0:
        raise ValidationError("the network has no cells; fix: add the measured cells (e.g. "
                              "cellopt.topology.read_cells of the planner's cell file)")
    if model is None:
        model = RadioModel()
    elif not isinstance(model, RadioModel):
        raise ValidationError(f"model is a {type(model).__name__}; fix: give a RadioModel")
    if n_candidates is not None:
        n_candidates = check_count(n_candidates, "n_candidates", fix="give a whole number ≥ 1, "
                                   "or None for every measured cell", minimum=1)
    if window_db is not None:
        window_db = check_real(window_db, "window_db")
    if max_distance_m is not None:
        max_distance_m = check_number(max_distance_m, "max_distance_m", low=0.0, low_open=True,
                                      unit="m", fix="give a distance > 0 in metres, or None for "
                                      "no check")
    if not isinstance(frame, pd.DataFrame):
        raise ValidationError(f"frame is a {type(frame).__name__}; fix: give a pandas DataFrame "
                              "or GeoDataFrame (cellopt.topology.read_measurements reads files)")
    name = str(name if name is not None else frame.attrs.get("source", "frame"))
    value_col = _value_column(frame, name)
    for col, given in (("weight", weight), ("demand_mbps", demand_mbps)):
        if given is not None and col in frame.columns:
            raise ValidationError(f"{name}: {col} is given both as a column and as an argument "
                                  f"({col}={given!r}); fix: drop one of them")
    if weight is not None:
        weight = check_real(weight, "weight", warn=False)
    if demand_mbps is not None:
        demand_mbps = check_real(demand_mbps, "demand_mbps", warn=False)
    if not len(frame):
        raise ValidationError(f"{name}: the table has no rows; fix: give at least one "
                              "measurement (one row per position and cell)")
    check_memory(float(len(frame)) * network.n_resources * LINK_BYTES,
                 f"{name}: a measured link table of {len(frame):,} rows × {network.n_resources} "
                 "resource(s)", "split the table by area, or use fewer resources")
    frame = frame.reset_index(drop=True)
    report = _Report(name, frame)

    xy = _positions(frame, network, report)
    values = report.numbers(value_col)
    cell_ids = frame["cell_id"].to_numpy(object)
    report(pd.isna(frame["cell_id"]).to_numpy(), "cell_id is missing",
           "give every row the id of its cell, or drop the row")
    _check_values(values, value_col, report)
    per_user = {}
    for col, allow_inf, fix in (
            ("weight", False, "give finite weights > 0 (1 for all equal)"),
            ("demand_mbps", True, "give demands > 0 in Mbit/s, inf for full buffer")):
        if col in frame.columns:
            v = report.numbers(col)
            with np.errstate(invalid="ignore"):
                bad = ~np.isnan(v) & ~((v > 0) & (np.isfinite(v) | (allow_inf & (v == np.inf))))
            report(bad, f"{col} is {'not finite and > 0' if not allow_inf else 'not > 0'}", fix)
            per_user[col] = v
    report.raise_problems()

    cell = _cell_rows(network, cell_ids)
    known = cell >= 0
    if not known.any():
        shown = list(dict.fromkeys(cell_ids.tolist()))[:5]
        theirs = network.cells["cell_id"].to_numpy(object)[:5].tolist()
        raise ValidationError(f"{name}: no row's cell_id is a cell of the network (the table has "
                              f"ids such as {shown}, the network {theirs}); fix: give the ids of "
                              "the network's cells table (the cell file's cell_id), or the cell "
                              "file of these cells")

    user, user_ids, user_xy, first = _users(frame, xy, report)
    n_users = len(user_ids)
    user_values = {col: report.per_user(v, user, first, col) for col, v in per_user.items()}
    pair = user[known] * network.n_cells + cell[known]
    dup = np.zeros(len(frame), bool)
    dup[known] = pd.Series(pair).duplicated(keep=False).to_numpy()
    key = "user_id" if "user_id" in frame.columns else "position"
    apart = "" if key == "user_id" else ", or give a user_id column to tell users at one " \
        "position apart"
    report(dup, f"the same {key} and cell_id appear in more than one row",
           "keep one row per (user, cell): aggregate repeated measurements first (e.g. the mean "
           f"RSRP in mW){apart}")
    report.raise_problems()
    if max_distance_m is not None:
        _check_distance(network, user_xy, first, max_distance_m, report)
    if not known.all():
        _warn_unknown(name, cell_ids, known)

    table = _links(network, model, user[known], cell[known], values[known],
                   value_col == "rsrp_dbm", n_users, n_candidates, window_db)
    users = users_frame(user_xy[:, 0], user_xy[:, 1], crs=network.crs, user_id=user_ids,
                        weight=user_values.get("weight", 1.0 if weight is None else weight),
                        demand_mbps=user_values.get("demand_mbps",
                                                    np.inf if demand_mbps is None else demand_mbps))
    out = network.replace(users=users).validate()
    table.validate(out.users["user_id"].to_numpy(), out.cells["cell_id"].to_numpy())
    table.network_fingerprint = out.fingerprint
    outage = np.flatnonzero(~table.users_with_rate())
    if len(outage):
        warnings.warn(f"{name}: {len(outage)} of {n_users} users have no link of positive rate "
                      f"({describe_rows(first[outage], user_ids[outage])}): no measured cell of "
                      "the network, or every SINR below the spectral efficiency's threshold; "
                      "they are in outage, at rate 0 in every table", UserWarning, stacklevel=2)
    return out, table


class _Report:
    """The problems found in a measurement table, one line per check, naming its rows."""

    def __init__(self, name: str, frame: pd.DataFrame):
        self.name = name
        self.frame = frame
        self.ids = frame["cell_id"].to_numpy(object) if "cell_id" in frame.columns else None
        self.problems: list[str] = []

    def __call__(self, bad: np.ndarray, what: str, fix: str) -> None:
        rows = np.flatnonzero(bad)
        if len(rows):
            ids = None if self.ids is None else self.ids[rows]
            self.problems.append(f"{self.name}: {_rows(rows, ids, 'cell ids')}: {what}; fix: {fix}")

    def numbers(self, col: str) -> np.ndarray:
        """A column as floats, reporting missing entries and entries that are not numbers."""
        raw = self.frame[col]
        missing = raw.isna().to_numpy()
        if pd.api.types.is_bool_dtype(raw):
            num = np.full(len(raw), np.nan)
        else:
            num = pd.to_numeric(raw, errors="coerce").to_numpy(float)
        self(missing, f"{col} is missing", f"fill in '{col}' or drop the row")
        self(np.isnan(num) & ~missing, f"{col} is not a number", f"give numbers in '{col}'")
        return num

    def per_user(self, values: np.ndarray, user: np.ndarray, first: np.ndarray, col: str
                 ) -> np.ndarray:
        """One value per user; users whose rows disagree are reported."""
        groups = pd.Series(values).groupby(user, sort=True)
        low, high = groups.min().to_numpy(), groups.max().to_numpy()
        bad = np.flatnonzero(low != high)
        if len(bad):
            self.problems.append(f"{self.name}: users at {_rows(first[bad], None)}: rows of one "
                                 f"user have different {col}; fix: give each user one {col}")
        return low

    def raise_problems(self) -> None:
        if self.problems:
            raise ValidationError(self.problems)


def _rows(rows: np.ndarray, ids: np.ndarray | None, what: str = "ids") -> str:
    """``rows [3, 17] (cell ids ['a', 'b'])``, shortened past :data:`ROWS_LISTED`."""
    text = describe_rows(rows, ids)
    return text.replace(" (ids ", f" ({what} ", 1) if ids is not None else text


def _value_column(frame: pd.DataFrame, name: str) -> str:
    """``"rsrp_dbm"`` or ``"path_loss_db"``, after checking the required columns."""
    have = [str(c) for c in frame.columns]
    problems = []
    if "cell_id" not in frame.columns:
        problems.append("no column 'cell_id' (the measured cell)")
    given = [c for c in ("rsrp_dbm", "path_loss_db") if c in frame.columns]
    if not given:
        problems.append("no column 'rsrp_dbm' (RSRP [dBm]) or 'path_loss_db' (path loss [dB])")
    elif len(given) == 2:
        raise ValidationError(f"{name}: has both 'rsrp_dbm' and 'path_loss_db', so which to use is "
                              "ambiguous; fix: drop one of them")
    if problems:
        raise ValidationError(f"{name}: {' and '.join(problems)}; columns found: {have}; fix: name "
                              "the columns as docs/measured_links.md says, or read the file with "
                              "cellopt.topology.read_measurements, which knows the names planners "
                              "write (RSRP, 'RSRP (dBm)', 'Cell ID', 'PathLoss_dB', ...)")
    return given[0]


def _positions(frame: pd.DataFrame, network: Network, report: _Report) -> np.ndarray:
    """Positions [m] in the network's CRS, shape (L, 2); missing or bad ones reported."""
    name = report.name
    geometry = None
    if isinstance(frame, gpd.GeoDataFrame):
        try:
            geometry = frame.geometry
        except AttributeError:  # a GeoDataFrame without an active geometry column
            geometry = None
    if geometry is not None:
        if geometry.crs is None:
            raise ValidationError(f"{name}: the geometry has no CRS; fix: set it, e.g. "
                                  "frame.set_crs('EPSG:4326') for lon/lat")
        geom = geometry.to_crs(network.crs).to_numpy()
        missing = np.asarray(shapely.is_missing(geom), bool)
        point = ~missing & (np.asarray(shapely.get_type_id(geom)) == 0)
        empty = point & np.asarray(shapely.is_empty(geom), bool)
        report(missing, "the geometry is missing", "give one Point per row")
        report(~missing & ~point, "the geometry is not a Point", "give one Point per row")
        report(empty, "the geometry is an empty Point", "give a position or drop the row")
        ok = point & ~empty
        xy = np.full((len(frame), 2), np.nan)
        xy[ok, 0], xy[ok, 1] = shapely.get_x(geom[ok]), shapely.get_y(geom[ok])
        report(ok & ~np.isfinite(xy).all(axis=1), "the position is NaN or infinite (in the "
               "network's CRS)", "give a finite position or drop the row")
    elif "x_m" in frame.columns and "y_m" in frame.columns:
        xy = np.column_stack([report.numbers("x_m"), report.numbers("y_m")])
        report(np.isinf(xy).any(axis=1), "x_m or y_m is infinite", "give finite coordinates")
    else:
        raise ValidationError(f"{name}: no positions: not a GeoDataFrame, and no columns 'x_m', "
                              f"'y_m' (metres in the network's CRS); columns found: "
                              f"{[str(c) for c in frame.columns]}; fix: read the file or frame "
                              "with cellopt.topology.read_measurements(..., crs=network.crs), "
                              "which finds lon/lat or x/y columns by their names, checks for "
                              "swapped lon/lat and projects, or give a GeoDataFrame")
    return xy


def _check_values(values: np.ndarray, col: str, report: _Report) -> None:
    """Refuse RSRPs and path losses that cannot be what their column says."""
    with np.errstate(invalid="ignore"):
        report(np.isinf(values), f"{col} is infinite", f"give finite values in '{col}'")
        finite = np.isfinite(values)
        if col == "rsrp_dbm":
            low, high = RSRP_RANGE_DBM
            positive = finite & (values > 0)
            report(positive, "rsrp_dbm is positive: an RSRP is a power of well under 1 mW, so "
                   "this looks like a path loss [dB] or a gain", "give RSRP in dBm (negative, "
                   f"about {low:g} to {high:g}), or name the column path_loss_db if it holds "
                   "path losses")
            report(finite & ~positive & ((values < low) | (values > high)),
                   f"rsrp_dbm is outside [{low:g}, {high:g}] dBm, beyond what a receiver "
                   "reports", "give RSRP in dBm per resource element (not RSSI, RSRQ or a total "
                   "power), or drop these rows")
        else:
            report(finite & (values < 0), "path_loss_db is negative: a path loss is a positive "
                   "number of dB, so this looks like an RSRP [dBm] or a gain",
                   "give losses in dB (positive), or name the column rsrp_dbm if it holds RSRPs")


def _cell_rows(network: Network, cell_ids: np.ndarray) -> np.ndarray:
    """The network row of each row's cell, −1 for ids the network does not have.

    Ids match as they are, or else as text (``7`` and ``"7"``), so that a table whose
    ids were read as numbers matches a cells table whose ids are text, and back.
    """
    ids = pd.Index(network.cells["cell_id"].to_numpy(object))
    given = pd.Index(cell_ids)
    rows = ids.get_indexer(given)
    missing = (rows < 0) & ~pd.isna(cell_ids)
    if missing.any():
        text = pd.Index(ids.astype(str).str.strip())
        if text.is_unique:
            rows[missing] = text.get_indexer(pd.Index(given[missing].astype(str).str.strip()))
    return rows.astype(np.int64)


def _users(frame: pd.DataFrame, xy: np.ndarray, report: _Report
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each row's user, the users' ids, positions and first rows.

    Returns
    -------
    user : ndarray of int64, shape (L,)
    user_ids : ndarray, shape (U,)
        The ``user_id`` values, or 0..U-1.
    user_xy : ndarray, shape (U, 2)
    first : ndarray of int64, shape (U,)
        Each user's first row.
    """
    if "user_id" in frame.columns:
        user, uniques = pd.factorize(frame["user_id"], use_na_sentinel=True)
        report(user < 0, "user_id is missing", "give every row a user_id, or drop the column "
               "(one user per position)")
        report.raise_problems()
        user_ids = np.asarray(uniques)
    else:
        user = pd.DataFrame({"x": xy[:, 0], "y": xy[:, 1]}).groupby(
            ["x", "y"], sort=False).ngroup().to_numpy()
        user_ids = None
    user = user.astype(np.int64)
    _, first = np.unique(user, return_index=True)  # codes number users by first appearance
    if user_ids is None:
        user_ids = np.arange(len(first))
    user_xy = xy[first]
    apart = np.hypot(*(xy - user_xy[user]).T)
    far = np.flatnonzero(np.bincount(user, weights=apart > _SAME_POSITION_M,
                                     minlength=len(first)) > 0)
    if len(far):
        worst = pd.Series(apart).groupby(user).max().to_numpy()[far]
        report.problems.append(
            f"{report.name}: users at {_rows(first[far], user_ids[far], 'user ids')}: rows of one "
            f"user_id are at different positions (up to {worst.max():.3g} m apart); fix: give "
            "each user one position (e.g. the mean of its rows), or drop the user_id column "
            "to make one user per position")
    return user, user_ids, user_xy, first.astype(np.int64)


def _check_distance(network: Network, user_xy: np.ndarray, first: np.ndarray,
                    max_distance_m: float, report: _Report) -> None:
    """Refuse users farther than `max_distance_m` from every cell, outside the region."""
    cells = network.cells.geometry
    tree = cKDTree(np.column_stack([cells.x.to_numpy(float), cells.y.to_numpy(float)]))
    dist, _ = tree.query(user_xy, k=1)
    far = dist > max_distance_m
    if network.region is not None:
        far &= ~shapely.intersects_xy(network.region, user_xy[:, 0], user_xy[:, 1])
    bad = np.flatnonzero(far)
    if len(bad):
        outside = " and outside the network's region" if network.region is not None else ""
        report.problems.append(
            f"{report.name}: users at {_rows(first[bad], report.ids[first[bad]], 'cell ids')}: the "
            f"position is more than {max_distance_m / 1e3:g} km from every cell{outside} (up to "
            f"{dist[bad].max() / 1e3:.4g} km); fix: check the position columns and their CRS "
            "(longitude is x, latitude y, in degrees; x/y in metres of the network's CRS or of "
            "source_crs), or that the network holds the measured cells; max_distance_m=None "
            "turns the check off")
        report.raise_problems()


def _warn_unknown(name: str, cell_ids: np.ndarray, known: np.ndarray) -> None:
    """Warn, once, about the rows whose cell the network does not have."""
    unknown = pd.unique(pd.Series(cell_ids[~known]))
    shown = [v.item() if hasattr(v, "item") else v for v in unknown[:ROWS_LISTED]]
    more = f" and {len(unknown) - ROWS_LISTED} more" if len(unknown) > ROWS_LISTED else ""
    warnings.warn(f"{name}: {int((~known).sum())} of {len(known)} rows measure {len(unknown)} "
                  f"cells the network does not have (cell ids {shown}{more}): they are left out, "
                  "so their power counts neither as signal nor as interference (the SINRs are "
                  "higher by as much); fix: add these cells to the network (the cell file), or "
                  "drop their rows to silence this", UserWarning, stacklevel=3)


def _links(network: Network, model: RadioModel, user: np.ndarray, cell: np.ndarray,
           values: np.ndarray, is_rsrp: bool, n_users: int, n_candidates: int | None,
           window_db: float | None) -> LinkTable:
    """The link table of measured (user, cell) pairs, shape (M,) each, no pair twice.

    Returns
    -------
    LinkTable
        Every pair, or each user's `n_candidates` strongest within `window_db` of its
        best, on every resource; interference from every measured pair of the user.
    """
    k = network.n_resources
    re_power_dbm = (network.cells["tx_power_dbm"].to_numpy(float)
                    - model.rsrp_offset_db(network.bandwidth_mhz))  # (C,)
    per_re_dbm = re_power_dbm[cell]  # (M,)
    if is_rsrp:
        rsrp, gain_db = values, values - per_re_dbm
    else:
        rsrp, gain_db = per_re_dbm - values, -values
    power_mw = 10.0 ** (resource_power_dbm(network) / 10.0)  # (C, K)
    signal = 10.0 ** (gain_db / 10.0)[:, None] * power_mw[cell]  # (M, K)
    slot = (user[:, None] * k + np.arange(k)).ravel()
    total = np.bincount(slot, weights=signal.ravel(), minlength=n_users * k).reshape(n_users, k)
    interference = np.maximum(total[user] - signal, 0.0)
    noise_mw = 10.0 ** (thermal_noise_dbm(network.resource_mhz, model.noise_figure_db) / 10.0)
    with np.errstate(divide="ignore"):
        sinr = 10.0 * np.log10(signal / (noise_mw + interference))  # (M, K)

    order = np.lexsort((cell, -rsrp, user))  # by user, strongest first, then by cell row
    user, cell, rsrp, sinr = user[order], cell[order], rsrp[order], sinr[order]
    m = len(user)
    start = np.ones(m, bool)
    start[1:] = user[1:] != user[:-1]
    head = np.maximum.accumulate(np.where(start, np.arange(m), 0))  # first row of each user
    keep = np.ones(m, bool)
    if n_candidates is not None:
        keep &= np.arange(m) - head < n_candidates
    if window_db is not None:
        keep &= rsrp >= rsrp[head] - window_db
    n_keep = int(keep.sum())
    resource = np.tile(np.arange(k, dtype=np.int64), n_keep)
    sinr = sinr[keep].ravel()
    bps_hz = np.asarray(model.efficiency()(10.0 ** (sinr / 10.0)), float)
    if bps_hz.shape != sinr.shape:
        raise ValidationError(f"the spectral efficiency returned shape {bps_hz.shape} for SINRs of "
                              f"shape {sinr.shape}; fix: return one value per SINR")
    return LinkTable(
        user=np.repeat(user[keep], k).astype(np.int64), cell=np.repeat(cell[keep], k).astype(np.int64),
        resource=resource, rsrp_dbm=np.repeat(rsrp[keep], k), sinr_db=sinr,
        rate_mbps=network.resource_mhz[resource] * bps_hz, n_users=n_users,
        n_cells=network.n_cells, resource_mhz=network.resource_mhz.copy(),
        re_power_dbm=re_power_dbm)
