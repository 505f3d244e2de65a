"""Build the sparse link table: candidate cells per user, SINR per resource, peak rates."""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from cellopt.errors import ValidationError, check_memory, describe_rows
from cellopt.linktable import LinkTable
from cellopt.network import LIMITS, Network, check_count, check_real
from cellopt.radio.model import RSRP_SUBCARRIER_HZ, Coupling, RadioModel, thermal_noise_dbm

__all__ = ["coupling_db", "link_table", "link_table_nbytes", "resource_power_dbm", "shadowing_seed"]

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

    Returns
    -------
    float
        Bytes (a float: counts may be far beyond what an int64 array could index).
    """
    n_users, n_cells = int(n_users), max(int(n_cells), 1)
    n_keep = min(int(n_candidates), n_cells)
    links = float(n_users) * n_keep * n_resources
    block_users = min(n_users, max(1, BLOCK_ELEMENTS // (n_cells * n_images)))
    n_blocks = math.ceil(n_users / block_users) if n_users else 0
    alive = min(workers or os.cpu_count() or 1, n_blocks)
    per_block = block_users * (n_cells * PAIR_BYTES + n_keep * n_resources * LINK_BYTES)
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
        p = np.asarray(power_dbm, dtype=float)
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
    return Coupling(network, model or RadioModel(), shadowing_seed(rng)).gain_db(users)


def link_table(
    network: Network,
    n_candidates: int = 8,
    window_db: float | None = None,
    *,
    model: RadioModel | None = None,
    power_dbm: np.ndarray | None = None,
    rng: np.random.Generator | int | None = None,
    workers: int | None = None,
) -> LinkTable:
    """Candidate links of every user with RSRP, SINR and peak rate per resource.

    Each user keeps its `n_candidates` strongest cells by RSRP, and of those only the ones
    within `window_db` of its best if a window is given. Interference on each resource
    sums over every cell of the network, candidate or not. Users are processed in blocks
    of about :data:`BLOCK_ELEMENTS` user–cell pairs, on `workers` threads, so memory
    grows with the number of links, never with users × cells.

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

    Returns
    -------
    LinkTable
        ``n_users × min(n_candidates, n_cells) × K`` links at most. A network without
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
    if model is None:
        model = RadioModel()
    elif not isinstance(model, RadioModel):
        raise ValidationError(f"model is a {type(model).__name__}; fix: give a RadioModel")
    n_images = 1 if network.wrap_shifts_m is None else len(network.wrap_shifts_m)
    check_memory(
        link_table_nbytes(network.n_users, network.n_cells, network.n_resources, n_candidates,
                          n_images, workers),
        f"a link table of {network.n_users:,} users × {min(n_candidates, network.n_cells)} "
        f"candidate cells × {network.n_resources} resource(s)",
        "use fewer users, fewer candidates (n_candidates) or fewer resources")
    coupling = Coupling(network, model, shadowing_seed(rng))
    power_mw = 10.0 ** (resource_power_dbm(network, power_dbm) / 10.0)  # (C, K)
    noise_mw = 10.0 ** (thermal_noise_dbm(network.resource_mhz, model.noise_figure_db) / 10.0)
    rsrp_offset_db = network.cells["tx_power_dbm"].to_numpy(float) - 10.0 * np.log10(
        network.bandwidth_mhz * 1e6 / RSRP_SUBCARRIER_HZ
    )
    n_keep = min(n_candidates, network.n_cells)
    efficiency = model.efficiency()
    block = max(1, BLOCK_ELEMENTS // (network.n_cells * n_images))
    starts = range(0, network.n_users, block)

    def one_block(start: int) -> tuple[np.ndarray, ...]:
        users = np.arange(start, min(start + block, network.n_users))
        gain = coupling.gain_db(users)  # (U, C)
        rsrp = gain + rsrp_offset_db
        if n_keep < network.n_cells:
            cand = np.argpartition(-rsrp, n_keep - 1, axis=1)[:, :n_keep]
        else:
            cand = np.broadcast_to(np.arange(network.n_cells), rsrp.shape)
        rows = np.arange(len(users))[:, None]
        cand = np.take_along_axis(cand, np.argsort(-rsrp[rows, cand], axis=1, kind="stable"),
                                  axis=1)
        cand_rsrp = rsrp[rows, cand]  # (U, n)
        linear = 10.0 ** (gain / 10.0)
        # (U, K) received power from every cell; einsum sums each row in a fixed order, so
        # the result does not depend on the block size (a BLAS matmul's order does).
        total = np.einsum("uc,ck->uk", linear, power_mw)
        signal = linear[rows, cand][:, :, None] * power_mw[cand]  # (U, n, K)
        interference = np.maximum(total[:, None, :] - signal, 0.0)
        with np.errstate(divide="ignore"):
            sinr = 10.0 * np.log10(signal / (noise_mw + interference))
        keep = np.ones(sinr.shape, bool)
        if window_db is not None:
            keep &= (cand_rsrp >= cand_rsrp[:, :1] - window_db)[:, :, None]
        k = network.n_resources
        u = np.broadcast_to(users[:, None, None], sinr.shape)[keep]
        c = np.broadcast_to(cand[:, :, None], sinr.shape)[keep]
        r = np.broadcast_to(np.arange(k), sinr.shape)[keep]
        p = np.broadcast_to(cand_rsrp[:, :, None], sinr.shape)[keep]
        return u, c, r, p, sinr[keep]

    workers = workers or os.cpu_count() or 1
    if workers > 1 and len(starts) > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            parts = list(pool.map(one_block, starts))
    else:
        parts = [one_block(s) for s in starts]
    if parts:
        user, cell, resource, rsrp, sinr = (np.concatenate(a) for a in zip(*parts, strict=True))
    else:
        user = cell = resource = np.empty(0, np.int64)
        rsrp = sinr = np.empty(0)
    bps_hz = np.asarray(efficiency(10.0 ** (sinr / 10.0)), float)
    if bps_hz.shape != sinr.shape:
        raise ValidationError(f"the spectral efficiency returned shape {bps_hz.shape} for SINRs of "
                              f"shape {sinr.shape}; fix: return one value per SINR")
    rate = network.resource_mhz[resource] * bps_hz
    table = LinkTable(
        user=user.astype(np.int64), cell=cell.astype(np.int64), resource=resource.astype(np.int64),
        rsrp_dbm=rsrp, sinr_db=sinr, rate_mbps=rate,
        n_users=network.n_users, n_cells=network.n_cells, resource_mhz=network.resource_mhz.copy(),
    )
    # Last guard: no NaN may leave the radio model, whatever the inputs were.
    return table.validate(network.users["user_id"].to_numpy(), network.cells["cell_id"].to_numpy())
