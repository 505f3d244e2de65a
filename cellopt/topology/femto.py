"""Third-party femtocells dropped as a Poisson point process, in a region or in buildings."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import geopandas as gpd
import numpy as np
import shapely

from cellopt.checks import as_float_array, check_real
from cellopt.errors import ValidationError, check_memory, describe_rows
from cellopt.network import CELL_BYTES, OWNERS, Network, cells_frame
from cellopt.topology.areas import cells_region
from cellopt.topology.sampling import as_rng, check_region, uniform_points_in

__all__ = ["WIFI_DENSITY_PER_KM2", "add_femtocells", "add_femtocells_nbytes"]

#: Density of WiFi access points in a dense urban area [APs per km²], the reference for
#: ``adoption``. Source: Valenzano, Mana, Borean & Servetti, "Mapping WiFi measurements on
#: OpenStreetMap data for wireless street coverage analysis", FOSS4G 2016 (doi
#: 10.7275/R5G44NHC): WiGLE data (2015) show 154 APs in one 500 m × 500 m block of central
#: Turin, i.e. 616 per km². Street-level logging misses APs, so this is a lower bound for a
#: dense core. To use another figure, pass ``wifi_density_per_km2=`` or ``density_per_km2=``.
WIFI_DENSITY_PER_KM2: float = 154 / 0.25

#: A draw of per-cell values: ``f(rng, n) -> ndarray of shape (n,)``.
PerCell = float | np.ndarray | Callable[[np.random.Generator, int], np.ndarray]

_POLYGONAL = ("Polygon", "MultiPolygon")
_MAX_REJECTION_ROUNDS = 10_000
#: Memory per femtocell being drawn beyond its cell [bytes]: positions, the building
#: draw and bounds, and the per-cell backhaul and price.
FEMTO_DRAW_BYTES = 300
_FIX = "use a lower density_per_km2 or adoption, or a smaller region"


def add_femtocells_nbytes(n_femtocells: float, n_cells: int = 0) -> float:
    """Estimated peak memory [bytes] of adding `n_femtocells` to a network of `n_cells` cells."""
    return float(n_femtocells) * (CELL_BYTES + FEMTO_DRAW_BYTES) + float(n_cells) * CELL_BYTES


def add_femtocells(
    network: Network,
    *,
    density_per_km2: float | None = None,
    adoption: float | None = None,
    wifi_density_per_km2: float = WIFI_DENSITY_PER_KM2,
    region: shapely.Geometry | None = None,
    buildings: Sequence[shapely.Geometry] | gpd.GeoSeries | gpd.GeoDataFrame | None = None,
    tx_power_dbm: float = 20.0,
    antenna_gain_dbi: float = 0.0,
    height_m: float = 1.5,
    owner: str = "third_party",
    backhaul_mbps: PerCell = np.inf,
    price_per_mbps: PerCell = 0.0,
    rng: np.random.Generator | int | None = None,
) -> Network:
    """A copy of `network` with omni femtocells (tier ``'femto'``) dropped at random.

    The femtocells form a Poisson point process: their number is
    ``Poisson(density_per_km2 × area_km2)`` and, given the number, they are independent
    and uniform in the region, or, with `buildings`, each in a building drawn with
    probability proportional to its area and uniform inside it. The result is then a
    Poisson process of intensity ``density × area_km2 / Σ building areas`` on the
    buildings (overlapping buildings count twice where they overlap).

    Parameters
    ----------
    network : Network
        Left unchanged. Its cells' CRS (metric) is the CRS of `region` and of the output.
    density_per_km2 : float, optional
        Mean number of femtocells per km² (≥ 0). Give exactly one of this and `adoption`.
    adoption : float, optional
        Femtocells as a fraction in [0, 1] of the WiFi access points:
        ``density_per_km2 = adoption × wifi_density_per_km2``.
    wifi_density_per_km2 : float
        WiFi access points per km² (≥ 0); used with `adoption` only. Default
        :data:`WIFI_DENSITY_PER_KM2`.
    region : shapely.Polygon or MultiPolygon, optional
        Where to drop the femtocells, in the network CRS [m]. Default ``network.region``,
        and without `buildings` for a network without one (e.g. read by
        :func:`~cellopt.topology.read_cells`) its cells' convex hull buffered by 500 m
        (:func:`~cellopt.topology.cells_region`, what ``cellopt run`` uses for a cell
        file), which then becomes the region of the network returned.
    buildings : sequence of shapely (Multi)Polygons, or GeoSeries / GeoDataFrame, optional
        Footprints to put the femtocells in. A GeoSeries or GeoDataFrame with a CRS is
        reprojected to the network CRS; without one (or as plain shapely geometries) it is
        taken to be in the network CRS. If there is a region (`region` or
        ``network.region``), buildings are clipped to it and the density refers to the
        region's area; otherwise it refers to the area of the union of the buildings.
    tx_power_dbm : float
        Maximum transmit power [dBm].
    antenna_gain_dbi : float
        Antenna gain [dBi].
    height_m : float
        Antenna height above ground [m] (≥ 0).
    owner : {'third_party', 'operator'}
        Owner of every femtocell.
    backhaul_mbps : float, ndarray of shape (n,), or callable
        Backhaul capacity per femtocell [Mbit/s], ≥ 0, inf = unlimited. A scalar applies
        to all; an array needs the number ``n`` of femtocells in advance, so for per-cell
        values pass ``f(rng, n) -> ndarray of shape (n,)``, e.g. a draw of residential
        uplink speeds, called with this function's generator.
    price_per_mbps : float, ndarray of shape (n,), or callable
        Access price per femtocell [utility per Mbit/s], finite and ≥ 0; as `backhaul_mbps`.
    rng : numpy.random.Generator or int, optional
        Generator or seed; the global numpy state is never used.

    Returns
    -------
    Network
        A new network with the ``n`` femtocells appended to the cells, each its own site
        (``azimuth_deg`` NaN); integer cell and site ids continue the existing ones.
        Users and band are those of `network`, and so is the region unless the default
        region was drawn (see `region`).

    Raises
    ------
    ValidationError
        On a negative or non-finite density, an adoption outside [0, 1], both or neither
        of `density_per_km2` and `adoption`, a missing, empty or non-polygonal region,
        unusable buildings, bad cell parameters (out of their possible range, see
        :data:`cellopt.parameters.LIMITS`; outside the usual range they warn), or per-cell
        values of the wrong shape or sign.
    ResourceLimitError
        When the femtocells would not fit in memory (:func:`add_femtocells_nbytes`),
        checked on the mean count before it is drawn and on the count drawn.
    """
    if not isinstance(network, Network):
        raise ValidationError(f"network is a {type(network).__name__}; fix: give a cellopt Network")
    density = _density(density_per_km2, adoption, wifi_density_per_km2)
    tx_power_dbm, antenna_gain_dbi, height_m = _check_cell_parameters(
        tx_power_dbm, antenna_gain_dbi, height_m, owner)
    default = region is None and network.region is None and buildings is None
    region = network.region if region is None else region
    if default:  # e.g. read from a cell file: what `cellopt run` gives it
        region = cells_region(network)
    if region is not None:
        region = check_region(region)
    gen = as_rng(rng)

    if buildings is None:
        n = _count(density, region.area, network.n_cells, gen)
        xy = uniform_points_in(region, n, gen)
    else:
        footprints = _buildings(buildings, network.crs, region)
        area_m2 = region.area if region is not None else shapely.union_all(footprints).area
        n = _count(density, area_m2, network.n_cells, gen)
        xy = _points_in_buildings(footprints, n, gen)

    backhaul = _per_cell(backhaul_mbps, "backhaul_mbps", n, gen, allow_inf=True)
    price = _per_cell(price_per_mbps, "price_per_mbps", n, gen, allow_inf=False)
    if default:  # the region they were dropped in, for the users dropped next
        network = network.replace(region=region)
    if n == 0:
        return network.replace()
    femtos = cells_frame(
        xy[:, 0],
        xy[:, 1],
        crs=network.crs,
        tier="femto",
        tx_power_dbm=tx_power_dbm,
        antenna_gain_dbi=antenna_gain_dbi,
        owner=owner,
        height_m=height_m,
        azimuth_deg=np.nan,
        backhaul_mbps=backhaul,
        price_per_mbps=price,
    )
    return network.add_cells(femtos)


# ---------------------------------------------------------------------- validation
def _count(density: float, area_m2: float, n_cells: int, rng: np.random.Generator) -> int:
    """Poisson(density × area) femtocells, refusing counts that cannot fit in memory."""
    mean = density * area_m2 / 1e6
    what = f"add_femtocells: {density:g} per km² over {area_m2 / 1e6:.3g} km² (about {mean:.3g} cells)"
    # on the mean first: a huge mean would also overflow the Poisson draw
    check_memory(add_femtocells_nbytes(mean, n_cells), what, _FIX)
    n = int(rng.poisson(mean))
    check_memory(add_femtocells_nbytes(n, n_cells), what, _FIX)
    return n


def _density(density_per_km2: Any, adoption: Any, wifi_density_per_km2: Any) -> float:
    if (density_per_km2 is None) == (adoption is None):
        given = "both" if density_per_km2 is not None else "neither"
        raise ValidationError(
            f"{given} of density_per_km2 and adoption given; fix: give exactly one, e.g. "
            "density_per_km2=500 or adoption=0.1 (a fraction of the WiFi AP density)"
        )
    if density_per_km2 is not None:
        return check_real(density_per_km2, "density_per_km2", stacklevel=4)
    fraction = check_real(adoption, "adoption", stacklevel=4)
    return fraction * check_real(wifi_density_per_km2, "wifi_density_per_km2", stacklevel=4)


def _check_cell_parameters(tx_power_dbm: Any, antenna_gain_dbi: Any, height_m: Any,
                           owner: Any) -> tuple[float, float, float]:
    problems = []
    values = []
    for name, value in (("tx_power_dbm", tx_power_dbm), ("antenna_gain_dbi", antenna_gain_dbi),
                        ("height_m", height_m)):
        try:
            values.append(check_real(value, name, stacklevel=4, tier="femto"))
        except ValidationError as err:
            problems += err.problems
    if not isinstance(owner, str) or owner not in OWNERS:
        problems.append(f"owner is {owner!r}; fix: use one of {list(OWNERS)}")
    if problems:
        raise ValidationError(problems)
    return values[0], values[1], values[2]


def _buildings(buildings: Any, crs: Any, region: shapely.Geometry | None) -> np.ndarray:
    """Footprints as an array of (multi)polygons in the network CRS, clipped to `region`."""
    if isinstance(buildings, gpd.GeoDataFrame):
        buildings = buildings.geometry
    if isinstance(buildings, gpd.GeoSeries):
        if buildings.crs is not None and crs is not None and buildings.crs != crs:
            buildings = buildings.to_crs(crs)
        geoms = np.asarray(buildings.values, dtype=object)
    elif isinstance(buildings, shapely.Geometry):
        geoms = np.array([buildings], dtype=object)
    else:
        try:
            geoms = np.empty(len(buildings), dtype=object)
            geoms[:] = list(buildings)
        except TypeError:
            raise ValidationError(
                f"buildings is a {type(buildings).__name__}; fix: give a sequence of shapely "
                "polygons, a GeoSeries or a GeoDataFrame"
            ) from None
    if not len(geoms):
        raise ValidationError("buildings is empty; fix: give at least one footprint polygon")
    bad = np.flatnonzero([
        not isinstance(g, shapely.Geometry) or g.geom_type not in _POLYGONAL for g in geoms
    ])
    if len(bad):
        raise ValidationError(
            f"buildings {describe_rows(bad)} are not shapely Polygons or MultiPolygons; "
            "fix: drop them or give their footprints"
        )
    if region is not None:
        geoms = shapely.intersection(geoms, region)
        # Clipping may leave lines or points along the edge: keep the polygonal parts.
        geoms = np.array([_polygonal_part(g) for g in geoms], dtype=object)
    if not shapely.area(geoms).sum() > 0:
        where = " inside the region" if region is not None else ""
        raise ValidationError(
            f"the buildings have no area{where}; fix: give footprints in the network CRS "
            "(metres) that overlap the region"
        )
    return geoms


def _polygonal_part(geom: shapely.Geometry) -> shapely.Geometry:
    if geom.geom_type in _POLYGONAL or geom.is_empty:
        return geom
    parts = [p for p in shapely.get_parts(geom) if p.geom_type in _POLYGONAL]
    return shapely.union_all(parts) if parts else shapely.Polygon()


def _points_in_buildings(
    geoms: np.ndarray, n: int, rng: np.random.Generator
) -> np.ndarray:
    """`n` points: buildings drawn ∝ area, then uniform in each (shape (n, 2), metres)."""
    areas = shapely.area(geoms)
    keep = np.flatnonzero(areas > 0)
    geoms, areas = geoms[keep], areas[keep]
    which = rng.choice(len(geoms), size=n, p=areas / areas.sum())
    bounds = shapely.bounds(geoms)[which]  # (n, 4): xmin, ymin, xmax, ymax
    chosen = geoms[which]
    shapely.prepare(geoms)
    xy = np.empty((n, 2))
    todo = np.arange(n)
    for _ in range(_MAX_REJECTION_ROUNDS):
        if not len(todo):
            return xy
        b = bounds[todo]
        trial = rng.uniform(b[:, :2], b[:, 2:])
        inside = shapely.contains_xy(chosen[todo], trial[:, 0], trial[:, 1])
        xy[todo[inside]] = trial[inside]
        todo = todo[~inside]
    raise ValidationError(  # pragma: no cover - needs a sliver with a tiny area/bbox ratio
        f"could not place {len(todo)} femtocells in their buildings after "
        f"{_MAX_REJECTION_ROUNDS} rejection rounds; fix: drop sliver footprints"
    )


def _per_cell(value: Any, name: str, n: int, rng: np.random.Generator, *,
              allow_inf: bool) -> np.ndarray:
    """Resolve a scalar, array or ``f(rng, n)`` to validated values of shape (n,)."""
    source = "the callable's result" if callable(value) else "the value"
    if callable(value):
        value = value(rng, n)
        arr = _as_float_array(value, name, source)
        if arr.shape != (n,):
            raise ValidationError(
                f"{name}: {source} has shape {arr.shape}, expected ({n},); fix: return one "
                "value per femtocell from f(rng, n)"
            )
    else:
        arr = _as_float_array(value, name, source)
        if arr.ndim == 0:
            arr = np.full(n, arr.item())
        elif arr.shape != (n,):
            raise ValidationError(
                f"{name} has shape {arr.shape}, but {n} femtocells were drawn; fix: give a "
                "scalar or a callable f(rng, n) returning shape (n,)"
            )
    bad = np.isnan(arr) | (arr < 0) | (np.isinf(arr) if not allow_inf else False)
    if bad.any():
        allowed = "≥ 0 (inf = unlimited)" if allow_inf else "finite and ≥ 0"
        raise ValidationError(
            f"{name}: {source} at {describe_rows(np.flatnonzero(bad))} is not {allowed}; "
            f"fix: give values {allowed}"
        )
    return arr


def _as_float_array(value: Any, name: str, source: str) -> np.ndarray:
    """Numbers only: text ("10") and booleans are refused, not converted."""
    fix = "give numbers in the column's unit (not text or booleans)"
    try:
        return as_float_array(value, name, fix=fix)
    except ValidationError as err:
        why = str(err).split("cannot be read as numbers: ", 1)[-1].split("; fix:", 1)[0]
        raise ValidationError(f"{name}: {source} is not numeric ({why}); fix: {fix}") from None
