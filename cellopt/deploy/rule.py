"""The utility of an offset rule on drops of the same cells, and of every change to it.

An *offset rule* serves each user by the cell of largest ``RSRP + offset`` among its links
(ties to the lower cell row) and shares each cell's airtime optimally among its users
(:func:`cellopt.solvers.association.in_cell_optimum`: equal shares at α = 1 under full
buffer, the in-cell optimum with demands and prices), scaling a cell's shares down to its
backhaul cap: the baselines' rule (:func:`cellopt.solvers.baselines.cell_offsets`), whose
objective ``Σ w U(r) − Σ c T`` is a sum of per-cell values.

:class:`RuleDrops` stacks the (user, cell) pairs of several drops of the same cells and
computes, with flat arrays and no loop over users or cells:

- the objective of a batch of offset vectors on every drop (:meth:`RuleDrops.objectives`);
- the change of the objective on every drop for *every* single-cell move (cell j to each
  value of the value set, the other offsets kept) at once (:meth:`RuleDrops.move_gains`):
  a move changes only the association of the users with a link to j, and only the values
  of the cells they leave or join.

Per-cell values are computed in one of two ways, equal to rounding (a test checks it).
Without finite demands and prices, and for α = 1 or α in :data:`ALPHA_ADDITIVE`, from
additive statistics of each cell's users, so that a move needs only its movers: the
in-cell optimum gives user i the rate ``r_i = (w_i R_i)^(1/α) / B`` with
``B = Σ w^(1/α) R^(1/α − 1)``, the cell carries ``T = D / B`` with ``D = Σ (w R)^(1/α)``,
its backhaul cap C scales every rate by ``s = min(1, C / T)``, and its value is
``V = (s^(1−α) B^α − W) / (1 − α)`` with ``W = Σ w``; at α = 1,
``V = A − W log W + W log s`` with ``A = Σ w log(w R)``, ``D = Σ w R`` and
``s = min(1, C W / D)``. Otherwise (demands, prices, α outside the range), from each
cell's full member list by the in-cell optimum's bisection.

With several resources the rule's in-cell shares are a convex problem per cell; the
values here then use each user's full-band rate ``Σ_k R_ijk`` (as ``load_aware`` does),
an approximation for the search only: :func:`cellopt.deploy.evaluate` is exact.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Sequence

import numpy as np

from cellopt.drop import Drop
from cellopt.errors import ValidationError
from cellopt.network import TIERS
from cellopt.problem import utility
from cellopt.solvers.association import in_cell_optimum

__all__ = ["ALPHA_ADDITIVE", "CHUNK_ENTRIES", "RuleDrops", "cells_fingerprint", "same_cells"]

#: Most pairs × values a move evaluation holds at once (about 100 MB of arrays).
CHUNK_ENTRIES = 1 << 21
#: The α beside α = 1 whose cell values come from additive statistics: ``(w R)^(1/α)``
#: stays well within the float range and its sums lose little to cancellation as users
#: move (α within 10⁻⁶ of 1 takes the member lists too).
ALPHA_ADDITIVE = (0.5, 5.0)


def cells_fingerprint(drop: Drop) -> str:
    """A short digest of the drop's cells: their ids, positions [m] and tiers, in order.

    Two drops of one network (the same cells, other users) have the same fingerprint;
    two networks that only share cell ids (0, 1, ... of two random layouts) do not.
    """
    cells = drop.network.cells
    digest = hashlib.sha256()
    for part in (cells["cell_id"].astype(str).to_numpy(), cells.geometry.x.to_numpy(float),
                 cells.geometry.y.to_numpy(float), cells["tier"].astype(str).to_numpy()):
        digest.update(np.ascontiguousarray(part).tobytes() if part.dtype != object
                      else "\x1f".join(part).encode())
    return digest.hexdigest()[:16]


def same_cells(drops: Sequence[Drop], what: str = "drops") -> None:
    """Refuse drops that do not share one set of cells (the same ids, positions and tiers,
    in the same order: :func:`cells_fingerprint`).

    Raises
    ------
    ValidationError
        Naming the first drop whose cells differ from the first drop's, and the fix.
    """
    first = drops[0].network.cells["cell_id"].to_numpy()
    fingerprint = cells_fingerprint(drops[0])
    for k, drop in enumerate(drops[1:], start=1):
        ids = drop.network.cells["cell_id"].to_numpy()
        if len(ids) != len(first) or not np.array_equal(ids, first) \
                or cells_fingerprint(drop) != fingerprint:
            raise ValidationError(
                f"{what}: drop {k} has other cells than drop 0 ({len(ids)} cells against "
                f"{len(first)}, or other ids, positions, tiers or order); fix: give drops of one "
                "network, with new users only (Scenario.build(seed, cell_seed=...) with one "
                "cell_seed, or topology.drop_users on the same network)")


@dataclasses.dataclass(frozen=True, eq=False)
class RuleDrops:
    """The (user, cell) pairs of drops of the same cells, stacked: what a rule's utility needs.

    Build it with :meth:`from_drops`. Users are numbered across the drops (drop d's users
    follow drop d − 1's); pairs are sorted by user, then cell.

    Attributes
    ----------
    n_cells, n_drops : int
    alpha : float
    user_drop : ndarray of int64, shape (n_users,)
    weight : ndarray, shape (n_users,)
    pair_user, pair_cell : ndarray of int64, shape (n_pairs,)
    rate_mbps : ndarray, shape (n_pairs,)
        Full-band rate of the pair ``Σ_k R_ijk`` [Mbit/s].
    rsrp_dbm : ndarray, shape (n_pairs,)
        The pair's RSRP (largest over resources) [dBm].
    cap_mbps : ndarray, shape (n_pairs,)
        Most useful rate on the pair, ``min(d_i, R_ij)`` [Mbit/s].
    price_per_mbps, backhaul_mbps : ndarray, shape (n_drops, n_cells)
    cell_tier : ndarray of int8, shape (n_cells,) or None
    additive : bool
        Whether per-cell values come from additive statistics (no finite demand, no
        price, α = 1 or in :data:`ALPHA_ADDITIVE`), see the module notes.
    """

    n_cells: int
    n_drops: int
    alpha: float
    user_drop: np.ndarray
    weight: np.ndarray
    pair_user: np.ndarray
    pair_cell: np.ndarray
    rate_mbps: np.ndarray
    rsrp_dbm: np.ndarray
    cap_mbps: np.ndarray
    price_per_mbps: np.ndarray
    backhaul_mbps: np.ndarray
    cell_tier: np.ndarray | None
    additive: bool

    @classmethod
    def from_drops(cls, drops: Sequence[Drop]) -> RuleDrops:
        """Stack the pairs of `drops` (one network's cells, each drop its own users).

        Raises
        ------
        ValidationError
            For no drops, drops of different cells or α, or a problem without RSRP.
        """
        drops = list(drops)
        if not drops or not all(isinstance(d, Drop) for d in drops):
            raise ValidationError("drops: give one Drop or a list of Drops of the same cells "
                                  "(Scenario.build, Drop.from_network)")
        same_cells(drops)
        alphas = {float(d.problem.alpha) for d in drops}
        if len(alphas) > 1:
            raise ValidationError(f"drops: their problems have different alpha {sorted(alphas)}; fix: "
                                  "build every drop with one alpha")
        users, cells, rates, rsrps, caps, drop_of, weights = [], [], [], [], [], [], []
        offset = 0
        for k, drop in enumerate(drops):  # a loop over drops
            p = drop.problem
            if p.rsrp_dbm is None:
                raise ValidationError(f"drops: drop {k}'s problem has no rsrp_dbm; fix: build it with "
                                      "Drop.from_network(network, links)")
            key = p.user.astype(np.int64) * p.n_cells + p.cell
            uniq, inverse = np.unique(key, return_inverse=True)
            rate = np.bincount(inverse, p.rate_mbps, minlength=len(uniq))
            rsrp = np.full(len(uniq), -np.inf)
            np.maximum.at(rsrp, inverse, p.rsrp_dbm)
            user = uniq // p.n_cells
            users.append(user + offset)
            cells.append(uniq % p.n_cells)
            rates.append(rate)
            rsrps.append(rsrp)
            caps.append(np.minimum(p.demand_mbps[user], rate))
            drop_of.append(np.full(p.n_users, k, np.int64))
            weights.append(p.weight)
            offset += p.n_users
        problems = [d.problem for d in drops]
        price = np.stack([p.price_per_mbps for p in problems])
        demand_finite = any(np.isfinite(p.demand_mbps).any() for p in problems)
        alpha = alphas.pop()
        low, high = ALPHA_ADDITIVE
        conditioned = alpha == 1.0 or (low <= alpha <= high and abs(alpha - 1.0) >= 1e-6)
        return cls(n_cells=problems[0].n_cells, n_drops=len(drops), alpha=alpha,
                   user_drop=np.concatenate(drop_of), weight=np.concatenate(weights),
                   pair_user=np.concatenate(users), pair_cell=np.concatenate(cells),
                   rate_mbps=np.concatenate(rates), rsrp_dbm=np.concatenate(rsrps),
                   cap_mbps=np.concatenate(caps), price_per_mbps=price,
                   backhaul_mbps=np.stack([p.backhaul_mbps for p in problems]),
                   cell_tier=problems[0].cell_tier,
                   additive=conditioned and not demand_finite and not price.any())

    # ------------------------------------------------------------------ sizes
    @property
    def n_users(self) -> int:
        return len(self.weight)

    @property
    def n_pairs(self) -> int:
        return len(self.pair_user)

    @property
    def pair_drop(self) -> np.ndarray:
        return self.user_drop[self.pair_user]

    @functools.cached_property
    def slots(self) -> np.ndarray:
        """Each user's pairs in cell order, padded with −1, shape (n_users, most pairs of a user)."""
        count = np.bincount(self.pair_user, minlength=self.n_users)
        width = int(count.max(initial=0))
        slots = np.full((self.n_users, width), -1, np.int64)
        start = np.cumsum(count) - count
        slots[self.pair_user, np.arange(self.n_pairs) - start[self.pair_user]] = np.arange(self.n_pairs)
        return slots

    def scale(self, offsets_db: np.ndarray) -> np.ndarray:
        """Each drop's utility scale S_d at `offsets_db`, shape (n_drops,): the derivative of
        its utility in a common factor of every rate (``cellopt.solvers.certificate.
        utility_scale``: Σ w at α = 1), so that a utility change ΔU is a rate-equivalent
        factor ``≈ e^(ΔU/S)``."""
        total = np.bincount(self.user_drop, self.weight, minlength=self.n_drops)
        if self.alpha == 1.0:
            return total
        return total + (1.0 - self.alpha) * self._utilities(self.association(offsets_db))

    # ------------------------------------------------------------------ association
    def association(self, offsets_db: np.ndarray) -> np.ndarray:
        """Each user's pair under the rule, shape (n_users,) (−1: no pair)."""
        return self.associations(np.asarray(offsets_db, float)[None, :])[0]

    def associations(self, offsets_db: np.ndarray) -> np.ndarray:
        """Each user's pair under each offset vector, shape (n_vectors, n_users) (−1: none).

        Parameters
        ----------
        offsets_db : ndarray, shape (n_vectors, n_cells)
        """
        n_vec = offsets_db.shape[0]
        out = np.full((n_vec, self.n_users), -1, np.int64)
        slots = self.slots
        if not slots.size:
            return out
        padded = slots < 0
        pair = np.maximum(slots, 0)
        step = max(CHUNK_ENTRIES // slots.size, 1)
        for start in range(0, n_vec, step):  # blocks of vectors, to bound memory
            block = offsets_db[start:start + step]
            score = self.rsrp_dbm[pair][None] + block[:, self.pair_cell[pair]]  # (b, U, m)
            score[:, padded] = -np.inf
            best = np.argmax(score, axis=2)  # the first maximum: the lower cell on ties
            chosen = np.take_along_axis(slots[None], best[..., None], axis=2)[..., 0]
            out[start:start + step] = np.where(np.isneginf(np.max(score, axis=2)), -1, chosen)
        return out

    # ------------------------------------------------------------------ values
    def objectives(self, offsets_db: np.ndarray) -> np.ndarray:
        """The rule's objective on each drop for each offset vector, shape (n_vectors, n_drops).

        Parameters
        ----------
        offsets_db : ndarray, shape (n_vectors, n_cells)
        """
        assoc = self.associations(offsets_db)
        n_vec = assoc.shape[0]
        has = assoc >= 0
        vec = np.broadcast_to(np.arange(n_vec)[:, None], assoc.shape)[has]
        pair = assoc[has]
        n_cd = self.n_drops * self.n_cells
        group = vec * n_cd + self.pair_drop[pair] * self.n_cells + self.pair_cell[pair]
        values = self.group_values(group, pair, np.tile(np.arange(n_cd), n_vec))
        return values.reshape(n_vec, self.n_drops, self.n_cells).sum(axis=2)

    def _utilities(self, assoc: np.ndarray) -> np.ndarray:
        """Each drop's utility part Σ w U(r) under one association, shape (n_drops,)."""
        has = assoc >= 0
        pair = assoc[has]
        group = self.pair_drop[pair] * self.n_cells + self.pair_cell[pair]
        rate, _ = self._member_rates(group, pair, np.arange(self.n_drops * self.n_cells))
        user = self.pair_user[pair]
        with np.errstate(divide="ignore"):
            util = self.weight[user] * utility(rate, self.alpha)
        return np.bincount(self.user_drop[user], util, minlength=self.n_drops)

    def group_values(self, group: np.ndarray, pair: np.ndarray, group_cell: np.ndarray) -> np.ndarray:
        """The rule's value of each group of users: one cell of one drop, given its members.

        Parameters
        ----------
        group : ndarray of int64, shape (n,)
            Group of each member, in [0, n_groups).
        pair : ndarray of int64, shape (n,)
            The member's pair (its user and its rate in that cell).
        group_cell : ndarray of int64, shape (n_groups,)
            The cell of each group, as ``drop · n_cells + cell``.

        Returns
        -------
        ndarray, shape (n_groups,)
            ``Σ w U(r) − c T`` of each group's users under the in-cell optimum and the
            backhaul scaling [utility]; 0 for an empty group.
        """
        n_groups = len(group_cell)
        cap = self.backhaul_mbps.reshape(-1)[group_cell]
        if self.additive:
            return self.stat_value(_summed(group, self.pair_stats(pair), n_groups), cap, linear=True)
        rate, price = self._member_rates(group, pair, group_cell)
        w = self.weight[self.pair_user[pair]]
        with np.errstate(divide="ignore"):
            value = w * utility(rate, self.alpha) - price * rate
        return np.bincount(group, value, minlength=n_groups)

    def pair_stats(self, pair: np.ndarray) -> np.ndarray:
        """The additive statistics of each pair's user in the pair's cell, shape (n, 3).

        ``(w, w log(w R), w R)`` at α = 1 (W, A, D of the module notes); otherwise
        ``(w, w^(1/α) R^(1/α − 1), (w R)^(1/α))`` (W, B, D).
        """
        w = self.weight[self.pair_user[pair]]
        r = self.rate_mbps[pair]
        if self.alpha == 1.0:
            return np.column_stack([w, w * np.log(w * r), w * r])
        a = 1.0 / self.alpha
        return np.column_stack([w, w ** a * r ** (a - 1.0), (w * r) ** a])

    def stat_value(self, sums: np.ndarray, cap: np.ndarray, *, linear: bool) -> np.ndarray:
        """A cell's value from its users' summed statistics (the module notes).

        Parameters
        ----------
        sums : ndarray, shape (..., 3)
            :meth:`pair_stats` summed over the cell's users.
        cap : ndarray, shape (...)
            The cell's backhaul cap [Mbit/s] (inf: none).
        linear : bool
            At α = 1, whether to include ``A`` (which is linear in the users; a caller
            adding each user's own term leaves it out). Unused at other α.

        Returns
        -------
        ndarray, shape (...)
            0 where the cell has no users.
        """
        total, middle, rate_sum = sums[..., 0], sums[..., 1], sums[..., 2]
        positive = total > 0
        w = np.where(positive, total, 1.0)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if self.alpha == 1.0:
                scale = np.where(np.isfinite(cap) & positive,
                                 np.minimum(1.0, cap * w / np.where(rate_sum > 0, rate_sum, 1.0)), 1.0)
                value = -w * np.log(w) + w * np.log(scale) + (middle if linear else 0.0)
            else:
                b = np.where(positive, middle, 1.0)
                scale = np.where(np.isfinite(cap) & positive,
                                 np.minimum(1.0, cap * b / np.where(rate_sum > 0, rate_sum, 1.0)), 1.0)
                # Σ w U(s r) = W expm1(log(s^(1−α) B^α / W)) / (1 − α), without cancellation
                ratio = (1.0 - self.alpha) * np.log(scale) + self.alpha * np.log(b) - np.log(w)
                value = w * np.expm1(ratio) / (1.0 - self.alpha)
        return np.where(positive, value, 0.0)

    def _member_rates(self, group: np.ndarray, pair: np.ndarray, group_cell: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
        """Each member's rate under its group's in-cell optimum and backhaul scaling, and
        the price of its cell's traffic, both shape (n,)."""
        n_groups = len(group_cell)
        price = self.price_per_mbps.reshape(-1)[group_cell][group]
        rate = self.rate_mbps[pair]
        x, _ = in_cell_optimum(group, rate, self.weight[self.pair_user[pair]], price,
                               self.cap_mbps[pair], self.alpha, n_groups)
        r = x * rate
        traffic = np.bincount(group, r, minlength=n_groups)
        cap = self.backhaul_mbps.reshape(-1)[group_cell]
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(traffic > cap, cap / traffic, 1.0)
        return r * scale[group], price

    # ------------------------------------------------------------------ moves
    def state(self, offsets_db: np.ndarray) -> _State:
        """What every move's evaluation reads of the offsets `offsets_db`, computed once."""
        return _State.of(self, offsets_db)

    def move_gains(self, state: _State, values_db: np.ndarray, cells: np.ndarray | None = None
                   ) -> np.ndarray:
        """The change of every drop's objective for every single-cell move.

        Move ``(j, g)`` sets cell j's offset to ``values_db[g]`` and keeps the others. A
        user with a link to j is in j after the move when its score there beats its best
        other cell's (ties to the lower cell row), exactly as :meth:`association` decides;
        only such users move, and only the cells they leave or join change value. The
        pairs are taken a block of cells at a time, so that memory stays within
        :data:`CHUNK_ENTRIES` (pairs × values) whatever the network's size.

        Parameters
        ----------
        state : _State
            Of the current offsets (:meth:`state`).
        values_db : ndarray, shape (n_values,)
        cells : ndarray of int, optional
            Only the moves of these cells (default every cell); the other rows are 0.

        Returns
        -------
        ndarray, shape (n_cells, n_values, n_drops)
            Objective after the move minus the current one, per drop [utility]; 0 where
            value g is cell j's current offset.
        """
        n_values = len(values_db)
        gain = np.zeros((self.n_cells, n_values, self.n_drops))
        for pairs in self._chunks(n_values, cells):
            inside = self._inside(state, pairs, values_db)
            if self.additive:
                self._additive_chunk(state, pairs, inside, gain)
            else:
                self._member_chunk(state, pairs, inside, gain)
        return gain

    def touched(self, state: _State, cells: np.ndarray, new_db: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
        """The cells each of some single-cell moves changes: the cell and those its users
        leave or join, on any drop.

        Parameters
        ----------
        state : _State
            Of the current offsets (:meth:`state`).
        cells : ndarray of int, shape (m,)
            The moving cells (distinct).
        new_db : ndarray, shape (m,)
            Each one's new offset.

        Returns
        -------
        row, cell : ndarray of int64
            Pairs (move row in `cells`, touched cell), the moving cell included.
        """
        move_of_cell = np.full(self.n_cells, -1, np.int64)
        move_of_cell[cells] = np.arange(len(cells))
        pairs = np.flatnonzero(move_of_cell[self.pair_cell] >= 0)
        row = move_of_cell[self.pair_cell[pairs]]
        trial = self.rsrp_dbm[pairs] + np.asarray(new_db, float)[row]
        inside = (trial > state.other_score[pairs]) | (
            (trial == state.other_score[pairs]) & (self.pair_cell[pairs] < state.other_cell[pairs]))
        moved = inside != state.here[pairs]
        other = state.other_cell[pairs[moved]]
        return (np.r_[np.arange(len(cells)), row[moved]].astype(np.int64),
                np.r_[cells, other].astype(np.int64))

    def neighbours(self, cells: np.ndarray, old: _State, new: _State) -> np.ndarray:
        """The cells whose moves change value when `cells` change offset (from state `old`
        to `new`): those sharing a user with a moved cell or with a cell whose users changed.

        Returns
        -------
        ndarray of int64
            Sorted cells.
        """
        changed = np.zeros(self.n_cells, bool)
        changed[cells] = True
        moved = np.flatnonzero(old.best != new.best)
        for state in (old, new):
            pair = state.best[moved]
            changed[self.pair_cell[pair[pair >= 0]]] = True
        users = np.zeros(self.n_users, bool)
        users[self.pair_user[changed[self.pair_cell]]] = True
        return np.unique(self.pair_cell[users[self.pair_user]])

    def tier_restricted(self) -> RuleDrops:
        """The same drops with each user's best pair per tier only: the association of
        any offsets that are equal within each tier is unchanged, with far fewer pairs."""
        if self.cell_tier is None or not self.n_pairs:
            return self
        key = self.pair_user * len(TIERS) + self.cell_tier[self.pair_cell]
        order = np.lexsort((-self.rsrp_dbm, key))  # stable: ties keep the cell order
        first = order[np.r_[True, key[order][1:] != key[order][:-1]]]
        keep = np.sort(first)
        return dataclasses.replace(
            self, pair_user=self.pair_user[keep], pair_cell=self.pair_cell[keep],
            rate_mbps=self.rate_mbps[keep], rsrp_dbm=self.rsrp_dbm[keep], cap_mbps=self.cap_mbps[keep])

    def _chunks(self, n_values: int, cells: np.ndarray | None = None) -> list[np.ndarray]:
        """The pairs of `cells` (default all), grouped by cell, in blocks of whole cells of
        at most :data:`CHUNK_ENTRIES` pairs × values (a cell with more is a block alone)."""
        chosen = np.ones(self.n_cells, bool) if cells is None else np.isin(np.arange(self.n_cells),
                                                                          cells)
        pairs = np.flatnonzero(chosen[self.pair_cell])
        order = pairs[np.argsort(self.pair_cell[pairs], kind="stable")]
        per_block = max(CHUNK_ENTRIES // max(n_values, 1), 1)
        ends = np.cumsum(np.bincount(self.pair_cell[order], minlength=self.n_cells))
        blocks, start = [], 0
        while start < len(order):  # a loop over blocks of cells, not over cells
            stop = int(np.searchsorted(ends, start + per_block, side="right"))
            stop = max(stop, int(np.searchsorted(ends, start, side="right")) + 1)
            end = int(ends[min(stop, self.n_cells) - 1])
            blocks.append(order[start:end])
            start = end
        return blocks

    def _inside(self, state: _State, pairs: np.ndarray, values_db: np.ndarray) -> np.ndarray:
        """Whether each pair's user is in the pair's cell after each move of that cell,
        shape (len(pairs), n_values)."""
        trial = self.rsrp_dbm[pairs, None] + values_db[None, :]
        other = state.other_score[pairs, None]
        return (trial > other) | ((trial == other)
                                  & (self.pair_cell[pairs] < state.other_cell[pairs])[:, None])

    def _additive_chunk(self, state: _State, pairs: np.ndarray, inside: np.ndarray,
                        gain: np.ndarray) -> None:
        """Add the chunk's gains from the movers alone (additive statistics).

        The movers of cell j's moves that come from (or go to) one other cell k on one
        drop form an *edge* (drop, j, k); along the value set they join j in the order of
        their thresholds (or leave it in the reverse order), so every edge's changes at
        every value are cumulative sums over its pairs' first values inside j. At α = 1
        the statistic A is linear: each mover's own change is added directly.
        """
        nc, n_values = self.n_cells, inside.shape[1]
        moving = state.other[pairs] >= 0  # a pair without another cell never moves
        pairs, inside = pairs[moving], inside[moving]
        if not len(pairs):
            return
        other = state.other[pairs]
        first_in = n_values - inside.sum(axis=1)  # the first value at which the user is in j
        drop = self.pair_drop[pairs]
        key = (drop * nc + self.pair_cell[pairs]) * nc + self.pair_cell[other]
        edge_key, edge = np.unique(key, return_inverse=True)
        n_edges = len(edge_key)
        width = n_values + 1  # first_in = n_values: never in j
        slot = edge * width + first_in
        here = state.here[pairs]

        def change(amount: np.ndarray) -> np.ndarray:
            """Σ `amount` of the edge's joiners less that of its leavers at each value,
            shape (n_edges, n_values): joiners from their first value on, leavers below it."""
            join = np.bincount(slot, np.where(here, 0.0, amount), minlength=n_edges * width)
            leave = np.bincount(slot, np.where(here, amount, 0.0), minlength=n_edges * width)
            join, leave = join.reshape(n_edges, width), leave.reshape(n_edges, width)
            below = leave.sum(axis=1, keepdims=True) - np.cumsum(leave, axis=1)[:, :n_values]
            return np.cumsum(join[:, :n_values], axis=1) - below

        stats_j, stats_k = self.pair_stats(pairs), self.pair_stats(other)
        linear = self.alpha == 1.0  # A: the movers' own terms, added once for both cells
        columns = (0, 2) if linear else (0, 1, 2)
        to_j = np.zeros((n_edges, n_values, 3))
        from_k = np.zeros((n_edges, n_values, 3))
        for c in columns:  # a loop over the (two or three) statistics
            to_j[..., c] = change(stats_j[:, c])
            from_k[..., c] = change(stats_k[:, c])
        cap = self.backhaul_mbps.reshape(-1)
        k_cell = (edge_key // nc // nc) * nc + edge_key % nc  # drop · n_cells + k
        k_change = self._value_change(state.sums[k_cell], -from_k, cap[k_cell])
        # the edges of one (drop, j) are contiguous: their changes to j add up
        j_key = edge_key // nc
        starts = np.flatnonzero(np.r_[True, j_key[1:] != j_key[:-1]])
        j_cell = j_key[starts]
        per_j = np.add.reduceat(k_change, starts, axis=0)
        if linear:
            per_j += np.add.reduceat(change(stats_j[:, 1] - stats_k[:, 1]), starts, axis=0)
        per_j += self._value_change(state.sums[j_cell], np.add.reduceat(to_j, starts, axis=0),
                                    cap[j_cell])
        gain[j_cell % nc, :, j_cell // nc] += per_j

    def _value_change(self, sums: np.ndarray, delta: np.ndarray, cap: np.ndarray) -> np.ndarray:
        """The change of cells' values (without A at α = 1) when their statistics `sums`,
        shape (n, 3), change by `delta`, shape (n, n_values, 3); a total weight that falls to
        rounding level is an empty cell."""
        before = sums[:, None, :]
        after = before + delta
        empty = np.abs(after[..., 0]) <= 1e-12 * np.maximum(before[..., 0], 1.0)
        after = np.where(empty[..., None], 0.0, after)
        cap = np.broadcast_to(cap[:, None], after.shape[:2])
        value = self.stat_value(after, cap, linear=False) - self.stat_value(
            np.broadcast_to(before, after.shape), cap, linear=False)
        return np.where(delta[..., 0] == 0.0, 0.0, value)

    def _member_chunk(self, state: _State, pairs: np.ndarray, inside: np.ndarray,
                      gain: np.ndarray) -> None:
        """Add the chunk's gains from the full member lists of the cells each move touches."""
        nc, n_d, n_values = self.n_cells, self.n_drops, inside.shape[1]
        row, value = np.nonzero(inside != state.here[pairs, None])  # the movers of each move
        pair = pairs[row]
        join = ~state.here[pair]
        user = self.pair_user[pair]
        to_pair = np.where(join, pair, state.other[pair])
        slot = (self.pair_cell[pair] * n_values + value) * n_d + self.user_drop[user]
        from_cell = self.pair_cell[np.where(join, state.best[user], pair)]
        to_cell = self.pair_cell[to_pair]
        key = np.unique(np.concatenate([slot * nc + from_cell, slot * nc + to_cell]))
        cell = (key // nc % n_d) * nc + key % nc  # (drop, cell) of each touched group
        count = state.start[cell + 1] - state.start[cell]
        group = np.repeat(np.arange(len(key)), count)
        pos = np.repeat(state.start[cell] - np.cumsum(np.r_[0, count[:-1]]), count) \
            + np.arange(count.sum())
        kept_user = state.members[pos]
        slot_of_group = key // nc
        stays = ~np.isin(slot_of_group[group] * self.n_users + kept_user, slot * self.n_users + user)
        group = np.concatenate([group[stays], np.searchsorted(key, slot * nc + to_cell)])
        members = np.concatenate([state.best[kept_user[stays]], to_pair])
        change = self.group_values(group, members, cell) - state.value[cell]
        gain.reshape(-1)[:] += np.bincount(slot_of_group, change, minlength=gain.size)


@dataclasses.dataclass(frozen=True, eq=False)
class _State:
    """What every move's evaluation reads of the current offsets, computed once.

    Attributes
    ----------
    best, second : ndarray of int64, shape (n_users,)
        Each user's best and second pair (−1: none).
    here : ndarray of bool, shape (n_pairs,)
        The pair is its user's current cell.
    other : ndarray of int64, shape (n_pairs,)
        The user's best pair in a cell other than the pair's (−1: none).
    other_score : ndarray, shape (n_pairs,)
        Its score (−inf: none) ...
    other_cell : ndarray of int64, shape (n_pairs,)
        ... and its cell (n_cells: none).
    sums : ndarray, shape (n_drops · n_cells, 3)
        The additive statistics summed over each cell's users (additive values).
    members, start : ndarray of int64
        The users of each (drop, cell), a CSR (member lists).
    value : ndarray, shape (n_drops · n_cells,)
        Each (drop, cell)'s current value (member lists).
    """

    best: np.ndarray
    second: np.ndarray
    here: np.ndarray
    other: np.ndarray
    other_score: np.ndarray
    other_cell: np.ndarray
    sums: np.ndarray
    members: np.ndarray
    start: np.ndarray
    value: np.ndarray

    @classmethod
    def of(cls, rule: RuleDrops, offsets_db: np.ndarray) -> _State:
        nc, n_cd = rule.n_cells, rule.n_drops * rule.n_cells
        score = rule.rsrp_dbm + np.asarray(offsets_db, float)[rule.pair_cell]
        slots = rule.slots  # (U, m): each user's pairs in cell order
        best = np.full(rule.n_users, -1, np.int64)
        second = np.full(rule.n_users, -1, np.int64)
        if slots.size:
            ranked = np.where(slots >= 0, -score[np.maximum(slots, 0)], np.inf)
            order = np.argsort(ranked, axis=1, kind="stable")  # stable: ties keep the cell order
            top = np.take_along_axis(slots, order[:, :2], axis=1)
            best = top[:, 0]
            if top.shape[1] > 1:
                second = top[:, 1]
        here = best[rule.pair_user] == np.arange(rule.n_pairs)
        other = np.where(here, second[rule.pair_user], best[rule.pair_user])
        known = other >= 0
        other_score = np.where(known, score[np.maximum(other, 0)], -np.inf)
        other_cell = np.where(known, rule.pair_cell[np.maximum(other, 0)], nc)
        served = np.flatnonzero(best >= 0)
        pair = best[served]
        cell = rule.user_drop[served] * nc + rule.pair_cell[pair]
        none = np.zeros(0, np.int64)
        if rule.additive:
            return cls(best, second, here, other, other_score, other_cell,
                       sums=_summed(cell, rule.pair_stats(pair), n_cd),
                       members=none, start=none, value=np.zeros(0))
        by_cell = np.argsort(cell, kind="stable")
        return cls(best, second, here, other, other_score, other_cell, sums=np.zeros((0, 3)),
                   members=served[by_cell], start=np.searchsorted(cell[by_cell], np.arange(n_cd + 1)),
                   value=rule.group_values(cell, pair, np.arange(n_cd)))


def _summed(group: np.ndarray, stats: np.ndarray, n_groups: int) -> np.ndarray:
    """Statistics (n, k) summed per group, shape (n_groups, k)."""
    return np.stack([np.bincount(group, stats[:, c], minlength=n_groups)
                     for c in range(stats.shape[1])], axis=1)
