"""Sparse coupling gains for power optimization: each user's strongest cells, the rest lumped.

A power pattern changes the interference every user sees, so evaluating a pattern needs
the gains from every cell that matters to each user. :class:`GainTable` keeps, per user,
the `n_interferers` cells with the strongest received power at full power (the first
`n_candidates` of them are the user's candidate servers, as in
:func:`cellopt.radio.link_table`) and lumps the remaining cells into one background
power counted at their full power whatever the pattern — a conservative choice: rates
are never overestimated, and when every cell is in the table (small networks) the model
is exact. The lumped power is also kept per tier, so that bounds can count it at its
*lowest* (:meth:`GainTable.background_floor_mw`, :meth:`GainTable.optimistic`): rates
are then never underestimated, and a bound computed on that table holds for the
*physical model*, in which every cell interferes at its pattern's power. Memory is
users × n_interferers, never users × cells.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from cellopt.drop import Drop
from cellopt.errors import ValidationError, describe_rows
from cellopt.linktable import LinkTable
from cellopt.network import Fingerprint, Network, check_same_network
from cellopt.power.kernels import pattern_sinr
from cellopt.radio.links import BLOCK_ELEMENTS, shadowing_seed
from cellopt.radio.model import CouplingGains, RadioModel, thermal_noise_dbm

__all__ = ["AGREEMENT_DB", "AGREEMENT_RTOL", "GainTable", "check_agreement", "disagreeing_links"]

#: Two full-power rates of one link computed from the same network, radio model and
#: shadowing seed by two routes (a link table's sums and a gain table's) differ by
#: round-off only: relative differences above this mean they describe different networks.
AGREEMENT_RTOL = 1e-6
#: The same for the link's SINR [dB]. A link agrees when its rates or its SINRs agree
#: (rates alone jump where the spectral efficiency does, e.g. at −10 dB for TR 36.942;
#: SINRs alone lose digits to cancellation at very high SINR, where rates are capped).
AGREEMENT_DB = 1e-6


def disagreeing_links(rate_mbps: np.ndarray, reference_mbps: np.ndarray,
                      sinr_db: np.ndarray | None = None, reference_db: np.ndarray | None = None,
                      *, upper_only: bool = False) -> np.ndarray:
    """Mask of the links whose full-load rates (and SINRs) do not agree with a reference.

    Parameters
    ----------
    rate_mbps, reference_mbps : ndarray, shape (L,)
        Each link's rate by two routes [Mbit/s] (NaN: the link is missing from one).
    sinr_db, reference_db : ndarray, shape (L,), optional
        Their SINRs [dB], when both routes have them.
    upper_only : bool
        Only a value above its reference disagrees (the reference is an upper bound, as
        the near-only SINR of a link table with an interference radius).

    Returns
    -------
    ndarray of bool, shape (L,)
        True where neither the rates (relative :data:`AGREEMENT_RTOL`) nor the SINRs
        (:data:`AGREEMENT_DB`) agree.
    """
    rate, ref = np.asarray(rate_mbps, float), np.asarray(reference_mbps, float)
    with np.errstate(invalid="ignore"):
        if upper_only:
            ok = rate <= ref * (1.0 + AGREEMENT_RTOL)
        else:
            ok = np.isclose(rate, ref, rtol=AGREEMENT_RTOL, atol=0.0)
        if sinr_db is not None and reference_db is not None:
            s, r = np.asarray(sinr_db, float), np.asarray(reference_db, float)
            ok |= (s <= r + AGREEMENT_DB) if upper_only else ((np.abs(s - r) <= AGREEMENT_DB)
                                                               | (s == r))
    return ~ok


def check_agreement(off: np.ndarray, rate_mbps: np.ndarray, reference_mbps: np.ndarray, *,
                    ours: str, theirs: str, fix: str) -> None:
    """Raise a ValidationError naming both objects if any link in `off` disagrees.

    Parameters
    ----------
    off : ndarray of bool, shape (L,)
        :func:`disagreeing_links`.
    rate_mbps, reference_mbps : ndarray, shape (L,)
        The two routes' rates [Mbit/s], for the message.
    ours, theirs : str
        What the two objects are (e.g. ``"LoadCoupling.from_network (shadowing seed 4)"``
        and ``"the problem's links"``).
    fix : str
        How to make them agree.

    Raises
    ------
    ValidationError
        ``"<ours> and <theirs> disagree: links rows [...] ... ; fix: <fix>"``.
    """
    bad = np.flatnonzero(off)
    if not len(bad):
        return
    a, b = np.asarray(rate_mbps, float)[bad], np.asarray(reference_mbps, float)[bad]
    both = (a > 0) & (b > 0)
    apart = ""
    if both.any():
        apart = f", up to {np.max(np.maximum(a[both] / b[both], b[both] / a[both])):.3g}× apart"
    one_side = int((~both).sum())
    if one_side:
        apart += f"; {one_side} of them have rate 0 (or none) on one side only"
    raise ValidationError(
        f"{ours} and {theirs} disagree: links {describe_rows(bad)} ({len(bad)} of {len(off)}) "
        f"have full-load rates {np.round(a[:3], 4).tolist()} against "
        f"{np.round(b[:3], 4).tolist()} Mbit/s{apart} (built from the same network, radio "
        f"model and shadowing seed they agree to round-off); fix: {fix}")


@dataclasses.dataclass(frozen=True, eq=False)
class GainTable:
    """Per-user gains to its strongest cells, and the lumped rest.

    Attributes
    ----------
    cell : ndarray of int64, shape (n_users, n_interferers)
        The cells, strongest first (received power at full power).
    gain_mw_per_mw : ndarray, shape (n_users, n_interferers)
        Linear coupling gain of each (user, cell).
    background_mw : ndarray, shape (n_users,)
        Received power from all other cells at their full power [mW].
    n_candidates : int
        The first `n_candidates` columns are the user's candidate servers.
    noise_mw : float
        Thermal noise over the band [mW].
    bandwidth_mhz : float
    efficiency : callable
        Spectral efficiency [bit/s/Hz] of a linear SINR.
    max_power_dbm : ndarray, shape (n_cells,)
        Each cell's full transmit power.
    cell_group : ndarray of int64, shape (n_cells,), optional
        Group of every cell (its tier, numbered) for `background_by_group_mw`.
    background_by_group_mw : ndarray, shape (n_users, n_groups), optional
        `background_mw` split by the group of the cells it comes from [mW] (same cells,
        full power). Without it (a table made by hand) bounds count the background as 0.
    shadowing_seed : int, optional
        The integer that keyed its shadowing (:func:`cellopt.radio.links.shadowing_seed`
        of the `rng` given; None for a table made by hand).
    model : RadioModel, optional
        The radio model it was computed with (None for a table made by hand).
    network_fingerprint : Fingerprint, optional
        The :attr:`~cellopt.network.Network.fingerprint` of the network it was computed
        for (None for a table made by hand, or of some users only: :meth:`take_users`);
        :meth:`PowerProblem.from_parts <cellopt.power.PowerProblem.from_parts>` refuses a
        table of another network.

    Notes
    -----
    A gain table must describe the same network as the link table it is used with: its
    rows are the network's users, its cells the network's cells, and its full-power
    rates are the link table's to round-off when both come from the same network,
    radio model and shadowing seed. :meth:`check_links` compares them (every link's
    full-power rate and SINR, :func:`disagreeing_links`) and :meth:`from_drop` calls it,
    so a drop whose link table came from another seed, another model, other powers or
    another network is refused, naming both.
    """

    cell: np.ndarray
    gain_mw_per_mw: np.ndarray
    background_mw: np.ndarray
    n_candidates: int
    noise_mw: float
    bandwidth_mhz: float
    efficiency: Callable[[np.ndarray], np.ndarray]
    max_power_dbm: np.ndarray
    cell_group: np.ndarray | None = None
    background_by_group_mw: np.ndarray | None = None
    shadowing_seed: int | None = None
    model: RadioModel | None = None
    network_fingerprint: Fingerprint | None = None

    @classmethod
    def from_drop(cls, drop: Drop, *, n_interferers: int = 32) -> GainTable:
        """Gains of every user of a drop's network, with the model, shadowing seed and
        candidate count its link table was built with, checked against that table
        (:meth:`check_links`).

        Parameters
        ----------
        drop : Drop
            Its link table made by :func:`cellopt.radio.link_table`.
        n_interferers : int
            Cells whose power a pattern can change, per user (≥ the table's candidates).

        Raises
        ------
        ValidationError
            For a link table made by hand (it records no model or seed), for one whose
            full-power rates are not the gains' (:meth:`check_links`: e.g. a table built
            with other powers, or a drop whose network is not its table's), and as
            :meth:`from_network`.
        """
        model, seed, n_candidates = drop.links.radio_settings("GainTable.from_network")
        gains = cls.from_network(drop.network, n_candidates=n_candidates,
                                 n_interferers=n_interferers, model=model, rng=seed)
        gains.check_links(drop.links, "the drop's link table")
        return gains

    @classmethod
    def from_network(
        cls,
        network: Network,
        *,
        n_candidates: int = 8,
        n_interferers: int = 32,
        model: RadioModel | None = None,
        rng: np.random.Generator | int | None = None,
    ) -> GainTable:
        """Gains of every user to its `n_interferers` strongest cells.

        Parameters
        ----------
        network : Network
        n_candidates : int
            Candidate serving cells per user (the strongest by RSRP, as in
            :func:`~cellopt.radio.link_table`).
        n_interferers : int
            Cells whose power a pattern can change, per user (≥ n_candidates). The others
            count at full power.
        model : RadioModel, optional
        rng : int or numpy.random.Generator, optional
            Shadowing seed; the same seed as :func:`~cellopt.radio.link_table` gives the
            same gains.
        """
        network.validate()
        if network.n_cells == 0 or network.n_users == 0:
            raise ValidationError(f"the network has {network.n_cells} cells and {network.n_users} "
                                  "users, and power optimization needs both; fix: add users "
                                  "(topology.drop_users) or cells to the network")
        if int(n_candidates) != n_candidates or n_candidates < 1:
            raise ValidationError(f"n_candidates={n_candidates}; fix: give a whole number ≥ 1")
        if int(n_interferers) != n_interferers or n_interferers < n_candidates:
            raise ValidationError(f"n_interferers={n_interferers}; fix: give a whole number ≥ "
                                  f"n_candidates={n_candidates}")
        model = model or RadioModel()
        coupling = CouplingGains(network, model, shadowing_seed(rng))
        p_max_dbm = network.cells["tx_power_dbm"].to_numpy(float)
        p_max_mw = 10.0 ** (p_max_dbm / 10.0)
        n_keep = min(int(n_interferers), network.n_cells)
        n_images = 1 if network.wrap_shifts_m is None else len(network.wrap_shifts_m)
        block = max(1, BLOCK_ELEMENTS // (network.n_cells * n_images))
        # The lumped cells' power per group (tier): bounds scale each group to its lowest.
        _, group = np.unique(network.cells["tier"].to_numpy(str), return_inverse=True)
        group = group.astype(np.int64).ravel()
        one_hot = np.eye(int(group.max()) + 1)[group] * p_max_mw[:, None]   # (n_cells, n_groups)
        cells, gains, background, by_group = [], [], [], []
        for start in range(0, network.n_users, block):  # blocks bound the memory
            users = np.arange(start, min(start + block, network.n_users))
            g_db = coupling.gain_db(users)
            rx_db = g_db + p_max_dbm  # strongest received = strongest RSRP (same offset)
            top = np.argpartition(-rx_db, n_keep - 1, axis=1)[:, :n_keep] \
                if n_keep < network.n_cells else np.broadcast_to(np.arange(n_keep), rx_db.shape)
            rows = np.arange(len(users))[:, None]
            top = np.take_along_axis(top, np.argsort(-rx_db[rows, top], axis=1, kind="stable"),
                                     axis=1)
            linear = 10.0 ** (g_db / 10.0)
            total = np.einsum("uc,c->u", linear, p_max_mw)
            kept = linear[rows, top]
            cells.append(top.astype(np.int64))
            gains.append(kept)
            background.append(np.maximum(total - np.einsum("uk,uk->u", kept, p_max_mw[top]), 0.0))
            lumped = linear.copy()
            lumped[rows, top] = 0.0
            by_group.append(lumped @ one_hot)
        return cls(
            cell=np.concatenate(cells), gain_mw_per_mw=np.concatenate(gains),
            background_mw=np.concatenate(background),
            n_candidates=min(int(n_candidates), network.n_cells),
            noise_mw=float(10.0 ** (thermal_noise_dbm(network.bandwidth_mhz,
                                                      model.noise_figure_db) / 10.0)),
            bandwidth_mhz=float(network.bandwidth_mhz), efficiency=model.efficiency(),
            max_power_dbm=p_max_dbm, cell_group=group,
            background_by_group_mw=np.concatenate(by_group), shadowing_seed=coupling.seed,
            model=model, network_fingerprint=network.fingerprint,
        )

    @property
    def n_users(self) -> int:
        return self.cell.shape[0]

    @property
    def n_cells(self) -> int:
        return len(self.max_power_dbm)

    def rates_mbps(self, power_mw: np.ndarray) -> np.ndarray:
        """Peak rate of every candidate link under each pattern, over the whole band:
        the spectral efficiency of :meth:`sinr` (same argument and shape) × the band
        [Mbit/s]; 0 where the serving cell is off."""
        return self.bandwidth_mhz * self.efficiency(self.sinr(power_mw))

    def sinr(self, power_mw: np.ndarray) -> np.ndarray:
        """Linear SINR of every candidate link under each pattern.

        Parameters
        ----------
        power_mw : ndarray, shape (n_patterns, n_cells)
            Transmit power of every cell in every pattern [mW] (0 = off).

        Returns
        -------
        ndarray, shape (n_patterns, n_users, n_candidates)
            0 where the serving cell is off.
        """
        power_mw = np.atleast_2d(np.asarray(power_mw, float))
        return pattern_sinr(power_mw, self.cell, self.gain_mw_per_mw, self.background_mw,
                            self.noise_mw, self.n_candidates)

    def full_power_links(self, user: np.ndarray, cell: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rate and SINR of some links when every cell transmits at full power.

        Parameters
        ----------
        user : ndarray of int, shape (L,)
            Row in this table of each link's user.
        cell : ndarray of int, shape (L,)
            Each link's cell.

        Returns
        -------
        rate_mbps : ndarray, shape (L,)
            Over the whole band [Mbit/s]; NaN where the cell is not among the user's
            kept cells.
        sinr_db : ndarray, shape (L,)
            [dB]; NaN where the cell is not kept.
        """
        user, cell = np.asarray(user, np.int64), np.asarray(cell, np.int64)
        p_mw = 10.0 ** (self.max_power_dbm / 10.0)
        total = np.einsum("um,um->u", self.gain_mw_per_mw, p_mw[self.cell]) + self.background_mw
        match = self.cell[user] == cell[:, None]  # (L, n_interferers)
        found = match.any(axis=1)
        signal = self.gain_mw_per_mw[user, match.argmax(axis=1)] * p_mw[cell]
        sinr = signal / (self.noise_mw + np.maximum(total[user] - signal, 0.0))
        with np.errstate(divide="ignore"):
            sinr_db = np.where(found, 10.0 * np.log10(sinr), np.nan)
        rate = self.bandwidth_mhz * np.asarray(self.efficiency(sinr), float)
        return np.where(found, rate, np.nan), sinr_db

    def check_links(self, links: LinkTable, what: str = "the link table") -> None:
        """Refuse a link table that does not describe this table's network.

        They must have the same rows (users and cells), the same shadowing seed (when
        both record one), and on every link the same full-power rate (scaled to the
        link's resource: a flat power spectral density) or SINR to round-off
        (:func:`disagreeing_links`). For a table with an interference radius, whose
        SINRs approximate the interference beyond it, each link's near-only SINR
        (``sinr_db + far_field_db``, an upper bound on the exact one) must be at least
        this table's, and links whose cell this table does not keep are skipped.

        Parameters
        ----------
        links : LinkTable
        what : str
            How the message names `links`.

        Raises
        ------
        ValidationError
            Naming both and the fix.
        """
        fix = ("build both from the same network with the same radio model and shadowing "
               "seed, at the cells' tx_power_dbm (GainTable.from_drop(drop) reads them from "
               "the drop's link table)")
        if (links.n_users, links.n_cells) != (self.n_users, self.n_cells):
            raise ValidationError(f"the gain table has {self.n_users} users and {self.n_cells} "
                                  f"cells, {what} {links.n_users} and {links.n_cells}; fix: {fix}")
        check_same_network(self.network_fingerprint, links.network_fingerprint,
                           ours_name="the gain table", theirs_name=what, fix=fix)
        if None not in (self.shadowing_seed, links.shadowing_seed) \
                and self.shadowing_seed != links.shadowing_seed:
            raise ValidationError(f"the gain table has shadowing seed {self.shadowing_seed}, "
                                  f"{what} {links.shadowing_seed}; fix: {fix}")
        rate, sinr_db = self.full_power_links(links.user, links.cell)
        share = links.resource_mhz[links.resource] / self.bandwidth_mhz
        rate = rate * share
        ref_db, ref_rate = links.sinr_db, links.rate_mbps
        radius = links.radius_m is not None
        if radius:  # the near-only SINR bounds the exact one from above
            ref_db = ref_db + (0.0 if links.far_field_db is None else links.far_field_db)
            ref_rate = links.resource_mhz[links.resource] * np.asarray(
                self.efficiency(10.0 ** (ref_db / 10.0)), float)
        off = disagreeing_links(rate, ref_rate, sinr_db, ref_db, upper_only=radius)
        if radius:
            off &= ~np.isnan(rate)
        seed = "" if self.shadowing_seed is None else f" (shadowing seed {self.shadowing_seed})"
        check_agreement(off, rate, ref_rate, ours=f"the gain table{seed}", theirs=what, fix=fix)

    def take_users(self, rows: np.ndarray) -> GainTable:
        """The table of some users only (e.g. a drop's users with a usable link).

        Parameters
        ----------
        rows : ndarray of bool, shape (n_users,), or of int
            The users to keep, as a mask or as row numbers.
        """
        by_group = self.background_by_group_mw
        return dataclasses.replace(
            self, cell=self.cell[rows], gain_mw_per_mw=self.gain_mw_per_mw[rows],
            background_mw=self.background_mw[rows],
            background_by_group_mw=None if by_group is None else by_group[rows],
            network_fingerprint=None)  # no longer that network's users

    def background_floor_mw(self, lowest_dbm: np.ndarray) -> np.ndarray:
        """The least background of every user when each cell transmits at least its lowest level.

        Each group's lumped power (:attr:`background_by_group_mw`, at full power) scaled by
        the smallest ratio of lowest to full power among the group's cells: the least
        power the lumped cells can bring under any pattern, exact when a group's cells
        share their levels relative to full power (levels given per tier). Zero when a
        lumped cell may be off, and for a table made without the split.

        Parameters
        ----------
        lowest_dbm : ndarray, shape (n_cells,)
            Each cell's lowest allowed power [dBm]; −inf = off.

        Returns
        -------
        ndarray, shape (n_users,) [mW]
        """
        if self.background_by_group_mw is None or self.cell_group is None:
            return np.zeros(self.n_users)
        ratio = 10.0 ** ((np.asarray(lowest_dbm, float) - self.max_power_dbm) / 10.0)
        least = np.full(self.background_by_group_mw.shape[1], np.inf)
        np.minimum.at(least, self.cell_group, ratio)
        return self.background_by_group_mw @ np.where(np.isfinite(least), least, 0.0)

    def optimistic(self, lowest_dbm: np.ndarray) -> GainTable:
        """This table with every user's background at its floor (:meth:`background_floor_mw`).

        Its rates of any pattern are at least the rates of the physical model (every cell
        interfering at its pattern's power), so a bound computed on it bounds the
        physical optimum; the table itself (background at full power) underestimates
        them, and its answers are feasible. The same table when nothing is lumped.
        """
        floor = self.background_floor_mw(lowest_dbm)
        if self.cell.shape[1] >= self.n_cells or np.array_equal(floor, self.background_mw):
            return self
        return dataclasses.replace(self, background_mw=floor, background_by_group_mw=None)

    def isolated_rates_mbps(self, power_mw: np.ndarray) -> np.ndarray:
        """Rates with no interference at all (every other cell off, no background).

        An upper bound on the rate of each candidate link in any pattern where its cell
        transmits `power_mw`; shape (n_users, n_candidates) for power_mw of shape
        (n_cells,).
        """
        signal = self.gain_mw_per_mw[:, :self.n_candidates] * np.asarray(power_mw)[
            self.cell[:, :self.n_candidates]]
        return self.bandwidth_mhz * self.efficiency(signal / self.noise_mw)
