"""Build the sparse link table: candidate cells per user, SINR per resource, peak rates."""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy.spatial import cKDTree

from cellopt.checks import check_bool, check_count, check_number, check_real
from cellopt.errors import ValidationError, check_memory, describe_rows
from cellopt.linktable import LinkTable
from cellopt.network import Network
from cellopt.parameters import LIMITS
from cellopt.progress import progress_bar, shows
from cellopt.radio.far_field import FarField, auto_radius_m, cell_extent_m
from cellopt.radio.model import CouplingGains, RadioModel, thermal_noise_dbm

__all__ = ["NearbyCells", "coupling_db", "link_table", "link_table_nbytes", "resource_power_dbm",
           "shadowing_seed"]

#: Elements (users × cells) of one block; a few arrays of this size are alive per worker.
BLOCK_ELEMENTS = 1 << 20
#: Peak memory per link of the finished table [bytes]: six 8-byte columns, the blocks'
#: parts they are concatenated from and the temporaries of the rate (measured: ~115).
LINK_BYTES = 160
#: Memory per user–cell pair of a block being computed [bytes]: about twenty float64
#: arrays of shape (block users, cells) (offsets, distances, gains, shadowing, walls).
PAIR_BYTES = 160
#: Memory per user of the coupling's per-user arrays [bytes] (position, indoor flag).
USER_ARRAY_BYTES = 64
#: Users per chunk with an interference radius: a chunk's users are counted, ordered by
#: how many cells are near them and cut into blocks of about BLOCK_ELEMENTS pairs.
CHUNK_USERS = 1 << 15
#: With a radius, every user sees at least this many cells exactly (or n_candidates, if
#: more): with 8–10 dB shadowing a user's strongest cell is among its 32 nearest but
#: often not among its 8 nearest (a rural user with no cell within the radius).
MIN_NEARBY_CELLS = 32


def shadowing_seed(rng: np.random.Generator | int | None) -> int:
    """The integer that keys shadowing: an int seed as it is, or one drawn from a Generator.

    Raises
    ------
    ValidationError
        A seed that is negative, ≥ 2**64, a boolean, or not a seed at all.
    """
    if isinstance(rng, (bool, np.bool_)):
        raise ValidationError(f"rng={rng!r} is a boolean; fix: give an int seed ≥ 0 or a "
                              "numpy.random.Generator")
    if isinstance(rng, (int, np.integer)):
        if not 0 <= rng < 2**64:
            raise ValidationError(f"rng={rng}; fix: give a seed ≥ 0 and < 2**64")
        return int(rng)
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise ValidationError(f"rng={rng!r} is a {type(rng).__name__}; fix: give an int seed ≥ 0, "
                              "a numpy.random.Generator or None")
    return int(np.random.default_rng(rng).integers(0, 2**63))


def link_table_nbytes(
    n_users: int,
    n_cells: int,
    n_resources: int = 1,
    n_candidates: int = 8,
    n_images: int = 1,
    workers: int | None = None,
    *,
    nearby: bool = False,
) -> float:
    """Estimated peak memory of :func:`link_table` [bytes], before anything is allocated.

    ``n_users × min(n_candidates, n_cells) × n_resources`` links of :data:`LINK_BYTES`
    each, plus the blocks being computed at once (one per worker) of about
    :data:`BLOCK_ELEMENTS` / `n_images` user–cell pairs (at least one user against every
    cell) of :data:`PAIR_BYTES` each.

    Parameters
    ----------
    n_users, n_cells, n_resources : int
        Sizes of the network.
    n_candidates : int
        Candidate cells per user.
    n_images : int
        Wraparound images (1 without wraparound).
    workers : int, optional
        Threads; default the number of CPUs.
    nearby : bool
        With an interference radius: blocks of :data:`BLOCK_ELEMENTS` pairs whatever the
        number of cells, and chunks of :data:`CHUNK_USERS` users' links.

    Returns
    -------
    float
        Bytes (a float: counts may be far beyond what an int64 array could index).
    """
    nearby = check_bool(nearby, "nearby")
    n_users, n_cells = int(n_users), max(int(n_cells), 1)
    n_keep = min(int(n_candidates), n_cells)
    links = float(n_users) * n_keep * n_resources
    block_users = min(n_users, max(1, BLOCK_ELEMENTS // (n_cells * n_images)))
    n_blocks = math.ceil(n_users / block_users) if n_users else 0
    alive = min(workers or os.cpu_count() or 1, n_blocks)
    per_block = block_users * (n_cells * PAIR_BYTES + n_keep * n_resources * LINK_BYTES)
    if nearby:
        alive = min(workers or os.cpu_count() or 1, max(1, math.ceil(n_users / CHUNK_USERS)))
        per_block = BLOCK_ELEMENTS * PAIR_BYTES + min(n_users, CHUNK_USERS) * n_keep * n_resources \
            * LINK_BYTES
    return links * LINK_BYTES + float(alive) * per_block + float(n_users) * USER_ARRAY_BYTES


def resource_power_dbm(network: Network, power_dbm: np.ndarray | None = None) -> np.ndarray:
    """Transmit power of every cell on every resource [dBm], shape (n_cells, K).

    Parameters
    ----------
    network : Network
    power_dbm : ndarray, shape (n_cells,) or (n_cells, K), optional
        Shape (n_cells, K): the power on each resource as given (−inf = off). Shape
        (n_cells,): a total power spread over the band in proportion to resource width.
        Default: each cell's ``tx_power_dbm`` spread over the band.
    """
    share_db = 10.0 * np.log10(network.resource_mhz / network.bandwidth_mhz)
    if power_dbm is None:
        power_dbm = network.cells["tx_power_dbm"].to_numpy(float)
    try:
        raw = np.asarray(power_dbm)
        if raw.dtype.kind not in "iuf":  # text ("46") or booleans: not converted
            raise TypeError
        p = raw.astype(float)
    except (TypeError, ValueError):
        raise ValidationError(f"power_dbm is not numeric ({type(power_dbm).__name__}); fix: give "
                              "powers in dBm, -inf for a cell that is off") from None
    if np.isnan(p).any() or (p == np.inf).any():
        raise ValidationError("power_dbm has NaN or +inf entries; fix: give powers in dBm, "
                              "-inf for a cell that is off")
    if p.shape not in ((network.n_cells,), (network.n_cells, network.n_resources)):
        raise ValidationError(f"power_dbm has shape {p.shape}; fix: give shape ({network.n_cells},)"
                              f" or ({network.n_cells}, {network.n_resources})")
    high = LIMITS["tx_power_dbm"].high
    if (p > high).any():
        cells = np.unique(np.nonzero(p > high)[0])
        raise ValidationError(f"power_dbm of cells {describe_rows(cells)} is above {high:g} dBm, "
                              "beyond any transmitter (and 10^(p/10) would overflow); fix: give "
                              "powers in dBm, not mW")
    if p.ndim == 1:
        return p[:, None] + share_db[None, :]
    return p


def coupling_db(
    network: Network,
    *,
    model: RadioModel | None = None,
    rng: np.random.Generator | int | None = None,
    users: np.ndarray | None = None,
) -> np.ndarray:
    """Dense coupling gains [dB] between users and every cell (small networks, tests, plots).

    Parameters
    ----------
    network : Network
    model : RadioModel, optional
    rng : int or numpy.random.Generator, optional
        Shadowing seed; the same seed gives the same shadowing as :func:`link_table`.
    users : ndarray of int, shape (U,), optional
        User rows; default all.

    Returns
    -------
    ndarray, shape (U, n_cells)
    """
    users = np.arange(network.n_users) if users is None else np.asarray(users)
    if users.ndim != 1 or not np.issubdtype(users.dtype, np.integer) or (
            len(users) and not (0 <= users.min() and users.max() < network.n_users)):
        raise ValidationError(f"users must be row positions in [0, {network.n_users}); fix: give "
                              "a 1-d array of integers")
    return CouplingGains(network, model or RadioModel(), shadowing_seed(rng)).gain_db(users)


def link_table(
    network: Network,
    n_candidates: int = 8,
    window_db: float | None = None,
    *,
    model: RadioModel | None = None,
    power_dbm: np.ndarray | None = None,
    rng: np.random.Generator | int | None = None,
    workers: int | None = None,
    interference_radius_m: float | str | None = None,
    far_field: bool = True,
    progress: bool | None = None,
) -> LinkTable:
    """Candidate links of every user with RSRP, SINR and peak rate per resource.

    Each user keeps its `n_candidates` strongest cells by RSRP, and of those only the ones
    within `window_db` of its best if a window is given. Without an interference radius,
    interference on each resource sums over every cell of the network, candidate or not:
    time grows with users × cells. With a radius, a spatial index (:class:`scipy.spatial.cKDTree`)
    finds the cells within the radius of each user; candidates are chosen among them,
    their interference is summed exactly, and the cells beyond are added as a mean field
    (:mod:`cellopt.radio.far_field`): time and memory grow with users × cells within the
    radius. Users are processed in blocks of about :data:`BLOCK_ELEMENTS` user–cell
    pairs, on `workers` threads, so memory grows with the number of links, never with
    users × cells.

    Parameters
    ----------
    network : Network
    n_candidates : int
        Candidate cells per user (8).
    window_db : float, optional
        Keep only candidates whose RSRP is within this many dB of the user's best.
    model : RadioModel, optional
        Radio parameters; default :class:`RadioModel` ().
    power_dbm : ndarray, shape (n_cells,) or (n_cells, K), optional
        Transmit powers for the SINR; see :func:`resource_power_dbm`.
    rng : int or numpy.random.Generator, optional
        Shadowing seed (same seed → same shadowing, whatever the block size or workers).
    workers : int, optional
        Threads (numpy releases the GIL); default the number of CPUs.
    interference_radius_m : float or "auto", optional
        Interference radius [m]: each user's cells within it, or its
        :data:`MIN_NEARBY_CELLS` (at least `n_candidates`) nearest cells if fewer are
        within it, are found through the index and counted exactly. ``"auto"`` chooses
        it from the path-loss model (:func:`cellopt.radio.far_field.auto_radius_m`); on
        a wrapped layout (hex grid with wraparound, Poisson torus) whose half period is
        not above that radius, ``"auto"`` counts every cell exactly instead
        (``LinkTable.radius_m`` None): such a layout is small, and a radius would save
        little. None (default): every cell interferes exactly, as computed without an
        index. With wraparound, a radius given in metres must be below half the
        wraparound period.
    far_field : bool
        With a radius: add the mean interference of the cells beyond it (default). False
        leaves it out, which overstates every SINR.
    progress : bool or None
        Show a progress bar of the users done (on stderr).
        None (default): when standard error is a terminal (:mod:`cellopt.progress`).

    Returns
    -------
    LinkTable
        ``n_users × min(n_candidates, n_cells) × K`` links at most; with a radius, the
        candidates are chosen among each user's nearby cells, and ``far_field_db`` says
        how much the far field lowered each SINR. A network without
        users gives an empty table (every column of length 0). Users without a link of
        positive rate are outage users: their links (if any) are kept with rate 0, and
        :meth:`LinkTable.users_with_rate` leaves them out.

    Raises
    ------
    ValidationError
        Bad arguments, a network without cells, or — a last guard — any NaN or infinite
        RSRP, SINR or rate, naming the users and cells concerned.
    ResourceLimitError
        If the table would need more memory than cellopt may use
        (:func:`link_table_nbytes`, :func:`cellopt.errors.check_memory`), before any
        allocation.
    """
    if not isinstance(network, Network):
        raise ValidationError(f"network is a {type(network).__name__}; fix: give a cellopt Network")
    network.validate()
    if network.n_cells == 0:
        raise ValidationError("the network has no cells; fix: add cells before building links")
    n_candidates = check_count(n_candidates, "n_candidates", fix="give a whole number ≥ 1",
                               minimum=1)
    if window_db is not None:
        window_db = check_real(window_db, "window_db")
    if workers is not None:
        workers = check_count(workers, "workers", fix="give a number of threads ≥ 1", minimum=1)
    far_field = check_bool(far_field, "far_field")
    progress = shows(progress)
    if model is None:
        model = RadioModel()
    elif not isinstance(model, RadioModel):
        raise ValidationError(f"model is a {type(model).__name__}; fix: give a RadioModel")
    n_images = 1 if network.wrap_shifts_m is None else len(network.wrap_shifts_m)
    radius_m = _check_radius(network, model, interference_radius_m)
    check_memory(
        link_table_nbytes(network.n_users, network.n_cells, network.n_resources, n_candidates,
                          n_images, workers, nearby=radius_m is not None),
        f"a link table of {network.n_users:,} users × {min(n_candidates, network.n_cells)} "
        f"candidate cells × {network.n_resources} resource(s)",
        "use fewer users, fewer candidates (n_candidates) or fewer resources")
    coupling = CouplingGains(network, model, shadowing_seed(rng))
    power_mw = 10.0 ** (resource_power_dbm(network, power_dbm) / 10.0)  # (C, K)
    nearby = None if radius_m is None else NearbyCells(
        coupling, power_mw, radius_m, max(n_candidates, MIN_NEARBY_CELLS), far_field,
        0.5 * cell_extent_m(network))
    noise_mw = 10.0 ** (thermal_noise_dbm(network.resource_mhz, model.noise_figure_db) / 10.0)
    re_power_dbm = (network.cells["tx_power_dbm"].to_numpy(float)
                    - model.rsrp_offset_db(network.bandwidth_mhz))
    efficiency = model.efficiency()
    n_res = network.n_resources

    def block_links(users: np.ndarray, gain: np.ndarray, cell: np.ndarray | None,
                    far_mw: np.ndarray | None) -> tuple[np.ndarray, ...]:
        """Links of a block: `gain` (U, M) [dB] to every cell (`cell` None) or to the
        cells `cell` (U, M), padded with −inf gains; `far_mw` (U, K) the far field."""
        rsrp = gain + (re_power_dbm if cell is None else re_power_dbm[cell])
        m = gain.shape[1]
        n_keep = min(n_candidates, m)
        if n_keep < m:
            cand = np.argpartition(-rsrp, n_keep - 1, axis=1)[:, :n_keep]
        else:
            cand = np.broadcast_to(np.arange(m), rsrp.shape)
        rows = np.arange(len(users))[:, None]
        cand = np.take_along_axis(cand, np.argsort(-rsrp[rows, cand], axis=1, kind="stable"),
                                  axis=1)
        cand_rsrp = rsrp[rows, cand]  # (U, n)
        linear = 10.0 ** (gain / 10.0)
        # (U, K) received power from every cell; einsum sums each row in a fixed order, so
        # the result does not depend on the block size (a BLAS matmul's order does).
        if cell is None:
            total = np.einsum("uc,ck->uk", linear, power_mw)
            cand_cell = cand
        else:
            total = np.einsum("um,umk->uk", linear, power_mw[cell])
            cand_cell = cell[rows, cand]
        signal = linear[rows, cand][:, :, None] * power_mw[cand_cell]  # (U, n, K)
        interference = np.maximum(total[:, None, :] - signal, 0.0)
        near = noise_mw + interference
        with np.errstate(divide="ignore", invalid="ignore"):
            if far_mw is None:
                sinr = 10.0 * np.log10(signal / near)
            else:
                sinr = 10.0 * np.log10(signal / (near + far_mw[:, None, :]))
                shift = (10.0 * np.log10(1.0 + far_mw[:, None, :] / near)).astype(np.float32)
        # no link: padding (fewer cells than candidates within the radius), or a model
        # that gives none (a user outside a cell's predictions)
        keep = np.broadcast_to((cand_rsrp > -np.inf)[:, :, None], sinr.shape).copy()
        if window_db is not None:
            keep &= (cand_rsrp >= cand_rsrp[:, :1] - window_db)[:, :, None]
        u = np.broadcast_to(users[:, None, None], sinr.shape)[keep]
        c = np.broadcast_to(cand_cell[:, :, None], sinr.shape)[keep]
        r = np.broadcast_to(np.arange(n_res), sinr.shape)[keep]
        p = np.broadcast_to(cand_rsrp[:, :, None], sinr.shape)[keep]
        out = [u, c, r, p, sinr[keep]]
        if nearby is not None:
            out.append(shift[keep] if far_mw is not None else np.zeros(len(u), np.float32))
        return tuple(out)

    if nearby is None:
        block = max(1, BLOCK_ELEMENTS // (network.n_cells * n_images))

        def one_block(start: int) -> tuple[np.ndarray, ...]:
            users = np.arange(start, min(start + block, network.n_users))
            return block_links(users, coupling.gain_db(users), None, None)
    else:
        block = CHUNK_USERS

        def one_block(start: int) -> tuple[np.ndarray, ...]:
            users = np.arange(start, min(start + block, network.n_users))
            parts = [block_links(*nearby.block(sub)) for sub in nearby.blocks(users)]
            merged = [np.concatenate(a) for a in zip(*parts, strict=True)]
            order = np.argsort(merged[0], kind="stable")  # back to user order, ranks kept
            return tuple(a[order] for a in merged)

    starts = range(0, network.n_users, block)
    bar = progress_bar(network.n_users, progress=progress, desc="link table", unit="user")

    def run(start: int) -> list[np.ndarray]:
        out = list(one_block(start))
        bar.update(min(block, network.n_users - start))
        return out

    workers = workers or os.cpu_count() or 1
    with bar:
        if workers > 1 and len(starts) > 1:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                parts = list(pool.map(run, starts))
        else:
            parts = [run(s) for s in starts]
    n_cols = 5 if nearby is None else 6
    if parts:
        columns = [_concatenate_dropping(parts, i) for i in range(n_cols)]
    else:
        columns = [np.empty(0, np.int64)] * 3 + [np.empty(0)] * 2 + [np.empty(0, np.float32)]
    user, cell, resource, rsrp, sinr = columns[:5]
    bps_hz = np.asarray(efficiency(10.0 ** (sinr / 10.0)), float)
    if bps_hz.shape != sinr.shape:
        raise ValidationError(f"the spectral efficiency returned shape {bps_hz.shape} for SINRs of "
                              f"shape {sinr.shape}; fix: return one value per SINR")
    rate = network.resource_mhz[resource] * bps_hz
    table = LinkTable(
        user=user.astype(np.int64, copy=False), cell=cell.astype(np.int64, copy=False),
        resource=resource.astype(np.int64, copy=False),
        rsrp_dbm=rsrp, sinr_db=sinr, rate_mbps=rate,
        n_users=network.n_users, n_cells=network.n_cells, resource_mhz=network.resource_mhz.copy(),
        radius_m=radius_m, far_field_db=None if nearby is None else columns[5],
        model=model, shadowing_seed=coupling.seed, n_candidates=n_candidates,
        re_power_dbm=re_power_dbm, network_fingerprint=network.fingerprint,
    )
    # Last guard: no NaN may leave the radio model, whatever the inputs were.
    return table.validate(network.users["user_id"].to_numpy(), network.cells["cell_id"].to_numpy())


class NearbyCells:
    """The cells near each user, from a k-d tree over the cells' positions.

    A user's nearby cells are those within the radius, or its `min_cells` nearest cells
    if fewer are within it (a rural user far from every mast): its own radius is then
    the distance to the farthest of them. With wraparound the tree holds every image of
    every cell; a radius below half the wraparound period finds at most one image of
    each cell, the nearest, as the full computation counts.

    Parameters
    ----------
    coupling : CouplingGains
    power_mw : ndarray, shape (C, K)
        Transmit power of every cell on every resource [mW] (for the far field).
    radius_m : float
    min_cells : int
        Nearby cells of every user, at least.
    far_field : bool
        Add the mean interference of the cells beyond each user's radius.
    outer_m : float
        How far the far field reaches [m].
    """

    def __init__(self, coupling: CouplingGains, power_mw: np.ndarray, radius_m: float, min_cells: int,
                 far_field: bool, outer_m: float):
        far_field = check_bool(far_field, "far_field")
        self.coupling = coupling
        self.radius_m = radius_m
        self.n_cells = len(coupling.cell_xy)
        self.min_cells = min(min_cells, self.n_cells)
        self.shifts = np.zeros((1, 2)) if coupling.shifts is None else coupling.shifts
        images = coupling.cell_xy[None, :, :] + self.shifts[:, None, :]
        self.tree = cKDTree(images.reshape(-1, 2))
        self.far = FarField(coupling, power_mw, outer_m) if far_field else None

    def blocks(self, users: np.ndarray) -> list[tuple[np.ndarray, int, bool]]:
        """Split `users` into blocks of about :data:`BLOCK_ELEMENTS` user–cell pairs.

        Users are ordered by their number of cells within the radius, so that each
        block pads its users to a similar count: a list of (users, cells per user,
        whether the block's users are those with fewer than `min_cells` within it).
        """
        count = self.tree.query_ball_point(self.coupling.user_xy[users], self.radius_m,
                                           return_length=True)
        order = np.argsort(count, kind="stable")
        count = np.maximum(count[order], self.min_cells)
        sparse = np.searchsorted(count, self.min_cells, side="right")  # users padded to min
        out = []
        for lo, hi, few in ((0, sparse, True), (sparse, len(order), False)):
            i = lo
            while i < hi:  # a loop over blocks, each of many users
                j = min(hi, i + max(1, BLOCK_ELEMENTS // count[i]))
                while j - i > 1 and (j - i) * count[j - 1] > BLOCK_ELEMENTS:
                    j = i + max(1, BLOCK_ELEMENTS // count[j - 1])
                out.append((users[order[i:j]], int(count[j - 1]), few))
                i = j
        return out

    def block(self, sub: tuple[np.ndarray, int, bool]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """Gains [dB] of a block's users to their nearby cells, padded with −inf.

        Returns
        -------
        users : ndarray, shape (U,)
        gain_db : ndarray, shape (U, M)
        cell : ndarray of int, shape (U, M)
            Cell rows (0 where padded).
        far_mw : ndarray, shape (U, K), or None
            Far-field interference of each user [mW].
        """
        users, m, few = sub
        xy = self.coupling.user_xy[users]
        # Users with at least min_cells within the radius take every cell within it (m is
        # the block's largest count); the others take their min_cells nearest cells.
        dist, idx = self.tree.query(xy, k=m, distance_upper_bound=np.inf if few else self.radius_m)
        idx = np.asarray(idx).reshape(len(users), m)
        dist = np.asarray(dist).reshape(len(users), m)
        valid = idx < self.tree.n
        radius = np.full(len(users), self.radius_m)
        if few:
            radius = np.maximum(radius, dist.max(axis=1, initial=0.0, where=valid))
        # Cells in row order, as the full computation has them: equal RSRPs rank alike.
        if len(self.shifts) == 1:  # the padding (index tree.n) sorts last
            idx = np.sort(idx, axis=1)
            valid = idx < self.tree.n
            image, cell = np.zeros_like(idx), np.where(valid, idx, 0)
        else:
            # The sort is stable, so of two images of one cell (the nearest cells of a
            # sparse user on a small torus) the nearer comes first; the other is dropped.
            image, cell = np.divmod(np.where(valid, idx, 0), self.n_cells)
            order = np.argsort(np.where(valid, cell, self.n_cells), axis=1, kind="stable")
            valid, image, cell = (np.take_along_axis(a, order, axis=1) for a in (valid, image, cell))
            valid[:, 1:] &= cell[:, 1:] != cell[:, :-1]
        u = np.broadcast_to(users[:, None], idx.shape)[valid]
        c = cell[valid]
        shift = self.shifts[image[valid]]
        # (user − cell) − shift: the full computation's order of operations, bit for bit
        dx = (self.coupling.user_xy[u, 0] - self.coupling.cell_xy[c, 0]) - shift[:, 0]
        dy = (self.coupling.user_xy[u, 1] - self.coupling.cell_xy[c, 1]) - shift[:, 1]
        gain = np.full(idx.shape, -np.inf)
        gain[valid] = self.coupling.pair_gain_db(u, c, dx, dy)
        far = None
        if self.far is not None:
            far = self.far.interference_mw(users, radius, cell, valid)
        return users, gain, cell, far


def _check_radius(network: Network, model: RadioModel, radius_m: float | str | None) -> float | None:
    """The interference radius [m] to use, or None for the full computation.

    ``"auto"`` takes :func:`~cellopt.radio.far_field.auto_radius_m`, or None (every cell
    exactly) on a wrapped layout whose half period is not above it: there a radius would
    leave out only the corners of the torus (a disc of half the period covers about 80 %
    of it), which saves little, while its mean far field would stand for cells the torus
    does not have. A radius given in metres is used as it is, and refused if it is not
    below half the period.
    """
    if radius_m is None:
        return None
    shifts = network.wrap_shifts_m
    half_period = None
    if shifts is not None and len(shifts) > 1:
        half_period = 0.5 * float(np.min(np.hypot(shifts[1:, 0], shifts[1:, 1])))
    if isinstance(radius_m, str):
        if radius_m != "auto":
            raise ValidationError(f"interference_radius_m={radius_m!r}; fix: give a radius in "
                                  "metres, 'auto' or None")
        auto = auto_radius_m(network, model)
        if half_period is not None and auto >= half_period:
            return None  # a wrapped layout smaller than the auto radius: every cell exactly
        return float(auto)
    radius_m = check_number(radius_m, "interference_radius_m", low=0.0, low_open=True, unit="m",
                            fix="give a radius > 0 in metres, 'auto' or None (every cell "
                                "interferes exactly)")
    if half_period is not None and radius_m >= half_period:
        raise ValidationError(
            f"interference_radius_m={radius_m:g} m is not below half the wraparound period "
            f"({half_period:.0f} m): two images of a cell could both be within it; fix: give "
            "a smaller radius, 'auto' (every cell exactly on a layout this small) or None "
            "(every cell exactly; cheap at this size)")
    return radius_m


def _concatenate_dropping(parts: list[list[np.ndarray]], column: int) -> np.ndarray:
    """Concatenate one column of the blocks, releasing the blocks' arrays as it goes."""
    arrays = [part[column] for part in parts]
    for part in parts:
        part[column] = None
    return np.concatenate(arrays)
