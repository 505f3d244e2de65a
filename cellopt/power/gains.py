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
from cellopt.errors import ValidationError
from cellopt.network import Network
from cellopt.radio.links import BLOCK_ELEMENTS, shadowing_seed
from cellopt.radio.model import Coupling, RadioModel, thermal_noise_dbm

__all__ = ["GainTable"]


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

    @classmethod
    def from_drop(cls, drop: Drop, *, n_interferers: int = 32) -> GainTable:
        """Gains of every user of a drop's network, with the model, shadowing seed and
        candidate count its link table was built with, so that both agree by construction.

        Parameters
        ----------
        drop : Drop
            Its link table made by :func:`cellopt.radio.link_table`.
        n_interferers : int
            Cells whose power a pattern can change, per user (≥ the table's candidates).

        Raises
        ------
        ValidationError
            For a link table made by hand (it records no model or seed), and as
            :meth:`from_network`.
        """
        model, seed, n_candidates = drop.links.radio_settings("GainTable.from_network")
        return cls.from_network(drop.network, n_candidates=n_candidates, n_interferers=n_interferers,
                                model=model, rng=seed)

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
            raise ValidationError("the network needs cells and users for power optimization")
        if int(n_candidates) != n_candidates or n_candidates < 1:
            raise ValidationError(f"n_candidates={n_candidates}; fix: give a whole number ≥ 1")
        if int(n_interferers) != n_interferers or n_interferers < n_candidates:
            raise ValidationError(f"n_interferers={n_interferers}; fix: give a whole number ≥ "
                                  f"n_candidates={n_candidates}")
        model = model or RadioModel()
        coupling = Coupling(network, model, shadowing_seed(rng))
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
            background_by_group_mw=np.concatenate(by_group),
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
        rx = self.gain_mw_per_mw[None] * power_mw[:, self.cell]  # (S, U, n_interferers)
        total = rx.sum(axis=2) + self.background_mw + self.noise_mw
        signal = rx[:, :, :self.n_candidates]
        return signal / np.maximum(total[:, :, None] - signal, self.noise_mw)

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
            background_by_group_mw=None if by_group is None else by_group[rows])

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
