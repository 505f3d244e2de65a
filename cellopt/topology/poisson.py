"""Random multi-tier layouts: each tier an independent Poisson point process in a square."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import shapely

from cellopt.checks import check_number, check_real, is_integer
from cellopt.errors import ValidationError, check_memory
from cellopt.network import CELL_BYTES, OWNERS, TIERS, Network, cells_frame
from cellopt.topology.hexgrid import SYNTHETIC_ORIGIN_M, layout_crs
from cellopt.topology.sampling import as_rng

__all__ = ["TIER_DEFAULTS", "TIER_KEYS", "poisson_layout", "poisson_layout_nbytes"]

#: Defaults of the optional keys of each tier table: transmit power [dBm] and antenna
#: height [m] (TR 36.814 macro, pico and indoor femto values), and omni antennas of the
#: owner's operator. The boresight gain defaults to 0 dBi (omni), or
#: :data:`SECTOR_GAIN_DBI` for a three-sector macro tier.
TIER_DEFAULTS: dict[str, dict[str, Any]] = {
    "macro": {"tx_power_dbm": 46.0, "height_m": 25.0},
    "pico": {"tx_power_dbm": 30.0, "height_m": 10.0},
    "femto": {"tx_power_dbm": 20.0, "height_m": 1.5},
}
#: Keys of a tier table; only ``density_per_km2`` is required.
TIER_KEYS = ("density_per_km2", "tx_power_dbm", "antenna_gain_dbi", "height_m", "sectors", "owner")
#: Boresight gain of a three-sector macro cell [dBi] (TR 36.814, as :func:`hex_grid`).
SECTOR_GAIN_DBI = 14.0
#: Boresights of the three sectors of a site [degrees clockwise from north], as :func:`hex_grid`.
SECTOR_AZIMUTHS_DEG = (30.0, 150.0, 270.0)
#: Memory per cell being drawn beyond its cell table row [bytes]: its site's position,
#: the repeated position, site id, azimuth and tier label, and the concatenation of tiers.
POISSON_DRAW_BYTES = 200

_FIX = "use lower density_per_km2 values or a smaller side_m"


def poisson_layout_nbytes(n_cells_mean: float) -> float:
    """Estimated peak memory of :func:`poisson_layout` [bytes], before anything is drawn.

    Parameters
    ----------
    n_cells_mean : float
        Expected number of cells, sectors counted: ``Σ density_per_km2 × sectors × area_km2``
        over the tiers.

    Returns
    -------
    float
        ``n_cells_mean × (CELL_BYTES + POISSON_DRAW_BYTES)`` [bytes]; inf for an infinite
        count.
    """
    return float(n_cells_mean) * (CELL_BYTES + POISSON_DRAW_BYTES)


def poisson_layout(
    tiers: Mapping[str, Mapping[str, Any]],
    *,
    side_m: float = 2000.0,
    wraparound: bool = True,
    bandwidth_mhz: float = 10.0,
    origin_lonlat: tuple[float, float] | None = None,
    crs: str | None = None,
    rng: np.random.Generator | int | None = None,
) -> Network:
    """A random multi-tier layout: each tier an independent homogeneous Poisson point process.

    The region is a square of side `side_m` centred on the false origin of synthetic
    layouts (the centre site of :func:`~cellopt.topology.hex_grid`), in the projected
    CRS `crs`. The sites of each tier are a Poisson point process in it: their number is
    ``Poisson(density_per_km2 × side_m² / 1e6)`` and, given the number, they are
    independent and uniform in the square. A site carries one omni cell or three sectors.

    Parameters
    ----------
    tiers : mapping tier -> mapping
        One table per tier of :data:`cellopt.network.TIERS` (``'macro'``, ``'pico'``,
        ``'femto'``; leave a tier out for none), with keys:

        - ``density_per_km2`` (required, finite and > 0): mean sites per km²;
        - ``tx_power_dbm``: transmit power over the band [dBm] (46 macro, 30 pico,
          20 femto);
        - ``antenna_gain_dbi``: boresight gain [dBi] (0, omni; 14 for a macro tier
          with ``sectors = 3``);
        - ``height_m``: antenna height [m] (25 macro, 10 pico, 1.5 femto);
        - ``sectors``: 1 (omni, default) or 3 (boresights 30°, 150°, 270°, as
          :func:`~cellopt.topology.hex_grid`);
        - ``owner``: ``'operator'`` (default) or ``'third_party'``.
    side_m : float
        Side of the square region [m], finite and > 0 (2000 m: 4 km²).
    wraparound : bool
        Wrap the square into a torus: store the 9 translations ``(0, 0)`` (first),
        ``(±side_m, 0)``, ``(0, ±side_m)``, ``(±side_m, ±side_m)``, so that the radio
        model measures each distance to the nearest image of each cell (no edge effect).
    bandwidth_mhz : float
        Bandwidth [MHz] (10 MHz), one resource.
    origin_lonlat, crs : optional
        Where the layout lies: its centre at (lon, lat) [degrees] (default Munich), or
        a projected CRS given instead, as for :func:`~cellopt.topology.hex_grid`.
    rng : numpy.random.Generator or int, optional
        The one generator of every draw. Tiers are drawn in the order of
        :data:`~cellopt.network.TIERS` (macro, pico, femto), each its count and then
        its positions, whatever the order of `tiers`: one seed gives one layout.

    Returns
    -------
    Network
        ``n_sites × sectors`` cells per tier, in the order of
        :data:`~cellopt.network.TIERS`; ``cell_id`` ``0..n_cells-1``; ``site_id``
        distinct across the whole network (the sectors of one site share theirs, and so
        their shadowing); no users; ``region`` the square polygon; ``wrap_shifts_m`` of
        shape (9, 2) with wraparound, else None.

    Raises
    ------
    ValidationError
        An unknown tier or key, a missing, non-finite or non-positive
        ``density_per_km2``, ``sectors`` other than 1 or 3, an unknown owner, a
        parameter outside its possible range (:data:`cellopt.parameters.LIMITS`; values
        outside the usual range warn), a `side_m` that is not finite and > 0, or a draw
        without any cell (raise a density or `side_m`). Messages name the tier and key.
    ResourceLimitError
        When the expected (then the drawn) number of cells would not fit in memory
        (:func:`poisson_layout_nbytes`), before anything is drawn.

    Examples
    --------
    >>> net = poisson_layout({"macro": {"density_per_km2": 4.0},
    ...                       "pico": {"density_per_km2": 20.0}}, rng=1)
    >>> sorted(set(net.cells["tier"])) == ["macro", "pico"]
    True
    """
    gen = as_rng(rng)
    side_m = _check_side(side_m)
    if not isinstance(wraparound, (bool, np.bool_)):
        raise ValidationError(f"wraparound={wraparound!r}; fix: give True or False")
    bandwidth_mhz = check_real(bandwidth_mhz, "bandwidth_mhz")
    crs = layout_crs(crs, origin_lonlat)
    tables = _check_tiers(tiers)
    area_km2 = side_m * side_m / 1e6
    mean_cells = sum(t["density_per_km2"] * t["sectors"] for t in tables.values()) * area_km2
    what = f"poisson_layout: about {mean_cells:.3g} cells over {area_km2:.3g} km²"
    # on the mean first: a huge mean would also overflow the Poisson draws
    check_memory(poisson_layout_nbytes(mean_cells), what, _FIX)

    lower = SYNTHETIC_ORIGIN_M - side_m / 2
    order = [t for t in TIERS if t in tables]
    counts = np.zeros(len(order), np.int64)
    positions = []
    for k, tier in enumerate(order):  # at most three tiers, each drawn in one vectorized call
        counts[k] = gen.poisson(tables[tier]["density_per_km2"] * area_km2)
        positions.append(gen.uniform(lower, lower + side_m, size=(counts[k], 2)))
    sectors = np.array([tables[t]["sectors"] for t in order])
    n_cells = int(counts @ sectors)
    check_memory(poisson_layout_nbytes(n_cells), what, _FIX)
    if n_cells == 0:
        raise ValidationError(
            f"poisson_layout drew no cell (about {mean_cells:.3g} expected over {area_km2:.3g} "
            "km²); fix: raise a tier's density_per_km2 or side_m, or try another rng seed")

    per_site = np.repeat(sectors, counts)  # sectors of each site, shape (n_sites,)
    site_xy = np.concatenate(positions)
    xy = np.repeat(site_xy, per_site, axis=0)
    # each cell's position among the sectors of its site: 0 for omni sites
    first = np.repeat(np.cumsum(per_site) - per_site, per_site)
    index = np.arange(n_cells) - first
    azimuth = np.where(np.repeat(per_site, per_site) == 3,
                       np.asarray(SECTOR_AZIMUTHS_DEG)[np.minimum(index, 2)], np.nan)

    def column(key: str) -> np.ndarray:
        return np.repeat([tables[t][key] for t in order], counts * sectors)

    cells = cells_frame(
        xy[:, 0], xy[:, 1], crs=crs,
        tier=column("tier"),
        site_id=np.repeat(np.arange(len(site_xy)), per_site),
        tx_power_dbm=column("tx_power_dbm").astype(float),
        antenna_gain_dbi=column("antenna_gain_dbi").astype(float),
        height_m=column("height_m").astype(float),
        azimuth_deg=azimuth,
        owner=column("owner"),
    )
    return square_network(cells, lower, side_m, wraparound, bandwidth_mhz)


def square_network(cells: Any, lower: np.ndarray, side_m: float, wraparound: bool,
                   bandwidth_mhz: float) -> Network:
    """The network of `cells` in the square of side `side_m` [m] from corner `lower` (2,),
    that square its region, and with `wraparound` a torus: the 9 shifts by 0 and
    ``± side_m`` along each axis, (0, 0) first."""
    x0, y0 = lower
    region = shapely.box(x0, y0, x0 + side_m, y0 + side_m)
    shifts = None
    if wraparound:
        steps = np.array([0.0, -side_m, side_m])
        sx, sy = np.meshgrid(steps, steps, indexing="ij")
        shifts = np.column_stack([sx.ravel(), sy.ravel()])
    return Network(cells=cells, bandwidth_mhz=bandwidth_mhz, region=region,
                   wrap_shifts_m=shifts).validate()


def _check_side(side_m: Any) -> float:
    return check_number(side_m, "side_m", low=0.0, low_open=True, fix="give the side of the square "
                        "in metres, finite and > 0 (2000 m: a 4 km² square)")


def _check_tiers(tiers: Any) -> dict[str, dict[str, Any]]:
    """Each tier's table, checked and completed with the defaults."""
    if not isinstance(tiers, Mapping):
        raise ValidationError(f"tiers is a {type(tiers).__name__}; fix: give a mapping tier -> "
                              "table, e.g. {'macro': {'density_per_km2': 4.0}}")
    unknown = [t for t in tiers if t not in TIERS]
    if unknown:
        raise ValidationError(f"tiers has unknown tiers {unknown}; fix: use tiers from {list(TIERS)}")
    if not tiers:
        raise ValidationError("tiers is empty; fix: give at least one tier, e.g. "
                              "{'macro': {'density_per_km2': 4.0}}")
    out = {}
    for tier, table in tiers.items():  # at most three tiers
        name = f"tiers[{tier!r}]"
        if not isinstance(table, Mapping):
            raise ValidationError(f"{name} is a {type(table).__name__}; fix: give a mapping of "
                                  f"keys from {list(TIER_KEYS)}, e.g. {{'density_per_km2': 4.0}}")
        bad = [k for k in table if k not in TIER_KEYS]
        if bad:
            raise ValidationError(f"{name} has unknown keys {bad}; fix: use keys from "
                                  f"{list(TIER_KEYS)}")
        if "density_per_km2" not in table:
            raise ValidationError(f"{name} has no density_per_km2; fix: give the mean number of "
                                  "sites per km² (> 0), or leave the tier out")
        density = check_number(table["density_per_km2"], f"{name}.density_per_km2", low=0.0,
                               low_open=True, fix="give a finite density > 0 sites per km², or "
                               "leave the tier out")
        sectors = table.get("sectors", 1)
        if not is_integer(sectors) or sectors not in (1, 3):
            raise ValidationError(f"{name}.sectors={sectors!r}; fix: use 1 (omni) or 3 (sectors "
                                  "at 30°, 150°, 270°)")
        owner = table.get("owner", "operator")
        if owner not in OWNERS:
            raise ValidationError(f"{name}.owner={owner!r}; fix: use one of {list(OWNERS)}")
        gain = SECTOR_GAIN_DBI if tier == "macro" and sectors == 3 else 0.0
        values = {**TIER_DEFAULTS[tier], "antenna_gain_dbi": gain, **table}
        checked: dict[str, Any] = {"sectors": int(sectors), "owner": owner, "tier": tier,
                                   "density_per_km2": float(density)}
        for key in ("tx_power_dbm", "antenna_gain_dbi", "height_m"):
            # warnings point at the caller of poisson_layout
            checked[key] = check_real(values[key], f"{name}.{key}", key, stacklevel=4, tier=tier)
        out[tier] = checked
    return out
