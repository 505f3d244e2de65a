"""Coverage maps: best server, RSRP, SINR and a new user's rate on a raster of the area.

:func:`coverage_map` treats the centre of every pixel of a regular grid over the study
area as an outdoor user of a copy of the drop's network and builds its links with the
drop's own machinery (:func:`cellopt.radio.link_table`, with the drop's radio model,
candidate count and interference radius; wraparound included). The map is the *median*
map of planning tools: the radio model without its random terms
(:func:`median_model`: no shadowing; 3GPP tiers at the mean received power over the
LOS state), and every cell at its full ``tx_power_dbm``. Four rasters come out
(:data:`COVERAGE_QUANTITIES`):

- ``best_server``: the cell with the largest RSRP (its row in ``network.cells``);
- ``rsrp_dbm``: that cell's RSRP [dBm per resource element];
- ``sinr_db``: the SINR of that link [dB], every cell interfering at full power;
- ``rate_mbps``: the rate a new full-buffer user of weight 1 would get there under a
  solution's prices (:func:`new_user_rate_mbps`), at the cell that gives it most.

:func:`cellopt.study.rasters.write_geotiff` writes one as a GeoTIFF; docs/coverage.md
explains the conventions. The map's grid (its area, pixel size and the pixels inside) is
laid by :mod:`cellopt.coverage_grid`.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyproj

from cellopt.checks import check_bool, check_count, check_real, shown
from cellopt.coverage_grid import MAX_PIXELS_ACROSS, _plan
from cellopt.drop import Drop
from cellopt.errors import ValidationError
from cellopt.linktable import LinkTable
from cellopt.network import TIERS, Network, users_frame
from cellopt.progress import progress_bar, shows
from cellopt.radio import link_table
from cellopt.radio.model import RadioModel
from cellopt.solution import Solution

__all__ = [
    "COVERAGE_QUANTITIES",
    "DEFAULT_MAX_PIXELS",
    "CoverageMap",
    "CoverageQuantity",
    "CoverageSettings",
    "check_coverage",
    "coverage_map",
    "median_model",
    "new_user_rate_mbps",
]

#: Default pixel budget: a 1000 × 1000 raster (4 MB per float32 raster; seconds to a
#: minute of link computation). A larger area is mapped at a coarser resolution.
DEFAULT_MAX_PIXELS = 1_000_000
#: The Earth's circumference [m]: no coverage area is wider, so a ``resolution_m`` below
#: this over :data:`MAX_PIXELS_ACROSS` is too fine for every area (refused by
#: :class:`CoverageSettings`, when a scenario file is loaded).
EARTH_CIRCUMFERENCE_M = 40_075_017.0


@dataclasses.dataclass(frozen=True)
class CoverageQuantity:
    """One raster of a :class:`CoverageMap`.

    Attributes
    ----------
    name : str
        The field of :class:`CoverageMap` (and the key of the GeoTIFF file names).
    unit : str
    meaning : str
        What a pixel's value is.
    dtype : str
        numpy dtype of the raster.
    nodata : float
        The value of pixels outside the area (−1 for the cell rows, NaN for the rest).
    """

    name: str
    unit: str
    meaning: str
    dtype: str
    nodata: float


#: The rasters of a :class:`CoverageMap`, by name.
COVERAGE_QUANTITIES: dict[str, CoverageQuantity] = {q.name: q for q in (
    CoverageQuantity("best_server", "cell row", "the cell with the largest RSRP at the pixel: its "
                     "row (0-based) in the network's cells table, in the network's cell order "
                     "(CoverageMap.cell_ids gives its cell_id); -1 outside the area",
                     "int32", -1),
    CoverageQuantity("rsrp_dbm", "dBm", "RSRP of the best server at the pixel (per resource "
                     "element, every cell at full tx_power_dbm, median radio model: no "
                     "shadowing, 3GPP LOS state averaged), outdoor user at the model's height",
                     "float32", math.nan),
    CoverageQuantity("sinr_db", "dB", "SINR of the best-server link at the pixel, every cell "
                     "transmitting at full tx_power_dbm (median radio model)", "float32",
                     math.nan),
    CoverageQuantity("rate_mbps", "Mbit/s", "rate a new full-buffer user of weight 1 would get "
                     "at the pixel at the solution's prices (airtime, backhaul and per-Mbit/s), "
                     "at the cell that gives it most; 0 in outage", "float32", math.nan),
)}


@dataclasses.dataclass(frozen=True)
class CoverageSettings:
    """The ``[coverage]`` section of a scenario file (defaults when it is absent).

    Attributes
    ----------
    enabled : bool
        Write the coverage rasters of each run (True).
    resolution_m : float or None
        Pixel size asked for [m]; None (default):
        :func:`~cellopt.coverage_grid.auto_resolution_m` of the area.
    max_pixels : int
        Pixel budget (:data:`DEFAULT_MAX_PIXELS`): a grid that would need more is made
        coarser (:func:`coverage_map`).
    """

    enabled: bool = True
    resolution_m: float | None = None
    max_pixels: int = DEFAULT_MAX_PIXELS

    def __post_init__(self) -> None:
        object.__setattr__(self, "enabled", check_bool(self.enabled, "enabled"))
        if self.resolution_m is not None:
            object.__setattr__(self, "resolution_m", check_real(self.resolution_m, "resolution_m"))
            finest_m = EARTH_CIRCUMFERENCE_M / MAX_PIXELS_ACROSS
            if self.resolution_m < finest_m:  # refused for every area: when the file is loaded
                raise ValidationError(
                    f"resolution_m={self.resolution_m:.6g} m is too fine for any coverage area: "
                    f"even a map around the Earth ({EARTH_CIRCUMFERENCE_M / 1e3:,.0f} km) would "
                    f"be over {MAX_PIXELS_ACROSS:.0e} pixels across, more than the grid's "
                    "coordinates can tell apart; fix: give resolution_m in metres (usual range "
                    "1 to 10000 m), or leave it out")
        object.__setattr__(self, "max_pixels", check_count(self.max_pixels, "max_pixels"))


@dataclasses.dataclass(frozen=True, eq=False)
class CoverageMap:
    """The rasters of :func:`coverage_map`, on one north-up grid.

    Row 0 is the northern edge and column 0 the western one (as a GeoTIFF stores
    them): pixel (r, c) covers ``x ∈ [xmin + c·res, xmin + (c+1)·res]`` and
    ``y ∈ [ymax − (r+1)·res, ymax − r·res]``, its value is that of its centre.

    Attributes
    ----------
    crs : pyproj.CRS
        The network's projected CRS (metres).
    bounds_m : (float, float, float, float)
        ``xmin, ymin, xmax, ymax`` of the grid, pixel edges [m].
    resolution_m : float
        Pixel size used [m]: `requested_resolution_m`, or a whole multiple of it when the
        grid would have needed more than ``max_pixels`` pixels.
    requested_resolution_m : float
        Pixel size asked for [m].
    best_server : ndarray of int32, shape (n_rows, n_cols)
        The best server's row in ``network.cells``; −1 where there is no data (outside
        the area).
    rsrp_dbm : ndarray of float32, shape (n_rows, n_cols)
        RSRP of the best server [dBm]; NaN where there is no data.
    sinr_db : ndarray of float32, shape (n_rows, n_cols)
        SINR of the best-server link [dB]; NaN where there is no data.
    rate_mbps : ndarray of float32, shape (n_rows, n_cols), or None
        A new user's rate at the solution's prices [Mbit/s] (:func:`new_user_rate_mbps`);
        NaN where there is no data; None without a solution with airtime prices.
    cell_ids : ndarray, shape (n_cells,)
        ``cell_id`` of each row of ``network.cells``: ``cell_ids[best_server]``.
    method : str or None
        The label of the solution the map was made with, whose prices set `rate_mbps`
        (None without a solution).
    """

    crs: pyproj.CRS
    bounds_m: tuple[float, float, float, float]
    resolution_m: float
    requested_resolution_m: float
    best_server: np.ndarray
    rsrp_dbm: np.ndarray
    sinr_db: np.ndarray
    rate_mbps: np.ndarray | None
    cell_ids: np.ndarray
    method: str | None

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_rows, n_cols)``."""
        return self.best_server.shape

    @property
    def coarsened(self) -> bool:
        """Whether the pixel budget made the grid coarser than asked."""
        return self.resolution_m != self.requested_resolution_m

    def centres_m(self) -> tuple[np.ndarray, np.ndarray]:
        """The pixel centres: x of each column, shape (n_cols,), and y of each row, shape
        (n_rows,) (north first) [m]."""
        xmin, _, _, ymax = self.bounds_m
        n_rows, n_cols = self.shape
        return (xmin + (np.arange(n_cols) + 0.5) * self.resolution_m,
                ymax - (np.arange(n_rows) + 0.5) * self.resolution_m)

    def quantity(self, name: str) -> np.ndarray:
        """The raster `name` of :data:`COVERAGE_QUANTITIES`.

        Raises
        ------
        ValidationError
            For an unknown name, or ``"rate_mbps"`` of a map without one.
        """
        if name not in COVERAGE_QUANTITIES:
            raise ValidationError(f"quantity={shown(name)}; fix: use one of "
                                  f"{list(COVERAGE_QUANTITIES)}")
        values = getattr(self, name)
        if values is None:
            raise ValidationError(f"this coverage map has no {name} (made without a solution "
                                  "with airtime prices); fix: pass the solution to coverage_map, "
                                  "or ask for best_server, rsrp_dbm or sinr_db")
        return values


def median_model(model: RadioModel) -> RadioModel:
    """`model` without its random per-link terms: the model of a median coverage map.

    Distance-law tiers lose their log-normal shadowing (``shadowing_std_db`` 0 for every
    tier); a model with a ``median()`` method (:class:`~cellopt.radio.Propagation`) is
    replaced by it: :class:`~cellopt.radio.ThreeGPP` tiers get ``shadowing=False`` and,
    where the LOS state is drawn (``los="random"``), ``los="expected"``: the loss of the
    mean received power over the state (a tier forced to LOS or NLOS stays so);
    :class:`~cellopt.radio.RasterPathLoss` loses the shadowing it was asked to add.

    Parameters
    ----------
    model : RadioModel

    Returns
    -------
    RadioModel
        A copy; `model` is not changed.
    """
    if not isinstance(model, RadioModel):
        raise ValidationError(f"model is a {type(model).__name__}; fix: give a RadioModel")
    pathloss = {t: (m.median() if getattr(m, "median", None) is not None else m)
                for t, m in model.pathloss.items()}
    std = model.shadowing_std_db
    quiet = dict.fromkeys(std, 0.0) if isinstance(std, Mapping) else 0.0
    return dataclasses.replace(model, pathloss=pathloss, shadowing_std_db=quiet)


def new_user_rate_mbps(rate_mbps: np.ndarray, price: np.ndarray, per_mbps: np.ndarray | float,
                       alpha: float, weight: float = 1.0) -> np.ndarray:
    """The rate a new user takes from one cell at given prices: its best response.

    The user maximizes ``w U_α(Σ_k R_k x_k) − Σ_k (μ_k + π R_k) x_k`` over its airtime
    shares ``x_k ∈ [0, 1]`` of the cell's resources (:func:`cellopt.problem.utility`).
    It buys the resources in order of their price per Mbit/s ``q_k = μ_k / R_k + π``,
    each until its marginal utility ``w r^(−α)`` falls to ``q_k``: the rate is
    ``Σ_m clip(u_m − S_(m−1), 0, R_(m))`` in that order, with ``u_m = (w / q_m)^(1/α)``
    and ``S`` the cumulative rates. With one resource of full-band rate r, price μ and
    π = 0 this is ``r · min(1, (w r^(1−α) / μ)^(1/α))`` (α = 1: ``r · min(1, w/μ)``);
    μ = 0 gives r; α = 0 takes a resource whole when ``w > q_k``, else not at all.

    Parameters
    ----------
    rate_mbps : ndarray, shape (..., K)
        Peak rate R_k of the link on each resource [Mbit/s] (0: no link).
    price : ndarray, shape (..., K)
        Airtime price μ_k of each resource of the cell [utility per unit airtime], ≥ 0.
    per_mbps : float or ndarray, shape (...)
        Price per Mbit/s π carried by the cell (backhaul price ν_j plus c_j), ≥ 0.
    alpha : float
        Fairness α ≥ 0 of the utility.
    weight : float
        The user's weight w > 0.

    Returns
    -------
    ndarray, shape (...)
        The rate [Mbit/s].
    """
    r = np.asarray(rate_mbps, float)
    mu = np.asarray(price, float)
    extra = np.asarray(per_mbps, float)[..., None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = np.where(r > 0, mu / np.where(r > 0, r, 1.0) + extra, np.inf)
        order = np.argsort(q, axis=-1, kind="stable")
        r = np.take_along_axis(r, order, axis=-1)
        q = np.take_along_axis(q, order, axis=-1)
        if alpha == 0:
            u = np.where(weight > q, np.inf, 0.0)
        else:
            u = np.where(q > 0, (weight / q) ** (1.0 / alpha), np.inf)
        before = np.cumsum(r, axis=-1) - r
        return np.clip(u - before, 0.0, r).sum(axis=-1)


def _prices(drop: Drop, solution: Solution | None) -> tuple[np.ndarray, np.ndarray, float] | None:
    """The prices a new user faces on the map's links, or None without airtime prices.

    Returns the airtime price of each cell and resource of the drop's link table
    (n_cells, K), the price per Mbit/s of each cell (n_cells,) and α. A power solution's
    prices are per pattern: each cell's mean over its patterns per unit of the whole band
    (the ``airtime_price`` of :meth:`Drop.cell_frame`), shared over the resources by
    width.
    """
    if solution is None:
        return None
    if not isinstance(solution, Solution):
        raise ValidationError(f"solution is a {type(solution).__name__}; fix: give a Solution of "
                              "drop.problem (drop.solve(...)), or None")
    drop.check_solution(solution)
    prices = solution.prices if isinstance(solution.prices, Mapping) else {}
    mu = prices.get("airtime")
    if mu is None or np.size(mu) == 0:
        return None
    problem = drop.problem if solution.power is None else solution.power.master
    n_cells = drop.network.n_cells
    mu = np.asarray(mu, float)
    fix = "pass a solution of this drop (drop.solve(...), or the scenario's runs of it)"
    if mu.shape != (n_cells, problem.n_resources) or len(solution.x) != problem.n_links:
        raise ValidationError(f"solution has {len(solution.x)} links and airtime prices of shape "
                              f"{mu.shape}, the drop's problem {problem.n_links} links, "
                              f"{n_cells} cells and {problem.n_resources} resource(s); fix: {fix}")
    nu = prices.get("backhaul")
    nu = np.zeros(n_cells) if nu is None else np.asarray(nu, float)
    if nu.shape != (n_cells,):
        raise ValidationError(f"solution's backhaul prices have shape {nu.shape}, not "
                              f"({n_cells},); fix: {fix}")
    if not (np.isfinite(mu).all() and np.isfinite(nu).all()):
        raise ValidationError(f"solution ({solution.method}) has NaN or infinite prices; fix: "
                              "map a solution that finished (solution.success)")
    mu, nu = np.maximum(mu, 0.0), np.maximum(nu, 0.0)
    band = drop.links.resource_mhz / drop.links.resource_mhz.sum()
    if solution.power is not None:  # per unit of the whole band, spread over the resources
        mu = mu.mean(axis=1)[:, None] * band[None, :]
    return mu, problem.price_per_mbps + nu, float(problem.alpha)


def coverage_map(drop: Drop, solution: Solution | None = None, *,
                 resolution_m: float | None = None,
                 max_pixels: int = DEFAULT_MAX_PIXELS, method: str | None = None,
                 progress: bool | None = None) -> CoverageMap:
    """The median coverage maps of a drop, and a new user's rate under a solution.

    Every pixel centre inside the area (:func:`~cellopt.coverage_grid.coverage_area`: the
    study area, the region, or the cells' bounding box) is an outdoor user at the radio
    model's user height, in a copy of the drop's network; its links come from
    :func:`cellopt.radio.link_table` with the drop's candidate count, interference
    radius (and far field) and the :func:`median_model` of the drop's radio model, every
    cell at its full ``tx_power_dbm`` (power patterns of a power solution are not
    reflected) and interfering; the drop's RSRP window (``window_db``) is not applied.
    Pixels are taken in blocks of :data:`~cellopt.coverage_grid.BLOCK_LINKS` links; the
    result does not depend on the blocks, and the same input gives the same rasters.

    Parameters
    ----------
    drop : Drop
        A drop whose link table records its radio settings (built by
        :meth:`cellopt.study.Scenario.build` or from :func:`cellopt.radio.link_table`).
    solution : Solution, optional
        A solution of ``drop.problem`` (or a power solution of it): its prices set
        `rate_mbps` (:func:`new_user_rate_mbps` with weight 1 and the problem's α, at
        the candidate cell that gives the most). Per resource exactly for fixed
        resources; for power patterns, each cell's mean price per unit of the whole
        band (the cells table's ``airtime_price``). A baseline's prices are the in-cell
        prices of its association. None: no rate raster.
    resolution_m : float, optional
        Pixel size [m]; default :func:`~cellopt.coverage_grid.auto_resolution_m` of the
        area (:data:`~cellopt.coverage_grid.DEFAULT_RESOLUTION_M`, finer for an area under
        1.25 km across), or the finest grid of the radio model's predictions
        (:class:`~cellopt.radio.RasterPathLoss`) where that is finer.
    max_pixels : int
        Pixel budget (default :data:`DEFAULT_MAX_PIXELS`): if the grid at `resolution_m`
        would have more pixels, the smallest whole multiple of it that fits is used
        (the map records both).
    method : str, optional
        The label of `solution` to record (default ``solution.method``).
    progress : bool or None
        Show a progress bar of the pixels done (stderr).
        None (default): when standard error is a terminal (:mod:`cellopt.progress`).

    Returns
    -------
    CoverageMap

    Raises
    ------
    ValidationError
        Bad arguments (naming the argument and the fix), a drop whose link table records
        no radio settings, a solution of another problem, or a grid that gives no map
        (:func:`check_coverage`), before any pixel is computed.
    ResourceLimitError
        If the rasters would not fit in memory.
    """
    if not isinstance(drop, Drop):
        raise ValidationError(f"drop is a {type(drop).__name__}; fix: give a cellopt.Drop "
                              "(Scenario.build(...) or Drop.from_network(...))")
    if resolution_m is not None:
        resolution_m = check_real(resolution_m, "resolution_m")
    max_pixels = check_count(max_pixels, "max_pixels")
    if method is not None and not isinstance(method, str):
        raise ValidationError(f"method={shown(method)} is a {type(method).__name__}; fix: give "
                              "the solution's label as a string, or None")
    progress = shows(progress)
    prices = _prices(drop, solution)
    label = method if method is not None or solution is None else solution.method
    model, seed, n_candidates = drop.links.radio_settings("cellopt.coverage.coverage_map")
    network = drop.network
    plan = _plan(drop, resolution_m, max_pixels)
    bounds, res, inside, block = plan.bounds_m, plan.resolution_m, plan.inside, plan.block
    n_rows, n_cols = plan.shape

    best = np.full((n_rows, n_cols), -1, np.int32)
    rsrp = np.full((n_rows, n_cols), np.nan, np.float32)
    sinr = np.full((n_rows, n_cols), np.nan, np.float32)
    rate = None if prices is None else np.full((n_rows, n_cols), np.nan, np.float32)
    median = median_model(model)
    _warn_pixel_distances(network, median, inside, bounds, res, n_cols)
    options = {"n_candidates": n_candidates, "model": median, "rng": seed,
               "interference_radius_m": drop.links.radius_m,
               "far_field": _has_far_field(drop.links)}
    west, _, _, north = bounds
    bar = progress_bar(len(inside), progress=progress, desc="coverage", unit="pixel")
    with bar:
        for start in range(0, len(inside), block):  # a loop over blocks of pixels
            pixels = inside[start:start + block]
            row, col = np.divmod(pixels, n_cols)
            users = users_frame(west + (col + 0.5) * res, north - (row + 0.5) * res,
                                crs=network.crs)
            with warnings.catch_warnings():  # about the network's columns: said by its drop
                warnings.simplefilter("ignore", UserWarning)
                links = link_table(network.replace(users=users), **options)
            cell, best_rsrp, best_sinr, new_rate = _pixel_values(links, prices)
            best.reshape(-1)[pixels] = cell
            rsrp.reshape(-1)[pixels] = best_rsrp
            sinr.reshape(-1)[pixels] = best_sinr
            if rate is not None:
                rate.reshape(-1)[pixels] = new_rate
            bar.update(len(pixels))
    return CoverageMap(crs=pyproj.CRS(network.crs), bounds_m=bounds, resolution_m=res,
                       requested_resolution_m=plan.requested_m, best_server=best, rsrp_dbm=rsrp,
                       sinr_db=sinr, rate_mbps=rate,
                       cell_ids=network.cells["cell_id"].to_numpy(), method=label)


def _warn_pixel_distances(network: Network, model: RadioModel, pixels: np.ndarray,
                          bounds: tuple[float, float, float, float], res: float,
                          n_cols: int) -> None:
    """Warn, once per model, where pixel centres are beyond the distance range of a tier's
    3GPP scenario (:meth:`~cellopt.radio.ThreeGPP.warn_distances`): the link tables of the
    pixel blocks are quiet, and the map's area reaches beyond the users."""
    row, col = np.divmod(pixels, n_cols)
    xy = np.column_stack([bounds[0] + (col + 0.5) * res, bounds[3] - (row + 0.5) * res])
    tier = network.cell_arrays()["tier"]
    by_model: dict[int, tuple[Any, list[int]]] = {}
    for code, name in enumerate(TIERS):
        propagation = model.pathloss.get(name)
        if hasattr(propagation, "warn_distances"):
            by_model.setdefault(id(propagation), (propagation, []))[1].append(code)
    for propagation, codes in by_model.values():
        cells = np.flatnonzero(np.isin(tier, codes))
        if len(cells):
            propagation.warn_distances(network, cells, model, xy,
                                       "pixel–cell pairs of the coverage map", stacklevel=3)


def check_coverage(drop: Drop, *, resolution_m: float | None = None,
                   max_pixels: int = DEFAULT_MAX_PIXELS) -> tuple[float, int, int]:
    """Refuse, before anything is computed, settings of :func:`coverage_map` that give no map.

    The checks :func:`coverage_map` makes before its first pixel, for a caller that wants
    them earlier (``cellopt run`` makes them before it solves the drop): an area with no
    extent (a study area or region that is a line or a point); a `resolution_m` so fine
    that the grid's coordinates cannot tell its pixels apart (more than
    :data:`MAX_PIXELS_ACROSS` across); a pixel larger than the area's shorter side; a
    grid none of whose pixel centres falls inside the area (every pixel would be
    nodata); and rasters that would not fit in memory.

    Parameters
    ----------
    drop : Drop
        As for :func:`coverage_map`.
    resolution_m : float, optional
        As for :func:`coverage_map`.
    max_pixels : int
        As for :func:`coverage_map`.

    Returns
    -------
    resolution_m : float
        The pixel size the map will have [m].
    n_rows, n_cols : int
        Its shape.

    Raises
    ------
    ValidationError
        Naming the argument (``resolution_m`` or ``max_pixels``), the area's size and the fix.
    ResourceLimitError
        If the rasters would not fit in memory, with the estimate.
    """
    if not isinstance(drop, Drop):
        raise ValidationError(f"drop is a {type(drop).__name__}; fix: give a cellopt.Drop "
                              "(Scenario.build(...) or Drop.from_network(...))")
    if resolution_m is not None:
        resolution_m = check_real(resolution_m, "resolution_m")
    plan = _plan(drop, resolution_m, check_count(max_pixels, "max_pixels"))
    return (plan.resolution_m, *plan.shape)


def _has_far_field(links: LinkTable) -> bool:
    """Whether the drop's table was built with the far field (it records no flag: a table
    with a radius whose far-field shifts are all 0 was built without it)."""
    if links.radius_m is None or links.far_field_db is None or len(links.far_field_db) == 0:
        return True
    return bool(np.any(links.far_field_db != 0))


def _pixel_values(links: LinkTable, prices: tuple[np.ndarray, np.ndarray, float] | None
                  ) -> tuple[np.ndarray, ...]:
    """Best server, its RSRP and SINR and a new user's rate of every user of `links`.

    The table's rows come in groups of its K resources per (user, cell), as
    :func:`~cellopt.radio.link_table` makes them (no RSRP window).
    """
    k = links.n_resources
    resource = links.resource.reshape(-1, k)
    if len(links) % k or not (resource == np.arange(k)).all():
        raise ValidationError("the coverage links do not come K resources per cell; fix: report "
                              "this (link_table's row order changed)")
    user, cell = links.user[::k], links.cell[::k]
    pair_rsrp = links.rsrp_dbm[::k]
    band = links.resource_mhz / links.resource_mhz.sum()
    with np.errstate(divide="ignore"):  # a cell that is off: −inf
        pair_sinr = 10.0 * np.log10((10.0 ** (links.sinr_db.reshape(-1, k) / 10.0)) @ band)
    # strongest first, ties to the lower cell row
    order = np.lexsort((cell, -pair_rsrp, user))
    first = order[np.r_[True, user[order][1:] != user[order][:-1]]] if len(order) else order
    n = links.n_users
    best = np.full(n, -1, np.int32)
    rsrp = np.full(n, np.nan)
    sinr = np.full(n, np.nan)
    best[user[first]] = cell[first]
    rsrp[user[first]] = pair_rsrp[first]
    sinr[user[first]] = pair_sinr[first]
    rate = None
    if prices is not None:
        mu, per_mbps, alpha = prices
        pair_rate = new_user_rate_mbps(links.rate_mbps.reshape(-1, k), mu[cell], per_mbps[cell],
                                       alpha)
        rate = np.full(n, np.nan)
        starts = np.flatnonzero(np.r_[True, user[1:] != user[:-1]]) if len(user) else \
            np.empty(0, np.int64)
        if len(starts):
            rate[user[starts]] = np.maximum.reduceat(pair_rate, starts)
    return best, rsrp, sinr, rate
