"""The network data model: cells and users as GeoDataFrames in a metric CRS, plus the band.

Tables live here, at the edge of the library; :meth:`Network.cell_arrays` and
:meth:`Network.user_arrays` are the one conversion to the flat arrays that the radio
model and the solvers work on. :meth:`Network.validate` checks the tables with
:mod:`cellopt.network_checks` and the rules of each column (:data:`CELL_RULES`).
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import shapely

from cellopt.checks import as_float_array, check_names, is_real
from cellopt.crs import metric_crs
from cellopt.errors import ValidationError
from cellopt.network_checks import (
    _check_band,
    _check_crs,
    _check_table,
    _finite,
    _not_bool,
    _num,
    _outside,
    _to_float,
)
from cellopt.parameters import CHOICES, LIMITS, Quantity, register_choice

__all__ = ["ANTENNA_COLUMNS", "CELL_BYTES", "CELL_COLUMNS", "CELL_RULES", "OWNERS", "TIERS", "USER_COLUMNS",
           "Fingerprint", "Network", "cells_frame", "check_same_network", "users_frame"]

TIERS = ("macro", "pico", "femto")
OWNERS = ("operator", "third_party")
register_choice("tier", TIERS)
register_choice("owner", OWNERS)

#: The colour of each tier in every map and report (Okabe–Ito palette, readable with
#: colour-vision deficiencies): its cells, and the users it serves.
TIER_COLORS = {"macro": "#0072b2", "pico": "#009e73", "femto": "#d55e00"}
#: The colour of users without a serving cell (outage).
UNSERVED_COLOR = "#9a9a9a"


def _column(name: str, description: str, *, like: str | None = None, unit: str = "",
            kind: str = "float", default: float | None = None) -> Quantity:
    """An input column: the catalogue's quantity of its name (or of `like`: its unit, range
    and fix) with the column's description and default; else a quantity of its own."""
    catalogued = CHOICES.get(name) or LIMITS.get(like or name)
    if catalogued is None:
        return Quantity(name, unit, description, kind=kind, default=default)
    return dataclasses.replace(catalogued, name=name, description=description, default=default)


#: Required cell columns, their meaning and unit (besides ``geometry``, a Point in metres).
CELL_COLUMNS: dict[str, Quantity] = {q.name: q for q in (
    _column("cell_id", "unique id of the cell (sector or omni site)", kind="id"),
    _column("site_id", "id of the site (mast); sectors of one site share it", kind="id"),
    _column("tier", "one of 'macro', 'pico', 'femto'"),
    _column("owner", "'operator' or 'third_party'"),
    _column("height_m", "antenna height above ground"),
    _column("azimuth_deg", "boresight, degrees clockwise from north; NaN = omnidirectional",
            unit="deg"),
    _column("antenna_gain_dbi", "boresight antenna gain"),
    _column("tx_power_dbm", "maximum transmit power over the whole band"),
    _column("backhaul_mbps", "backhaul capacity; inf = unlimited"),
    _column("price_per_mbps", "access price (utility per Mbit/s); 0 for operator cells"),
)}

#: Optional cell columns of the 3-D antenna (``RadioModel(antenna="tr38901")``): their
#: meaning, unit and `default`, the value of a cell without the column (or with NaN in it:
#: cells added to a table that has the column).
ANTENNA_COLUMNS: dict[str, Quantity] = {q.name: q for q in (
    _column("tilt_deg", "mechanical downtilt, degrees below the horizon", default=0.0),
    _column("electrical_tilt_deg", "electrical downtilt of the panel's beam, degrees below the "
            "horizon", like="tilt_deg", default=0.0),
    _column("panel_rows", "antenna elements per column of the panel (vertical)", default=1.0),
    _column("panel_columns", "antenna elements per row of the panel (horizontal)", default=1.0),
)}

#: Required user columns (besides ``geometry``, a Point in metres).
USER_COLUMNS: dict[str, Quantity] = {q.name: q for q in (
    _column("user_id", "unique id of the user", kind="id"),
    _column("indoor", "True if the user is indoors (wall loss applies)", kind="bool"),
    _column("weight", "utility weight w_i > 0 (default 1)"),
    _column("demand_mbps", "traffic demand; inf = elastic (full buffer)"),
)}

#: Peak memory of one cell of a cells table [bytes]: columns, Point geometry and the copy
#: made when cells are appended (measured: about 660 for femtocells, 830 per hex-grid cell).
CELL_BYTES = 1000


def _points(x_m: np.ndarray, y_m: np.ndarray, crs: Any) -> gpd.GeoSeries:
    x, y = _column(x_m, None, float, "x_m"), _column(y_m, None, float, "y_m")
    if x.shape != y.shape:
        raise ValidationError(f"x_m has shape {x.shape} but y_m {y.shape}; fix: give one x and "
                              "one y per point")
    try:
        return gpd.GeoSeries(shapely.points(x, y), crs=crs)
    except (pyproj.exceptions.CRSError, TypeError, ValueError) as err:
        raise ValidationError(f"crs={crs!r} is not a CRS pyproj knows ({err}); fix: give a "
                              "projected metric CRS such as 'EPSG:32631'") from None


def _column(value: Any, n: int | None, dtype: Any, name: str) -> np.ndarray:
    """Broadcast a scalar or length-n sequence to a length-n array (no silent truncation).

    ``n=None``: any 1-d array, no scalar.
    """
    if dtype is float:  # numbers only: "10" or True are refused, not converted
        arr = as_float_array(value, name, fix="give numbers (a scalar or one per row)")
    elif dtype is bool:  # booleans only: "false" (truthy) or 0/1 are refused, not converted
        raw = np.asarray(value) if not isinstance(value, (list, tuple)) else \
            np.asarray(value, dtype=object)
        if raw.dtype.kind != "b" and raw.size:
            flags = raw.reshape(-1)
            wrong = list(flags[:1]) if raw.dtype.kind != "O" else \
                [v for v in flags if not isinstance(v, (bool, np.bool_))][:1]
            if wrong:
                bad = wrong[0]
                raise ValidationError(f"{name} holds {bad!r} ({type(bad).__name__}), not True or "
                                      "False; fix: give booleans (a scalar or one per row)")
        arr = raw.astype(bool)
    else:
        try:
            arr = np.asarray(value, dtype=dtype)
        except (TypeError, ValueError):
            raise ValidationError(f"{name}={value!r} cannot be read as values; fix: give values "
                                  "(a scalar or one per row)") from None
    if n is None:
        if arr.ndim != 1:
            raise ValidationError(f"{name} has shape {arr.shape}; fix: give a 1-d array of coordinates")
        return arr
    if arr.ndim == 0:
        return np.full(n, arr.item(), dtype=dtype)
    if arr.shape != (n,):
        raise ValidationError(f"{name}: expected a scalar or {n} values, got shape {arr.shape}; "
                              "fix: give one value per row")
    return arr


def _labels(value: Any, n: int, name: str, *, scalar: bool = False) -> np.ndarray:
    """One label per row (ids, extra columns) as an array of shape (n,); a scalar if allowed."""
    arr = np.asarray(value)
    if arr.shape != (n,) and not (scalar and arr.ndim == 0):
        raise ValidationError(f"{name} has shape {arr.shape}, not ({n},); fix: give one value per row")
    return arr


def cells_frame(
    x_m: np.ndarray,
    y_m: np.ndarray,
    *,
    crs: Any,
    tier: str | np.ndarray,
    tx_power_dbm: float | np.ndarray,
    antenna_gain_dbi: float | np.ndarray,
    site_id: np.ndarray | None = None,
    cell_id: np.ndarray | None = None,
    owner: str | np.ndarray = "operator",
    height_m: float | np.ndarray = 10.0,
    azimuth_deg: float | np.ndarray = np.nan,
    backhaul_mbps: float | np.ndarray = np.inf,
    price_per_mbps: float | np.ndarray = 0.0,
    **extra: Any,
) -> gpd.GeoDataFrame:
    """Build a cells table with every required column.

    Parameters
    ----------
    x_m, y_m : ndarray, shape (n,)
        Positions in metres in `crs`.
    crs : pyproj.CRS or str
        A projected, metric CRS.
    tier, tx_power_dbm, antenna_gain_dbi, owner, height_m, azimuth_deg, backhaul_mbps, price_per_mbps
        Scalars or arrays of shape (n,); see :data:`CELL_COLUMNS` for units.
    site_id, cell_id : ndarray, shape (n,), optional
        Default: ``0..n-1`` (every cell its own site).
    **extra
        Further columns, kept as they are.

    Returns
    -------
    geopandas.GeoDataFrame
    """
    geometry = _points(x_m, y_m, crs).values
    n = len(geometry)
    ids = np.arange(n)
    data = {
        "cell_id": ids if cell_id is None else _labels(cell_id, n, "cell_id"),
        "site_id": ids if site_id is None else _labels(site_id, n, "site_id"),
        "tier": _column(tier, n, object, "tier"),
        "owner": _column(owner, n, object, "owner"),
        "height_m": _column(height_m, n, float, "height_m"),
        "azimuth_deg": _column(azimuth_deg, n, float, "azimuth_deg"),
        "antenna_gain_dbi": _column(antenna_gain_dbi, n, float, "antenna_gain_dbi"),
        "tx_power_dbm": _column(tx_power_dbm, n, float, "tx_power_dbm"),
        "backhaul_mbps": _column(backhaul_mbps, n, float, "backhaul_mbps"),
        "price_per_mbps": _column(price_per_mbps, n, float, "price_per_mbps"),
    }
    data.update({k: _labels(v, n, k, scalar=True) for k, v in extra.items()})
    return gpd.GeoDataFrame(data, geometry=geometry, crs=crs)


def users_frame(
    x_m: np.ndarray,
    y_m: np.ndarray,
    *,
    crs: Any,
    user_id: np.ndarray | None = None,
    indoor: bool | np.ndarray = False,
    weight: float | np.ndarray = 1.0,
    demand_mbps: float | np.ndarray = np.inf,
    **extra: Any,
) -> gpd.GeoDataFrame:
    """Build a users table with every required column (see :data:`USER_COLUMNS`).

    Parameters
    ----------
    x_m, y_m : ndarray, shape (n,)
        Positions in metres in `crs`.
    crs : pyproj.CRS or str
        A projected, metric CRS.
    user_id : ndarray, shape (n,), optional
        Default ``0..n-1``.
    indoor, weight, demand_mbps
        Scalars or arrays of shape (n,).

    Returns
    -------
    geopandas.GeoDataFrame
    """
    geometry = _points(x_m, y_m, crs).values
    n = len(geometry)
    data = {
        "user_id": np.arange(n) if user_id is None else _labels(user_id, n, "user_id"),
        "indoor": _column(indoor, n, bool, "indoor"),
        "weight": _column(weight, n, float, "weight"),
        "demand_mbps": _column(demand_mbps, n, float, "demand_mbps"),
    }
    data.update({k: _labels(v, n, k, scalar=True) for k, v in extra.items()})
    return gpd.GeoDataFrame(data, geometry=geometry, crs=crs)


@dataclasses.dataclass(frozen=True)
class Fingerprint:
    """A short digest of which network an object describes: its cells and its users.

    Objects built from a network (gain tables, link tables, load couplings, power
    problems, schedules) record it, and :func:`check_same_network` compares two records
    wherever such objects meet, so that objects of two networks with the same counts are
    refused instead of being combined.

    Attributes
    ----------
    cells : str
        Digest of the cells' ids and positions [m], in row order.
    users : str
        Digest of the users' ids and positions [m], in row order (of the users the object
        holds: a drop's problem holds only the users with a usable link).
    """

    cells: str
    users: str

    def __str__(self) -> str:
        return f"cells {self.cells}, users {self.users}"


def _digest(ids: pd.Series, geometry: gpd.GeoSeries) -> str:
    """sha256 of ids (pandas' stable row hashes) and point coordinates, 16 hex digits."""
    digest = hashlib.sha256()
    digest.update(pd.util.hash_pandas_object(pd.Series(ids.to_numpy()), index=False)
                  .to_numpy().tobytes())
    for coordinate in (shapely.get_x(geometry.values), shapely.get_y(geometry.values)):
        digest.update(np.ascontiguousarray(coordinate, dtype=float).tobytes())
    return digest.hexdigest()[:16]


def check_same_network(ours: Fingerprint | None, theirs: Fingerprint | None, *, ours_name: str,
                       theirs_name: str, fix: str, cells_only: bool = False) -> None:
    """Refuse two objects that describe different networks.

    Parameters
    ----------
    ours, theirs : Fingerprint or None
        What each object records (:attr:`Network.fingerprint`); None (an object made by
        hand, which records none) is not compared.
    ours_name, theirs_name : str
        How the message names the two objects.
    fix : str
        How to get objects of one network.
    cells_only : bool
        Compare the cells only (objects that hold for any users of the cells, e.g. a
        power schedule).

    Raises
    ------
    ValidationError
        Naming both objects, what differs (cells, users) and the fix.
    """
    if ours is None or theirs is None:
        return
    differ = [part for part in ("cells", "users") if getattr(ours, part) != getattr(theirs, part)
              and not (cells_only and part == "users")]
    if differ:
        what = " and ".join(differ) + " (ids and positions)"
        raise ValidationError(
            f"{ours_name} and {theirs_name} describe different networks: their {what} differ "
            f"(fingerprints {ours} against {theirs}), though their counts may match; fix: {fix}")


@dataclasses.dataclass(eq=False)
class Network:
    """Cells, users and the band of one cellular network.

    Parameters
    ----------
    cells : geopandas.GeoDataFrame
        One row per cell with the columns of :data:`CELL_COLUMNS` and Point geometries
        in a projected, metric CRS.
    users : geopandas.GeoDataFrame, optional
        One row per user with the columns of :data:`USER_COLUMNS`, same CRS. Default: none.
    bandwidth_mhz : float
        Total bandwidth W [MHz].
    resource_mhz : array_like, shape (K,), optional
        Widths W_k of the K resources (subbands) [MHz], summing to `bandwidth_mhz`.
        Default: one resource, the whole band.
    region : shapely.Polygon, optional
        The service area in the same CRS (users are dropped here; densities refer to it).
    study_area : shapely.Polygon, optional
        Where statistics are taken, in the same CRS: the users inside it
        (:meth:`in_study_area`). Cells and users outside it, in a guard band of the
        region, take part in the radio model and the solve but not in the statistics, so
        that the users counted all see interference from every side. None: everywhere.
    wrap_shifts_m : ndarray, shape (n_images, 2), optional
        Translation vectors [m] of the wraparound images, the zero shift included; set by
        :func:`cellopt.topology.hex_grid`. None: no wraparound.

    Notes
    -----
    Builders in :mod:`cellopt.topology` return new networks and never modify their input.
    Geographic input is projected once by :meth:`from_frames`; distances are never taken
    in degrees.
    """

    cells: gpd.GeoDataFrame
    users: gpd.GeoDataFrame | None = None
    bandwidth_mhz: float = 10.0
    resource_mhz: np.ndarray | None = None
    region: shapely.Geometry | None = None
    wrap_shifts_m: np.ndarray | None = None
    study_area: shapely.Geometry | None = None

    def __post_init__(self) -> None:
        for name in ("cells", "users"):
            frame = getattr(self, name)
            if not (isinstance(frame, gpd.GeoDataFrame) or (name == "users" and frame is None)):
                raise ValidationError(f"{name} is a {type(frame).__name__}, not a GeoDataFrame; fix: "
                                      f"build it with cellopt.network.{name}_frame")
        if self.users is None:
            self.users = users_frame(np.empty(0), np.empty(0), crs=self.cells.crs)
        if self.resource_mhz is None:
            # a bad bandwidth is reported once, by validate()
            self.resource_mhz = _to_float(self.bandwidth_mhz) if is_real(self.bandwidth_mhz) \
                else np.inf
        self.resource_mhz = np.atleast_1d(as_float_array(
            self.resource_mhz, "resource_mhz", fix="give the subband widths in MHz"))
        if self.resource_mhz.ndim != 1:
            raise ValidationError(f"resource_mhz has shape {self.resource_mhz.shape}; fix: give a "
                                  "1-d array of subband widths in MHz")
        if self.wrap_shifts_m is not None:
            fix = "give finite (dx, dy) pairs in metres, shape (n_images, 2)"
            shifts = as_float_array(self.wrap_shifts_m, "wrap_shifts_m", fix=fix)
            if shifts.ndim != 2 or shifts.shape[1] != 2 or not np.isfinite(shifts).all():
                raise ValidationError(f"wrap_shifts_m has shape {shifts.shape} or non-finite "
                                      f"entries; fix: {fix}")
            self.wrap_shifts_m = shifts

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_frames(
        cls,
        cells: gpd.GeoDataFrame,
        users: gpd.GeoDataFrame | None = None,
        *,
        crs: Any = None,
        **kwargs: Any,
    ) -> Network:
        """Build a network from tables, projecting geographic input once.

        Parameters
        ----------
        cells, users : geopandas.GeoDataFrame
            Tables with a CRS. Geographic ones (e.g. EPSG:4326) are projected to `crs`.
        crs : pyproj.CRS or str, optional
            Target metric CRS. Default: the cells' CRS if it is projected, else a CRS
            that keeps distances between the cells within 1 % (their UTM zone when it
            does; :func:`~cellopt.crs.metric_crs`), or an error for cells
            spread too widely.
        **kwargs
            ``bandwidth_mhz``, ``resource_mhz``, ``region``, ``wrap_shifts_m``, ``study_area``
            (polygons in the target CRS).
        """
        for name, frame in (("cells", cells), ("users", users)):
            if frame is not None and not isinstance(frame, gpd.GeoDataFrame):
                raise ValidationError(f"{name} is a {type(frame).__name__}, not a GeoDataFrame; fix: "
                                      "geopandas.GeoDataFrame(frame, geometry=..., crs=...)")
            if frame is not None and frame.crs is None:
                raise ValidationError(
                    f"{name} table has no CRS; fix: set one, e.g. frame.set_crs('EPSG:4326')"
                )
        if crs is None and cells.crs.is_projected:
            crs = cells.crs
        elif crs is None:

            x, y = shapely.get_x(cells.geometry.values), shapely.get_y(cells.geometry.values)
            finite = np.isfinite(x) & np.isfinite(y)
            if not finite.any():
                raise ValidationError("cells: no cell has finite coordinates, so no metric CRS "
                                      "can be chosen; fix: give each cell a point position")
            crs = metric_crs(cells.geometry[finite], "cells", fix="build one network per region, "
                             "or pass crs= a projected CRS in metres")
        cells = cells.to_crs(crs)
        users = users.to_crs(crs) if users is not None else None
        return cls(cells=cells, users=users, **kwargs).validate()

    def replace(self, **changes: Any) -> Network:
        """A copy with some fields replaced (tables are not copied).

        Raises
        ------
        ValidationError
            For a name that is not a field of :class:`Network`.
        """
        fields = [f.name for f in dataclasses.fields(self)]
        check_names(changes, fields, what="field(s) {} for Network.replace",
                    fix=f"use fields of Network: {fields}")
        return dataclasses.replace(self, **changes)

    def add_cells(self, new: gpd.GeoDataFrame) -> Network:
        """A copy with the cells of `new` appended; integer ids continue the existing ones."""
        return self.replace(cells=_append(self.cells, new, "cell_id", "site_id"))

    def add_users(self, new: gpd.GeoDataFrame) -> Network:
        """A copy with the users of `new` appended; integer ids continue the existing ones."""
        return self.replace(users=_append(self.users, new, "user_id"))

    # ------------------------------------------------------------------ views
    @property
    def crs(self) -> pyproj.CRS:
        """The network's projected CRS."""
        return self.cells.crs

    @property
    def n_cells(self) -> int:
        return len(self.cells)

    @property
    def n_users(self) -> int:
        return len(self.users)

    @property
    def n_resources(self) -> int:
        return len(self.resource_mhz)

    @property
    def fingerprint(self) -> Fingerprint:
        """Which network this is: a digest of the cells' ids and positions and of the
        users' ids and positions (:class:`Fingerprint`).

        Computed once (pandas' row hashes and the coordinates' bytes, about 0.1 s per
        million users) and kept while the tables are the same objects; a table edited in
        place afterwards is not seen: build a new network (:meth:`replace`) instead.
        """
        cached = self.__dict__.get("_fingerprint")  # (cells, users, fingerprint)
        if cached is None or cached[0] is not self.cells or cached[1] is not self.users:
            cached = (self.cells, self.users,
                      Fingerprint(cells=_digest(self.cells["cell_id"], self.cells.geometry),
                                  users=_digest(self.users["user_id"], self.users.geometry)))
            self.__dict__["_fingerprint"] = cached
        return cached[2]

    def fingerprint_of_users(self, rows: np.ndarray) -> Fingerprint:
        """The :attr:`fingerprint` of this network with only some users (e.g. a drop's
        users with a usable link): equal to that of ``replace(users=users.iloc[rows])``.

        Parameters
        ----------
        rows : ndarray of int or bool, shape (n,) or (n_users,)
            User rows, or a mask over them.
        """
        rows = np.asarray(rows)
        if rows.dtype == bool:
            if rows.shape == (self.n_users,) and rows.all():
                return self.fingerprint
            rows = np.flatnonzero(rows)
        users = self.users.iloc[rows]
        return Fingerprint(cells=self.fingerprint.cells,
                           users=_digest(users["user_id"], users.geometry))

    @property
    def area_km2(self) -> float:
        """Area of :attr:`region` [km²] (NaN without a region)."""
        return float("nan") if self.region is None else self.region.area / 1e6

    def in_study_area(self) -> np.ndarray:
        """Users inside (or on the edge of) :attr:`study_area`, bool of shape (n_users,).

        All True without a study area.
        """
        if self.study_area is None:
            return np.ones(self.n_users, bool)
        xy = self.users.geometry
        return shapely.intersects_xy(self.study_area, xy.x.to_numpy(float), xy.y.to_numpy(float))

    def nearest_image_m(self, user_rows: np.ndarray, cell_rows: np.ndarray) -> np.ndarray:
        """Where each cell's copy nearest to its user lies: the cell itself, or on a
        wrapped layout the wraparound image (:attr:`wrap_shifts_m`) closest to the user.

        Association lines and distances drawn to these positions stay inside the layout,
        instead of crossing it to a cell at the far edge whose image is next door.

        Parameters
        ----------
        user_rows, cell_rows : array_like of int, shape (n,)
            Rows of :attr:`users` and of :attr:`cells`, paired.

        Returns
        -------
        ndarray, shape (n, 2)
            x, y [m] in the network's CRS.
        """
        user_rows = np.asarray(user_rows, dtype=np.int64)
        cell_rows = np.asarray(cell_rows, dtype=np.int64)
        users = self.users.geometry.iloc[user_rows]
        cells = self.cells.geometry.iloc[cell_rows]
        uxy = np.column_stack([users.x.to_numpy(float), users.y.to_numpy(float)])
        cxy = np.column_stack([cells.x.to_numpy(float), cells.y.to_numpy(float)])
        if self.wrap_shifts_m is None or len(cxy) == 0:
            return cxy
        images = cxy[:, None, :] + self.wrap_shifts_m[None, :, :]  # (n, S, 2)
        nearest = np.argmin(((images - uxy[:, None, :]) ** 2).sum(axis=2), axis=1)
        return images[np.arange(len(cxy)), nearest]

    def cell_arrays(self) -> dict[str, np.ndarray]:
        """Flat arrays of the cells: ``x_m, y_m``, numeric columns, and integer codes.

        Returns
        -------
        dict of ndarray, each of shape (n_cells,)
            ``x_m, y_m, height_m, azimuth_deg, antenna_gain_dbi, tx_power_dbm,
            backhaul_mbps, price_per_mbps``; the :data:`ANTENNA_COLUMNS` (their defaults
            where the table has none); ``tier`` as codes into :data:`TIERS`;
            ``site`` as codes 0..n_sites-1 of ``site_id``; ``third_party`` as bool.
        """
        c = self.cells
        out = {"x_m": c.geometry.x.to_numpy(float), "y_m": c.geometry.y.to_numpy(float)}
        for col in ("height_m", "azimuth_deg", "antenna_gain_dbi", "tx_power_dbm",
                    "backhaul_mbps", "price_per_mbps"):
            out[col] = c[col].to_numpy(float)
        for col, column in ANTENNA_COLUMNS.items():
            value = c[col].to_numpy(float) if col in c else np.full(len(c), column.default)
            out[col] = np.where(np.isnan(value), column.default, value)
        out["tier"] = pd.Categorical(c["tier"], categories=TIERS).codes.astype(np.int8)
        out["site"] = pd.factorize(c["site_id"])[0]
        out["third_party"] = (c["owner"] == "third_party").to_numpy(bool)
        return out

    def user_arrays(self) -> dict[str, np.ndarray]:
        """Flat arrays of the users: ``x_m, y_m, indoor, weight, demand_mbps``, shape (n_users,)."""
        u = self.users
        return {
            "x_m": u.geometry.x.to_numpy(float),
            "y_m": u.geometry.y.to_numpy(float),
            "indoor": u["indoor"].to_numpy(bool),
            "weight": u["weight"].to_numpy(float),
            "demand_mbps": u["demand_mbps"].to_numpy(float),
        }

    # ------------------------------------------------------------------ validation
    def validate(self) -> Network:
        """Check every table and the band; return self.

        Raises
        ------
        ValidationError
            Listing every problem found, each with the offending rows and the fix.
        """
        problems: list[str] = []
        problems += _check_crs(self.cells, "cells")
        if self.users.crs != self.cells.crs and len(self.users):
            problems.append(
                "users and cells are in different CRSs; fix: users.to_crs(cells.crs)"
            )
        problems += _check_table(self.cells, "cells", CELL_COLUMNS, "cell_id", CELL_RULES)
        problems += _check_table(self.users, "users", USER_COLUMNS, "user_id", _user_rules)
        problems += _check_band(self.bandwidth_mhz, self.resource_mhz)
        if problems:
            raise ValidationError(problems)
        return self

    def __repr__(self) -> str:
        tiers = self.cells["tier"].value_counts().to_dict() if self.n_cells else {}
        return (
            f"Network({self.n_cells} cells {tiers}, {self.n_users} users, "
            f"{self.bandwidth_mhz:g} MHz in {self.n_resources} resource(s), crs={_crs_text(self.crs)})"
        )


def _crs_text(crs: pyproj.CRS | None) -> str:
    """A CRS in a few words: ``EPSG:32631``, else its name."""
    if crs is None:
        return "None"
    code = crs.to_epsg()
    return f"EPSG:{code}" if code is not None else repr(crs.name)


def _append(old: gpd.GeoDataFrame, new: gpd.GeoDataFrame, *id_cols: str) -> gpd.GeoDataFrame:
    if not isinstance(new, gpd.GeoDataFrame):
        raise ValidationError(f"the rows to append are a {type(new).__name__}, not a GeoDataFrame; "
                              "fix: build them with cells_frame or users_frame")
    new = new.copy()
    if old.crs is not None and new.crs != old.crs:
        new = new.to_crs(old.crs)
    for col in id_cols:
        if len(old) and pd.api.types.is_integer_dtype(old[col]) and pd.api.types.is_integer_dtype(
            new[col]
        ):
            new[col] = new[col] - new[col].min() + old[col].max() + 1
    if not len(old):
        return new
    return gpd.GeoDataFrame(pd.concat([old, new], ignore_index=True), crs=old.crs)


# ---------------------------------------------------------------------- rules
#: The rules every cell obeys, one per (column, bad-mask function, what is wrong, fix):
#: `Network.validate` and the cell-file reader (which names the file's columns) apply them.
CELL_RULES = [
    ("tier", lambda v: ~v.isin(TIERS).to_numpy(), "unknown tier",
     f"use one of {list(TIERS)}"),
    ("owner", lambda v: ~v.isin(OWNERS).to_numpy(), "unknown owner",
     f"use one of {list(OWNERS)}"),
    ("height_m", lambda v: _outside(v, "height_m"), "height_m is not finite or outside "
     f"{LIMITS['height_m'].interval()}", LIMITS["height_m"].fix),
    ("azimuth_deg", lambda v: ~(np.isnan(_num(v)) | ((_num(v) >= 0) & (_num(v) < 360))),
     "azimuth_deg is outside [0, 360)", "give bearings clockwise from north in [0, 360), "
     "or NaN for omni cells"),
    ("antenna_gain_dbi", lambda v: _outside(v, "antenna_gain_dbi"), "antenna_gain_dbi is not "
     f"finite or outside {LIMITS['antenna_gain_dbi'].interval()}", LIMITS["antenna_gain_dbi"].fix),
    ("tx_power_dbm", lambda v: _outside(v, "tx_power_dbm"), "tx_power_dbm is not finite or "
     f"outside {LIMITS['tx_power_dbm'].interval()}", LIMITS["tx_power_dbm"].fix),
    *[(col, lambda v: _outside(v, "tilt_deg") & ~np.isnan(_num(v)), f"{col} is infinite or "
       f"outside {LIMITS['tilt_deg'].interval()}", LIMITS["tilt_deg"].fix)
      for col in ("tilt_deg", "electrical_tilt_deg")],
    *[(col, lambda v: ~((_finite(v) & (_num(v) >= 1) & (_num(v) % 1 == 0)) | np.isnan(_num(v))),
       f"{col} is not a whole number ≥ 1", f"give the number of antenna elements ({col})")
      for col in ("panel_rows", "panel_columns")],
    ("backhaul_mbps", lambda v: np.isnan(_num(v)) | (_num(v) < 0),
     "backhaul_mbps is negative or NaN", "give a capacity ≥ 0 in Mbit/s, or inf for unlimited"),
    ("price_per_mbps", lambda v: ~(_finite(v) & (_num(v) >= 0)),
     "price_per_mbps is negative or not finite", "give a price ≥ 0 per Mbit/s"),
]

_user_rules = [
    ("indoor", _not_bool, "indoor is not a boolean",
     "set indoor to True or False"),
    ("weight", lambda v: ~(_finite(v) & (_num(v) > 0)), "weight is not a finite value > 0",
     "give positive weights (1 for all equal)"),
    ("demand_mbps", lambda v: np.isnan(_num(v)) | (_num(v) <= 0),
     "demand_mbps is not > 0", "give a demand > 0 in Mbit/s, or inf for elastic traffic"),
]
