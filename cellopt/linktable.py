"""The sparse table of candidate links: flat arrays, one row per (user, cell, resource)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from cellopt.errors import ValidationError, describe_rows

if TYPE_CHECKING:
    from cellopt.network import Fingerprint

__all__ = ["LinkTable"]


@dataclasses.dataclass(eq=False)
class LinkTable:
    """Candidate links of a network and their peak rates.

    Rows are sorted by user, then by the cell's rank (strongest RSRP first), then by
    resource. Indices are row positions in the network's cells and users tables.

    Attributes
    ----------
    user, cell, resource : ndarray of int64, shape (L,)
        User row, cell row and resource index of each link.
    rsrp_dbm : ndarray, shape (L,)
        Reference-signal received power of the cell at the user [dBm per 15 kHz], at the
        cell's maximum power spread evenly over the band.
    sinr_db : ndarray, shape (L,)
        SINR on the resource [dB], interference from every cell in the network.
    rate_mbps : ndarray, shape (L,)
        Peak rate R_e = W_k η(γ) [Mbit/s]: what the user gets with all of resource k of
        the cell.
    n_users, n_cells : int
        Sizes of the network's tables.
    resource_mhz : ndarray, shape (K,)
        Widths of the resources [MHz].
    radius_m : float or None
        Interference radius the table was built with (None: every cell interferes
        exactly).
    far_field_db : ndarray of float32, shape (L,), or None
        With a radius: how much the far-field term (the mean interference of the cells
        beyond the radius) lowered each link's SINR [dB]. The SINR without it,
        ``sinr_db + far_field_db``, counts only the cells within the radius and is an
        upper bound on the SINR with every cell counted exactly.
    model : RadioModel or None
        The radio model the table was computed with (None for a table made by hand). The
        annotation says ``Any``: the link table is below the radio package, which imports
        it, so it names no radio type.
    shadowing_seed : int or None
        The integer that keyed its shadowing (:func:`cellopt.radio.links.shadowing_seed`
        of the `rng` given): the same seed and model give the same gains, so what is
        built from this table later (load coupling, power gains) reads them from here.
    n_candidates : int or None
        Candidate cells per user it was built with.
    re_power_dbm : ndarray, shape (n_cells,), or None
        Each cell's power per resource element at its full power [dBm]
        (``tx_power_dbm`` less :meth:`RadioModel.rsrp_offset_db
        <cellopt.radio.RadioModel.rsrp_offset_db>`): the RSRP of a link is this less its
        coupling loss, which :meth:`to_frame` adds as ``coupling_loss_db``.
    network_fingerprint : Fingerprint or None
        The :attr:`Network.fingerprint <cellopt.network.Network.fingerprint>` of the
        network it was computed for (None for a table made by hand, or of some users
        only: :meth:`select_users`); :class:`~cellopt.Drop` refuses a table of another
        network.
    """

    user: np.ndarray
    cell: np.ndarray
    resource: np.ndarray
    rsrp_dbm: np.ndarray
    sinr_db: np.ndarray
    rate_mbps: np.ndarray
    n_users: int
    n_cells: int
    resource_mhz: np.ndarray
    radius_m: float | None = None
    far_field_db: np.ndarray | None = None
    model: Any = None  # a cellopt.radio.RadioModel, or None
    shadowing_seed: int | None = None
    n_candidates: int | None = None
    re_power_dbm: np.ndarray | None = None
    network_fingerprint: Fingerprint | None = None

    COLUMNS = ("user", "cell", "resource", "rsrp_dbm", "sinr_db", "rate_mbps")

    @property
    def columns(self) -> tuple[str, ...]:
        """The per-link columns present: :attr:`COLUMNS`, and ``far_field_db`` with a radius."""
        return self.COLUMNS if self.far_field_db is None else (*self.COLUMNS, "far_field_db")

    @property
    def n_resources(self) -> int:
        return len(self.resource_mhz)

    def __len__(self) -> int:
        return len(self.user)

    @property
    def nbytes(self) -> int:
        """Memory held by the link arrays [bytes]."""
        return sum(getattr(self, c).nbytes for c in self.columns)

    def validate(self, user_ids: Sequence | None = None, cell_ids: Sequence | None = None) -> LinkTable:
        """Check shapes, indices, order and values; return self.

        Every column has one entry per link; indices are in range; rows are sorted by
        user; no RSRP or SINR is NaN or +inf (−inf is a cell that is off) and every rate
        is finite and ≥ 0.

        Parameters
        ----------
        user_ids, cell_ids : sequence, optional
            Ids of the network's users and cells, to name offending rows by id too.

        Raises
        ------
        ValidationError
            Naming the users and cells of the offending links.
        """
        lengths = {c: np.shape(getattr(self, c)) for c in self.columns}
        if len(set(lengths.values())) != 1 or np.ndim(self.user) != 1:
            raise ValidationError(f"link table columns have shapes {lengths}; fix: give one "
                                  "entry per link in every column")
        k = self.n_resources
        problems = []
        for col, size in (("user", self.n_users), ("cell", self.n_cells), ("resource", k)):
            bad = np.flatnonzero((getattr(self, col) < 0) | (getattr(self, col) >= size))
            if len(bad):
                problems.append(f"links {describe_rows(bad)}: {col} index outside [0, {size}); "
                                f"fix: index the network's {col}s by row position")
        if problems:
            raise ValidationError(problems)
        if np.any(np.diff(self.user) < 0):
            problems.append("links are not sorted by user; fix: sort them by user (as link_table does)")
        with np.errstate(invalid="ignore"):
            bad = (np.isnan(self.rsrp_dbm) | (self.rsrp_dbm == np.inf) | np.isnan(self.sinr_db)
                   | (self.sinr_db == np.inf) | ~np.isfinite(self.rate_mbps) | (self.rate_mbps < 0))
        if bad.any():
            users = np.unique(self.user[bad])
            cells = np.unique(self.cell[bad])
            problems.append(
                f"{int(bad.sum())} links have a NaN or infinite RSRP, SINR or rate, or a negative "
                f"rate: users {_rows(users, user_ids)}, cells {_rows(cells, cell_ids)}; fix: check "
                "the radio parameters of these cells (tx_power_dbm, antenna_gain_dbi, power_dbm) "
                "and the RadioModel (path loss, spectral efficiency)")
        if problems:
            raise ValidationError(problems)
        return self

    def to_frame(self) -> pd.DataFrame:
        """The links as a DataFrame with the columns of :attr:`columns`, and
        ``coupling_loss_db`` where the table records its cells' powers
        (:attr:`re_power_dbm`; every table :func:`~cellopt.radio.link_table` makes).

        ``coupling_loss_db`` [dB] is the loss from the cell's transmitter to the user's
        receiver: path loss, plus shadowing and penetration (walls, O2I), less the
        antenna gains; ``inf`` for a cell that is off.
        """
        frame = pd.DataFrame({c: getattr(self, c) for c in self.columns})
        if self.re_power_dbm is not None:
            frame["coupling_loss_db"] = self.re_power_dbm[self.cell] - self.rsrp_dbm
        return frame

    def best_by(self, column: str = "rsrp_dbm") -> np.ndarray:
        """For each user, the cell of its link with the largest `column` (−1: no link).

        Returns
        -------
        ndarray of int64, shape (n_users,)
        """
        values = getattr(self, column)
        order = np.lexsort((-values, self.user))
        first = np.ones(len(order), bool)
        first[1:] = self.user[order][1:] != self.user[order][:-1]
        best = np.full(self.n_users, -1, dtype=np.int64)
        best[self.user[order][first]] = self.cell[order][first]
        return best

    def users_with_rate(self) -> np.ndarray:
        """Mask of the users with at least one link of positive rate, shape (n_users,)."""
        return np.bincount(self.user[self.rate_mbps > 0], minlength=self.n_users) > 0

    def radio_settings(self, builder: str) -> tuple[Any, int, int]:
        """The radio model, shadowing seed and candidate count the table was made with.

        Parameters
        ----------
        builder : str
            What needs them, for the message (e.g. ``"LoadCoupling.from_network"``).

        Returns
        -------
        model : RadioModel
            :attr:`model`, a :class:`cellopt.radio.RadioModel`.
        shadowing_seed, n_candidates : int

        Raises
        ------
        ValidationError
            For a table made by hand, which records none of them.
        """
        if self.model is None or self.shadowing_seed is None or self.n_candidates is None:
            raise ValidationError("the drop's link table records no radio model, shadowing seed or "
                                  "candidate count (it was not made by radio.link_table); fix: "
                                  "build it with cellopt.radio.link_table(network, ...), or use "
                                  f"{builder} with the model and seed it was made with")
        return self.model, self.shadowing_seed, self.n_candidates

    def select_users(self, keep: np.ndarray) -> LinkTable:
        """The links of the users in the mask `keep` (n_users,), users renumbered 0..n−1."""
        keep = np.asarray(keep)
        if keep.shape != (self.n_users,) or keep.dtype != bool:
            raise ValidationError(f"keep has shape {keep.shape} and dtype {keep.dtype}; fix: give a "
                                  f"boolean mask of shape ({self.n_users},)")
        new_index = np.cumsum(keep) - 1
        rows = keep[self.user]
        fields = {c: getattr(self, c)[rows] for c in self.columns}
        fields["user"] = new_index[fields["user"]]
        return dataclasses.replace(self, **fields, n_users=int(keep.sum()),
                                   network_fingerprint=None)  # no longer that network's users

    def __repr__(self) -> str:
        return (f"LinkTable({len(self)} links, {self.n_users} users, {self.n_cells} cells, "
                f"{self.n_resources} resource(s), {self.nbytes / 2**20:.1f} MiB)")


def _rows(positions: np.ndarray, ids: Sequence | None) -> str:
    return describe_rows(positions, None if ids is None else np.asarray(ids)[positions])
