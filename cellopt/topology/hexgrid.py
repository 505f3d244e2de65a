"""The 3GPP hexagonal macro layout (TR 36.814 §A.2.1.1) and pico placement (Config. 4)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pyproj
import shapely
from scipy.spatial import cKDTree

from cellopt.checks import check_count, check_real, shown
from cellopt.errors import ValidationError, check_memory
from cellopt.network import CELL_BYTES, Network, cells_frame
from cellopt.parameters import register_choice
from cellopt.topology.sampling import as_rng

__all__ = ["DEFAULT_ORIGIN_LONLAT", "SECTOR_ORIENTATIONS", "add_picos", "add_picos_nbytes", "hex_grid",
           "hex_grid_nbytes", "hex_site_positions", "sector_azimuths_deg", "synthetic_crs"]

#: Memory per site of a hex grid beyond its cells [bytes]: its hexagon polygon and the
#: coverage union of all hexagons (measured: about 800 with 3 sectors, cells included).
SITE_BYTES = 1500
#: Memory per pico being placed beyond its cell [bytes]: the draws of a round, its
#: wraparound images and the KD-trees of the distance checks.
PICO_DRAW_BYTES = 500

#: Where a synthetic layout's centre lies on the Earth by default, (lon, lat) [degrees]:
#: Munich, Marienplatz. A basemap under a synthetic layout shows a real city; the radio
#: model does not depend on it.
DEFAULT_ORIGIN_LONLAT = (11.5755, 48.1374)
#: Coordinates [m] of a synthetic layout's centre in its CRS (the false easting and
#: northing): synthetic coordinates are plain metres around it.
SYNTHETIC_ORIGIN_M = np.array([500_000.0, 1_000_000.0])


def synthetic_crs(origin_lonlat: Sequence[float] = DEFAULT_ORIGIN_LONLAT) -> pyproj.CRS:
    """The CRS of a synthetic layout centred at `origin_lonlat`.

    A transverse Mercator projection (WGS 84, scale 1) whose central meridian and
    latitude of origin pass through the centre, with :data:`SYNTHETIC_ORIGIN_M` as false
    easting and northing: the layout's centre maps to `origin_lonlat`, and distances
    within 100 km of it are true to 0.013 % (0.31 % at 500 km).

    Parameters
    ----------
    origin_lonlat : (float, float)
        Longitude in [−180, 180] and latitude in [−85, 85] of the centre, in degrees.

    Returns
    -------
    pyproj.CRS
        Projected, in metres, named after the centre.

    Raises
    ------
    ValidationError
        For anything but two finite numbers in range, naming ``origin_lonlat``.
    """
    lon, lat = check_lonlat(origin_lonlat, "origin_lonlat")
    conversion = pyproj.crs.coordinate_operation.TransverseMercatorConversion(
        latitude_natural_origin=lat, longitude_natural_origin=lon, false_easting=SYNTHETIC_ORIGIN_M[0],
        false_northing=SYNTHETIC_ORIGIN_M[1], scale_factor_natural_origin=1.0)
    return pyproj.crs.ProjectedCRS(conversion, name=f"cellopt synthetic layout at lon {lon:g}, lat {lat:g}",
                                   geodetic_crs=pyproj.CRS("EPSG:4326"))


def check_lonlat(value: object, name: str) -> tuple[float, float]:
    """`value` as (lon, lat) [degrees], checked: two finite numbers, |lon| ≤ 180, |lat| ≤ 85."""
    fix = "give [lon, lat] in degrees, e.g. [11.5755, 48.1374] for Munich (longitude first)"
    try:
        lon, lat = (float(v) for v in value)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise ValidationError(f"{name}={value!r} is not two numbers; fix: {fix}") from None
    if not (np.isfinite(lon) and np.isfinite(lat) and abs(lon) <= 180 and abs(lat) <= 85):
        swapped = " (swapped? longitude comes first)" if abs(lat) > 85 and abs(lon) <= 85 else ""
        raise ValidationError(f"{name}={value!r} is outside lon [-180, 180], lat [-85, 85]"
                              f"{swapped}; fix: {fix}")
    return lon, lat


#: The CRS of synthetic layouts by default: :func:`synthetic_crs` at
#: :data:`DEFAULT_ORIGIN_LONLAT`.
SYNTHETIC_CRS = synthetic_crs()

#: The boresights of a 3-sector site for each ``sector_orientation`` [degrees clockwise from
#: north]. A hex grid's neighbour sites lie at bearings 0°, 60°, ..., 300° (its hexagons'
#: corners at 30°, 90°, ...):
#:
#: - ``"corner"`` (30°, 150°, 270°): each boresight points at a corner of the site's
#:   hexagon, between two neighbour sites; each sector serves the rhombus of the hexagon
#:   around its boresight;
#: - ``"neighbour"`` (60°, 180°, 300°): each boresight points at a neighbour site, across
#:   the middle of an edge of the site's hexagon. These are TR 38.901 Table 7.8-1's
#:   30°, 150° and 270° in its global coordinate system (azimuth counted counter-clockwise
#:   from the x axis, east; TR 38.901 §7.1), on the layout whose first ring lies at 30°,
#:   90°, ... from the x axis — the clover-leaf layout of 3-sector sites, each sector a
#:   hexagon of radius ISD/3 with the site at a corner, as QuaDRiGa and ns-3 5G-LENA
#:   build it for the 3GPP calibrations (docs/calibration.md, "Sector orientation").
SECTOR_ORIENTATIONS: dict[str, tuple[float, float, float]] = {
    "corner": (30.0, 150.0, 270.0),
    "neighbour": (60.0, 180.0, 300.0),
}
register_choice("sector_orientation", SECTOR_ORIENTATIONS)
#: The layouts' sector orientation by default (docs/calibration.md explains why).
DEFAULT_SECTOR_ORIENTATION = "corner"

# Neighbour sites lie at bearings 0°, 60°, ... (north first).
_BASIS = np.array([[np.sin(np.pi / 3), np.cos(np.pi / 3)], [0.0, 1.0]])  # bearings 60°, 0°


def _rotate(v: np.ndarray, degrees: float) -> np.ndarray:
    a = np.deg2rad(degrees)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    return v @ rot.T


def sector_azimuths_deg(sectors: int, sector_orientation: str = DEFAULT_SECTOR_ORIENTATION) -> np.ndarray:
    """The boresights of one site's sectors [degrees clockwise from north].

    Parameters
    ----------
    sectors : {3, 1}
        Sectors per site.
    sector_orientation : {"corner", "neighbour"}
        Where the three boresights point (:data:`SECTOR_ORIENTATIONS`); ignored for
        ``sectors=1``.

    Returns
    -------
    ndarray, shape (sectors,)
        ``SECTOR_ORIENTATIONS[sector_orientation]`` for 3 sectors; ``[nan]`` (omni) for 1.

    Raises
    ------
    ValidationError
        A `sector_orientation` that is not one of :data:`SECTOR_ORIENTATIONS`, naming
        ``sector_orientation`` and the valid names.
    """
    if not isinstance(sector_orientation, str) or sector_orientation not in SECTOR_ORIENTATIONS:
        raise ValidationError(
            f"sector_orientation={shown(sector_orientation)}; fix: use 'corner' (boresights 30°, "
            "150°, 270° clockwise from north, each between two neighbour sites; the default) or "
            "'neighbour' (60°, 180°, 300°, each at a neighbour site, as in the 3GPP calibrations)")
    if sectors == 1:
        return np.array([np.nan])
    return np.array(SECTOR_ORIENTATIONS[sector_orientation])


def hex_site_positions(n_rings: int, isd_m: float) -> np.ndarray:
    """Site positions of a hexagonal layout with `n_rings` rings around a centre site.

    Parameters
    ----------
    n_rings : int
        0 gives one site, 1 gives 7, 2 gives 19 (3 n² + 3 n + 1 in general).
    isd_m : float
        Inter-site distance [m].

    Returns
    -------
    ndarray, shape (n_sites, 2)
        Positions [m] relative to the centre site, centre first, then ring by ring.
    """
    n_rings = check_count(n_rings, "n_rings", fix="give a whole number ≥ 0 (1 → 7, 2 → 19 sites)")
    isd_m = check_real(isd_m, "isd_m")
    check_memory(hex_grid_nbytes(n_rings, sectors=0), f"hex_site_positions: n_rings={n_rings:,}",
                 "use fewer rings")
    return _site_positions(n_rings, isd_m)


def _site_positions(n_rings: int, isd_m: float) -> np.ndarray:
    q, r = np.meshgrid(np.arange(-n_rings, n_rings + 1), np.arange(-n_rings, n_rings + 1))
    q, r = q.ravel(), r.ravel()
    keep = np.abs(q + r) <= n_rings
    q, r = q[keep], r[keep]
    ring = np.maximum(np.maximum(np.abs(q), np.abs(r)), np.abs(q + r))
    xy = isd_m * (np.column_stack([q, r]) @ _BASIS)
    order = np.lexsort((np.round(np.arctan2(xy[:, 0], xy[:, 1]) % (2 * np.pi), 9), ring))
    return xy[order]


def hex_grid_nbytes(n_rings: int, sectors: int = 3) -> float:
    """Estimated peak memory of :func:`hex_grid` [bytes], before anything is allocated.

    The axial grid of ``(2 n + 1)²`` candidate sites (48 bytes each), then per site
    (``3 n² + 3 n + 1``) its hexagon (:data:`SITE_BYTES`) and `sectors` cells
    (:data:`~cellopt.network.CELL_BYTES` each).
    """
    n = float(n_rings)  # products, not powers: a float overflows to inf, never raises
    n_sites = 3 * n * n + 3 * n + 1
    return (2 * n + 1) * (2 * n + 1) * 48 + n_sites * (SITE_BYTES + sectors * CELL_BYTES)


def add_picos_nbytes(n_picos: float, n_cells: int = 0) -> float:
    """Estimated peak memory of placing `n_picos` picos into a network of `n_cells` cells [bytes]."""
    return float(n_picos) * (CELL_BYTES + PICO_DRAW_BYTES) + float(n_cells) * CELL_BYTES


def _hexagons(centers: np.ndarray, isd_m: float) -> np.ndarray:
    """The sites' hexagons (their Voronoi cells), corners at bearings 30°, 90°, ..., shape (n,)."""
    bearings = np.deg2rad(30 + 60 * np.arange(6))
    radius = isd_m / np.sqrt(3)
    corners = centers[:, None, :] + (radius * np.column_stack([np.sin(bearings), np.cos(bearings)]))
    # Rounded to a micrometre so that neighbours' shared corners are bit-identical.
    return shapely.polygons(np.round(corners, 6))


def hex_grid(
    n_rings: int = 2,
    isd_m: float = 500.0,
    *,
    sectors: int = 3,
    wraparound: bool = True,
    tx_power_dbm: float = 46.0,
    antenna_gain_dbi: float = 14.0,
    height_m: float = 25.0,
    bandwidth_mhz: float = 10.0,
    resource_mhz: np.ndarray | None = None,
    tilt_deg: float | None = None,
    electrical_tilt_deg: float | None = None,
    panel_rows: int | None = None,
    panel_columns: int | None = None,
    sector_orientation: Literal["corner", "neighbour"] = DEFAULT_SECTOR_ORIENTATION,
    origin_lonlat: tuple[float, float] | None = None,
    crs: str | None = None,
) -> Network:
    """A hexagonal macro layout with TR 36.814 Case-1 defaults.

    Parameters
    ----------
    n_rings : int
        Rings of sites around the centre: 1 → 7 sites, 2 → 19 sites (the 3GPP layout).
    isd_m : float
        Inter-site distance [m] (500 m, TR 36.814 Case 1).
    sectors : {3, 1}
        3: sectorised sites (`sector_orientation` says where the boresights point);
        1: omni sites.
    wraparound : bool
        Store the 6 wraparound translations (and the zero shift) so that the radio model
        measures every distance to the nearest copy of each site, as if the layout tiled
        the plane (removes the edge effect of a finite layout).
    tx_power_dbm, antenna_gain_dbi, height_m : float
        46 dBm over 10 MHz, 14 dBi boresight gain, 25 m (TR 36.814 Table A.2.1.1-2).
        Omni sites (``sectors=1``) get the same gain.
    bandwidth_mhz : float
        10 MHz (TR 36.814 Case 1).
    resource_mhz : array_like, optional
        Subband widths [MHz]; default one resource.
    tilt_deg, electrical_tilt_deg, panel_rows, panel_columns : optional
        Every cell's 3-D antenna (:data:`cellopt.network.ANTENNA_COLUMNS`, used by
        ``RadioModel(antenna="tr38901")``): mechanical and electrical downtilt [degrees
        below the horizon] and the panel's elements per column and per row. Each given
        becomes a column; none given, the table has none of them.
    sector_orientation : {"corner", "neighbour"}
        Boresights of the 3 sectors [degrees clockwise from north]
        (:data:`SECTOR_ORIENTATIONS`): ``"corner"`` (default) 30°, 150°, 270°, each at a
        corner of the site's hexagon, between two neighbour sites; ``"neighbour"`` 60°,
        180°, 300°, each at a neighbour site — TR 38.901's 30°, 150°, 270° (counter-
        clockwise from east) on this grid, the orientation of the 3GPP calibrations.
    origin_lonlat : (float, float), optional
        Where the layout's centre lies, (lon, lat) [degrees]; default
        :data:`DEFAULT_ORIGIN_LONLAT` (Munich). The layout is drawn in :func:`synthetic_crs`.
    crs : str, optional
        Instead of `origin_lonlat`: a projected CRS in metres, in which the layout's
        centre is at :data:`SYNTHETIC_ORIGIN_M`.

    Returns
    -------
    Network
        ``n_sites * sectors`` macro cells, ``region`` the union of the site hexagons.

    Raises
    ------
    ValidationError
        A parameter of the wrong type or outside its possible range
        (:data:`cellopt.parameters.LIMITS`); values outside the usual range warn.
    ResourceLimitError
        When the layout would not fit in memory (:func:`hex_grid_nbytes`), before it is
        built.
    """
    n_rings = check_count(n_rings, "n_rings", fix="give a whole number ≥ 0 (1 → 7, 2 → 19 sites)")
    isd_m = check_real(isd_m, "isd_m")
    if not isinstance(sectors, (int, np.integer)) or isinstance(sectors, bool) or sectors not in (1, 3):
        raise ValidationError(f"sectors={sectors!r}; fix: use 3 (sectorised) or 1 (omni)")
    if not isinstance(wraparound, (bool, np.bool_)):
        raise ValidationError(f"wraparound={wraparound!r}; fix: give True or False")
    tx_power_dbm = check_real(tx_power_dbm, "tx_power_dbm", tier="macro")
    antenna_gain_dbi = check_real(antenna_gain_dbi, "antenna_gain_dbi")
    height_m = check_real(height_m, "height_m")
    bandwidth_mhz = check_real(bandwidth_mhz, "bandwidth_mhz")
    azimuths = sector_azimuths_deg(sectors, sector_orientation)
    crs = layout_crs(crs, origin_lonlat)
    check_memory(hex_grid_nbytes(n_rings, sectors),
                 f"hex_grid: n_rings={n_rings:,} ({3 * n_rings**2 + 3 * n_rings + 1:,} sites)",
                 "use fewer rings (n_rings)")
    sites = _site_positions(n_rings, isd_m)
    n_sites = len(sites)
    xy = np.repeat(sites, sectors, axis=0) + SYNTHETIC_ORIGIN_M
    cells = cells_frame(
        xy[:, 0], xy[:, 1], crs=crs, tier="macro",
        site_id=np.repeat(np.arange(n_sites), sectors),
        azimuth_deg=np.tile(azimuths, n_sites),
        tx_power_dbm=tx_power_dbm, antenna_gain_dbi=antenna_gain_dbi, height_m=height_m,
        **antenna_columns(tilt_deg=tilt_deg, electrical_tilt_deg=electrical_tilt_deg,
                          panel_rows=panel_rows, panel_columns=panel_columns),
    )
    # The hexagons form a coverage (edge-to-edge, no overlaps): its union is exact.
    hexagons = _hexagons(sites + SYNTHETIC_ORIGIN_M, isd_m)
    try:
        region = shapely.coverage_union_all(hexagons)
    except shapely.errors.GEOSException:
        # a corner rounded apart from its neighbour's copy (some ISDs): snap-round instead
        region = shapely.union_all(hexagons, grid_size=1e-6)
    shifts = None
    if wraparound and n_rings > 0:
        # The cluster of 3n²+3n+1 sites tiles the plane under translations by the
        # lattice vector (2n+1, -n) and its rotations by multiples of 60°.
        v = np.array([2 * n_rings + 1, -n_rings]) @ _BASIS * isd_m
        shifts = np.vstack([np.zeros(2)] + [_rotate(v, 60 * k) for k in range(6)])
    return Network(
        cells=cells, bandwidth_mhz=bandwidth_mhz, resource_mhz=resource_mhz,
        region=region, wrap_shifts_m=shifts,
    ).validate()


def antenna_columns(**given: float | None) -> dict[str, float]:
    """The 3-D antenna columns given (not None), checked: tilts in [−90, 90] degrees,
    panel shapes whole numbers ≥ 1."""
    out = {}
    for name, value in given.items():
        if value is None:
            continue
        if name.endswith("tilt_deg"):
            out[name] = check_real(value, name, "tilt_deg")
        else:
            out[name] = float(check_count(value, name))
    return out


def layout_crs(crs: object, origin_lonlat: Sequence[float] | None) -> pyproj.CRS:
    """The CRS of a synthetic layout: `crs` as given (its coordinates then lie around
    :data:`SYNTHETIC_ORIGIN_M` in it), else :func:`synthetic_crs` at `origin_lonlat`
    (default :data:`DEFAULT_ORIGIN_LONLAT`).

    Raises
    ------
    ValidationError
        For both given, a CRS pyproj does not know, or a bad `origin_lonlat`.
    """
    if crs is None:
        return synthetic_crs(DEFAULT_ORIGIN_LONLAT if origin_lonlat is None else origin_lonlat)
    if origin_lonlat is not None:
        raise ValidationError(f"crs={crs!r} and origin_lonlat={origin_lonlat!r} are both given, but a "
                              "layout has one place; fix: give origin_lonlat (where the layout's "
                              "centre lies) or crs (a projected CRS whose coordinates are used as "
                              "they are), not both")
    try:
        return pyproj.CRS(crs)
    except (pyproj.exceptions.CRSError, TypeError, ValueError) as err:
        raise ValidationError(f"crs={crs!r} is not a CRS pyproj knows ({err}); fix: give a "
                              "projected metric CRS such as 'EPSG:32631', or leave it out and "
                              "give origin_lonlat") from None


def add_picos(
    network: Network,
    per_sector: int = 4,
    *,
    min_dist_macro_m: float = 75.0,
    min_dist_pico_m: float = 40.0,
    tx_power_dbm: float = 30.0,
    antenna_gain_dbi: float = 5.0,
    height_m: float = 10.0,
    max_rounds: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> Network:
    """Drop `per_sector` picos uniformly in each macro sector (TR 36.814 Config. 4a/4b).

    Each sector's area is the third of its site hexagon within 60° of its boresight: the
    rhombus around the boresight when it points at a corner of the hexagon
    (``sector_orientation="corner"``), a pentagon when it points at a neighbour site;
    omni macro sites use their whole hexagon. Positions that violate the minimum
    distances are redrawn.

    Parameters
    ----------
    network : Network
        A layout from :func:`hex_grid` (the site spacing is read from its macro cells).
    per_sector : int
        Picos per macro cell (4 in TR 36.814 Config. 4); 0 adds none.
    min_dist_macro_m, min_dist_pico_m : float
        Minimum pico–macro-site (75 m) and pico–pico (40 m) distances.
    tx_power_dbm, antenna_gain_dbi, height_m : float
        30 dBm, 5 dBi omni, 10 m (TR 36.814 Table A.2.1.1.2-1).
    max_rounds : int
        Redraw rounds before giving up with a ValidationError (too dense a request).
    rng : numpy.random.Generator or int, optional

    Returns
    -------
    Network
        With ``per_sector × n_macro`` pico cells appended, each its own site.

    Raises
    ------
    ValidationError
        A parameter of the wrong type or out of range, a network without two macro
        sites, more picos than a sector can hold `min_dist_pico_m` apart (checked with
        Groemer's packing bound before drawing), or no placement after `max_rounds`.
    ResourceLimitError
        When the picos would not fit in memory (:func:`add_picos_nbytes`).
    """
    rng = as_rng(rng)
    if not isinstance(network, Network):
        raise ValidationError(f"network is a {type(network).__name__}; fix: give a cellopt Network")
    per_sector = check_count(per_sector, "per_sector", fix="give a whole number of picos per "
                             "macro sector ≥ 0 (4 in TR 36.814)")
    max_rounds = check_count(max_rounds, "max_rounds", fix="give a whole number of rounds ≥ 1",
                             minimum=1)
    min_dist_macro_m = check_real(min_dist_macro_m, "min_dist_macro_m")
    min_dist_pico_m = check_real(min_dist_pico_m, "min_dist_pico_m")
    tx_power_dbm = check_real(tx_power_dbm, "tx_power_dbm", tier="pico")
    antenna_gain_dbi = check_real(antenna_gain_dbi, "antenna_gain_dbi")
    height_m = check_real(height_m, "height_m")
    cells = network.cells
    macro = cells[cells["tier"] == "macro"]
    if not len(macro):
        raise ValidationError("the network has no macro cells; fix: build it with hex_grid()")
    n_macro = len(macro)
    check_memory(add_picos_nbytes(per_sector * n_macro, network.n_cells),
                 f"add_picos: per_sector={per_sector:,} × {n_macro:,} macro cells",
                 "use fewer picos per sector (per_sector)")
    mxy = np.column_stack([macro.geometry.x, macro.geometry.y])
    sites = np.unique(mxy, axis=0)
    if len(sites) < 2:
        raise ValidationError("add_picos needs at least two macro sites to infer the inter-site "
                              "distance; fix: use hex_grid(n_rings >= 1)")
    isd_m = _min_spacing(sites)
    radius = isd_m / np.sqrt(3)
    az = macro["azimuth_deg"].to_numpy(float)
    omni = np.isnan(az)
    _check_packing(per_sector, radius, omni.any(), min_dist_pico_m)
    # Each sector draws in the rhombus around the hexagon corner at or just anticlockwise
    # of its boresight (corners at bearings 30° + k·60°): edges at that corner ± 60° reach
    # the next corners. A boresight between corners then turns each draw by a multiple of
    # 120° into the sector's 120° wedge (the hexagon is symmetric under those turns, so
    # the draw stays uniform). Omni: three rhombi cover the whole hexagon.
    offset = np.where(omni, 0.0, (az - 30.0) % 60.0)
    at_corner = omni | np.isclose(offset, 0.0, atol=1e-9) | np.isclose(offset, 60.0, atol=1e-9)
    corner = np.where(at_corner, az, az - offset)
    e1 = radius * _unit(np.where(omni, 90.0, corner - 60.0))
    e2 = radius * _unit(np.where(omni, 210.0, corner + 60.0))

    shifts = np.zeros((1, 2)) if network.wrap_shifts_m is None else network.wrap_shifts_m
    need = np.full(n_macro, per_sector)
    placed: list[np.ndarray] = []
    for _ in range(max_rounds):
        if not need.any():
            break
        todo = np.repeat(np.arange(n_macro), need)
        u, v = rng.uniform(size=(2, len(todo)))
        xy = mxy[todo] + u[:, None] * e1[todo] + v[:, None] * e2[todo]
        # Omni sites: three rhombi (rotations by 120°) cover the hexagon.
        turn = np.where(omni[todo], rng.integers(0, 3, len(todo)) * 120.0, 0.0)
        turn = turn + _into_wedge(xy - mxy[todo], az[todo], at_corner[todo])
        xy = mxy[todo] + _rotate_each(xy - mxy[todo], turn)
        ok = _min_dist(xy, sites) >= min_dist_macro_m
        if placed:
            ok &= _min_dist(xy, _images(np.vstack(placed), shifts)) >= min_dist_pico_m
        # Among this round's candidates, keep the first of any too-close pair.
        cand = np.flatnonzero(ok)
        keep = cand[~_close_to_earlier(xy[cand], shifts, min_dist_pico_m)]
        placed.append(xy[keep])
        need -= np.bincount(todo[keep], minlength=n_macro)
        if not need.any():
            break
    else:
        raise ValidationError(f"could not place {per_sector} picos per sector with the minimum "
                              "distances; fix: fewer picos or smaller minimum distances")
    pxy = np.vstack(placed) if placed else np.empty((0, 2))
    picos = cells_frame(
        pxy[:, 0], pxy[:, 1], crs=network.crs, tier="pico",
        tx_power_dbm=tx_power_dbm, antenna_gain_dbi=antenna_gain_dbi, height_m=height_m,
    )
    return network.add_cells(picos).validate()


def _min_spacing(sites: np.ndarray) -> float:
    """The smallest distance between two of the (distinct) sites, as ``np.hypot`` gives it."""
    nearest = cKDTree(sites).query(sites, k=2)[0][:, 1].min()
    # The tree's distances may differ from hypot's in the last bit; take hypot's minimum
    # over every pair within a hair of the tree's, as a dense distance matrix would.
    pairs = cKDTree(sites).query_pairs(nearest * (1 + 1e-9), output_type="ndarray")
    d = sites[pairs[:, 0]] - sites[pairs[:, 1]]
    return float(np.hypot(d[:, 0], d[:, 1]).min())


def _check_packing(per_sector: int, radius_m: float, omni: bool, min_dist_m: float) -> None:
    """Refuse more picos than a sector can hold `min_dist_m` apart (Groemer's bound).

    At most ``2 A / (√3 d²) + P / (2 d) + 1`` points lie pairwise ≥ d apart in a convex
    region of area A and perimeter P (H. Groemer, 1960); the sector is a rhombus of edge
    `radius_m` (a third of the hexagon), or the whole hexagon for omni sites.
    """
    if min_dist_m <= 0 or per_sector <= 1:
        return
    hexagon_m2 = 1.5 * np.sqrt(3) * radius_m**2
    area_m2, perimeter_m = (hexagon_m2, 6 * radius_m) if omni else (hexagon_m2 / 3, 4 * radius_m)
    bound = 2 * area_m2 / (np.sqrt(3) * min_dist_m**2) + perimeter_m / (2 * min_dist_m) + 1
    if per_sector > bound:
        raise ValidationError(
            f"could not place {per_sector} picos per sector: a sector of {area_m2:,.0f} m² holds "
            f"at most {int(bound)} points {min_dist_m:g} m apart; fix: fewer picos (per_sector) "
            "or a smaller min_dist_pico_m")


def _close_to_earlier(xy: np.ndarray, shifts: np.ndarray, min_dist_m: float) -> np.ndarray:
    """Points closer than `min_dist_m` to an earlier point or its wraparound images, bool (n,).

    A KD-tree finds the close pairs, so memory grows with the number of points and of
    close pairs, never with their square.
    """
    conflict = np.zeros(len(xy), bool)
    if min_dist_m <= 0 or len(xy) < 2:
        return conflict
    tree = cKDTree(xy)
    for shift in shifts:  # the wraparound images, a handful
        moved = xy + shift
        # the tree's distances may differ from hypot's in the last bit: search a hair
        # wider, then decide with hypot
        pairs = tree.sparse_distance_matrix(cKDTree(moved), min_dist_m * (1 + 1e-9),
                                            output_type="ndarray")
        i, j = pairs["i"], pairs["j"]
        d = xy[i] - moved[j]
        close = (i < j) & (np.hypot(d[:, 0], d[:, 1]) < min_dist_m)
        conflict[j[close]] = True
    return conflict


def _into_wedge(v: np.ndarray, boresight_deg: np.ndarray, skip: np.ndarray) -> np.ndarray:
    """The anticlockwise turn [degrees, a multiple of 120°] that brings each offset `v`
    [m] into the 120° wedge around its boresight [degrees clockwise from north]; 0 where
    `skip` (draws already in their sector)."""
    bearing = np.degrees(np.arctan2(v[:, 0], v[:, 1]))
    k = np.floor(((bearing - boresight_deg + 60.0) % 360.0) / 120.0)
    return np.where(skip, 0.0, 120.0 * k)


def _unit(bearing_deg: np.ndarray) -> np.ndarray:
    b = np.deg2rad(bearing_deg)
    return np.column_stack([np.sin(b), np.cos(b)])


def _rotate_each(v: np.ndarray, degrees: np.ndarray) -> np.ndarray:
    a = np.deg2rad(degrees)
    c, s = np.cos(a), np.sin(a)
    return np.column_stack([c * v[:, 0] - s * v[:, 1], s * v[:, 0] + c * v[:, 1]])


def _images(xy: np.ndarray, shifts: np.ndarray) -> np.ndarray:
    """All wraparound copies of the points, shape (n_shifts * n, 2)."""
    return (xy[None, :, :] + shifts[:, None, :]).reshape(-1, 2)


def _min_dist(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return cKDTree(b).query(a)[0]
