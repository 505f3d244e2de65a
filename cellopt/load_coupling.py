"""Load-coupled interference: a cell interferes only on the share of the band it uses.

With finite demands a cell need not transmit all the time. If cell *j* uses the share
``ρ_j`` of its time-frequency resources (its *load*) and its neighbours transmit on
independent shares, a user of cell *j* sees the interference of cell *k* on average
scaled by ``ρ_k``::

    SINR_ij(ρ) = S_ij / (N + Σ_{k≠j} ρ_k I_ik)

(the load-coupling model of Siomina and Yuan). Rates therefore depend on loads, and
loads on rates: for a fixed split of every user's demand ``d_i`` over its links, the
loads solve ``ρ_j = min(1, Σ_{e∈j} d_e / R_e(ρ))``. The right-hand side is monotone
increasing in ρ, so iterating it from ``ρ = 1`` decreases monotonically to the fixed
point (:meth:`LoadCoupling.fixed_point`); a cell whose demand does not fit even then
stays at ``ρ_j = 1``: it is *overloaded*.

With an optimizer in the loop (:func:`solve_load_coupled`) the association changes
with the rates: each round solves the association problem at the current loads, with
each cell's airtime capped at its load, and the fixed point of that round's traffic
gives the next loads, which never rise; the rounds stop when the loads settle or a
round gains nothing. The
reported bound is that of the last round's problem (``bound_kind = "fixed_loads"``):
the problem is not convex in the loads, so no bound over every load pattern is claimed.

Interference is summed exactly over each user's ``n_interferers`` strongest cells; the
rest count at full load (:class:`~cellopt.power.GainTable`), a conservative choice that
never overestimates a rate and is exact when ``n_interferers`` covers every cell.
Links and users are those of the problem at full load: a link too weak to carry
anything when every cell transmits is not offered when its neighbours go quiet.

A coupling describes one network, radio model and shadowing seed, and is refused with
any problem whose full-load rates are not its own (:class:`LoadCoupling`, "Agreement").
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any

import numpy as np

from cellopt.checks import check_count, check_number
from cellopt.drop import Drop
from cellopt.errors import ValidationError
from cellopt.network import Fingerprint, Network, check_same_network
from cellopt.power.gains import GainTable, check_agreement, disagreeing_links
from cellopt.problem import Problem
from cellopt.radio.model import RadioModel
from cellopt.solution import Solution
from cellopt.solvers.api import solve
from cellopt.solvers.certificate import certified_gap
from cellopt.solvers.result import apply_status_rule, build_solution
from cellopt.status import MAX_ITER

__all__ = ["LOST_ROUND", "MIN_LOAD", "SATURATED", "LoadCoupling", "LoadFixedPoint", "solve_load_coupled"]

#: A cell that used at least 1 − SATURATED of its airtime cap in a round is saturated:
#: its users would take more, so it keeps its load in the next round.
SATURATED = 1e-2
#: The smallest airtime cap of a round of :func:`solve_load_coupled`: a cell whose load
#: falls below it may still use up to this share, so that its links' rates stay
#: representable.
MIN_LOAD = 1e-6
#: A round of :func:`solve_load_coupled` that loses more than this rate factor to the
#: round before (an inexact solve, within its tol) is dropped for the one before; a smaller
#: loss is round-off, and the later round's lower loads are kept.
LOST_ROUND = 1e-9


@dataclasses.dataclass(frozen=True)
class LoadFixedPoint:
    """Result of :meth:`LoadCoupling.fixed_point`.

    Attributes
    ----------
    load : ndarray, shape (n_cells,)
        Share of each cell's band in use, in [0, 1].
    required : ndarray, shape (n_cells,)
        The airtime each cell's demand needs at `load`, before the cap at 1: above 1 for
        an overloaded cell.
    overloaded : ndarray of bool, shape (n_cells,)
        Cells whose demand does not fit (``required > 1``).
    converged : bool
        Whether the loads moved by at most `tol` in the last iteration.
    n_iter : int
    rate_mbps : ndarray, shape (L,)
        Link rates at `load`.
    """

    load: np.ndarray
    required: np.ndarray
    overloaded: np.ndarray
    converged: bool
    n_iter: int
    rate_mbps: np.ndarray


@dataclasses.dataclass(frozen=True, eq=False)
class LoadCoupling:
    """Link rates of a problem as a function of the cells' loads.

    Attributes
    ----------
    gains : GainTable
        Each user's strongest cells and the lumped rest (rows: the users of `user`); it
        records the shadowing seed and radio model it was computed with.
    user : ndarray of int64, shape (L,)
        Row in `gains` of each link's user.
    cell : ndarray of int64, shape (L,)
        Each link's cell.
    signal_mw : ndarray, shape (L,)
        Received power of each link's own cell at full power [mW].
    link_rate_mbps : ndarray, shape (L,), optional
        The full-load rates [Mbit/s] of the problem's links it was built and checked
        for (the link table's); None for a coupling made by hand, which is then
        compared on its own full-load rates (:meth:`rates_mbps` at load 1).
    network_fingerprint : Fingerprint, optional
        The :attr:`~cellopt.network.Network.fingerprint` of the network it was built on,
        with the problem's users only (:meth:`~cellopt.network.Network.fingerprint_of_users`);
        a :class:`~cellopt.Drop` refuses a coupling of another network. None for a
        coupling made by hand.

    Notes
    -----
    **Agreement.** A coupling describes one network, radio model and shadowing seed; a
    problem's links carry the rates of one link table. The two are compared wherever
    they meet, on every link, by what must be equal when both come from the same
    network and seed: the full-load rates and SINRs (to round-off,
    :func:`~cellopt.power.gains.disagreeing_links`; at full load every cell interferes,
    so the coupling's rates equal the link table's whatever `n_interferers` is).

    - :meth:`from_network` compares its full-load rates (and SINRs, when the problem
      has them) with the problem's, so a coupling built with another seed, model,
      candidate count or network is refused even when it follows every cell (a cell
      set that matches proves nothing then), naming both and the fix.
    - :meth:`from_drop` does the same against the drop's link table; for a table with an
      interference radius, whose rates approximate the far cells by their mean, each
      link's full-load SINR must be at most its near-only SINR (an upper bound on the
      exact one).
    - :meth:`check` (called by :func:`solve_load_coupled` and :class:`~cellopt.Drop`)
      compares a problem's links and rates with `link_rate_mbps`.
    """

    gains: GainTable
    user: np.ndarray
    cell: np.ndarray
    signal_mw: np.ndarray
    link_rate_mbps: np.ndarray | None = None
    network_fingerprint: Fingerprint | None = None

    @classmethod
    def from_network(
        cls,
        network: Network,
        problem: Problem,
        *,
        user_rows: np.ndarray | None = None,
        n_candidates: int = 8,
        n_interferers: int = 32,
        model: RadioModel | None = None,
        rng: np.random.Generator | int | None = None,
    ) -> LoadCoupling:
        """The coupling of `problem`'s links, whose rates came from `network`.

        Parameters
        ----------
        network : Network
        problem : Problem
            Built from ``radio.link_table(network, n_candidates, model=model, rng=rng)``
            (one resource, fixed powers, no interference radius: use :meth:`from_drop`
            for a table with one).
        user_rows : ndarray of int, shape (problem.n_users,), optional
            The network row of each problem user (default: the same rows, as when no
            user was left out).
        n_candidates : int
            As given to the link table.
        n_interferers : int
            Cells per user whose load is followed exactly (≥ `n_candidates`).
        model : RadioModel, optional
        rng : int or numpy.random.Generator, optional
            The shadowing seed given to the link table (same seed, same gains).

        Raises
        ------
        ValidationError
            For a problem with several resources or power patterns, user rows that do
            not match, links whose cell is not among the user's strongest cells, or
            full-load rates that are not the problem's (a different model, seed,
            candidate count or network than the link table's; see "Agreement"), naming
            both and the fix.
        """
        coupling = cls._build(network, problem, user_rows, n_candidates, n_interferers, model,
                              rng)
        rate = coupling.rates_mbps(np.ones(coupling.n_cells))
        with np.errstate(divide="ignore"):
            sinr_db = 10.0 * np.log10(coupling.sinr(np.ones(coupling.n_cells)))
        off = disagreeing_links(rate, problem.rate_mbps, sinr_db, problem.sinr_db)
        check_agreement(off, rate, problem.rate_mbps, ours=coupling._name("from_network"),
                        theirs="the problem's links",
                        fix="build the coupling with the model, shadowing seed (rng) and "
                            "n_candidates of the link table the problem came from "
                            "(LoadCoupling.from_drop(drop) reads them from the drop's table)")
        return coupling

    @classmethod
    def _build(cls, network: Network, problem: Problem, user_rows: np.ndarray | None,
               n_candidates: int, n_interferers: int, model: RadioModel | None,
               rng: np.random.Generator | int | None) -> LoadCoupling:
        """The coupling of `problem`'s links on `network`, its rates not yet compared."""
        if problem.n_resources != 1 or problem.pattern_cost is not None:
            raise ValidationError(f"load coupling needs one resource at fixed powers; the problem "
                                  f"has {problem.n_resources} resources"
                                  + (" with power patterns" if problem.pattern_cost is not None else "")
                                  + "; fix: use one band (no resource_mhz split) and no patterns")
        rows = np.arange(problem.n_users) if user_rows is None else np.asarray(user_rows)
        if rows.shape != (problem.n_users,) or (len(rows) and not (
                np.issubdtype(rows.dtype, np.integer) and 0 <= rows.min()
                and rows.max() < network.n_users)):
            raise ValidationError(f"user_rows must give the network row (0 ≤ row < "
                                  f"{network.n_users}) of each of the problem's "
                                  f"{problem.n_users} users; fix: pass drop.solvable's indices")
        gains = GainTable.from_network(network, n_candidates=n_candidates,
                                       n_interferers=n_interferers, model=model, rng=rng)
        kept = np.unique(rows)
        gains = gains.take_users(kept)
        user = np.searchsorted(kept, rows[problem.user])
        match = gains.cell[user] == problem.cell[:, None]  # (L, n_interferers)
        missing = ~match.any(axis=1)
        if missing.any():
            bad = np.flatnonzero(missing)[:5]
            raise ValidationError(f"links {bad.tolist()} serve users from cells that are not among "
                                  f"their {gains.cell.shape[1]} strongest; fix: build the coupling "
                                  "with the link table's model, seed and n_candidates")
        column = match.argmax(axis=1)
        p_max_mw = 10.0 ** (gains.max_power_dbm / 10.0)
        signal = gains.gain_mw_per_mw[user, column] * p_max_mw[problem.cell]
        return cls(gains=gains, user=user, cell=problem.cell.copy(), signal_mw=signal,
                   link_rate_mbps=problem.rate_mbps.copy(),
                   network_fingerprint=network.fingerprint_of_users(kept))

    @classmethod
    def from_drop(cls, drop: Drop, *, n_interferers: int = 32) -> LoadCoupling:
        """The coupling of a drop's links, with the model, seed and candidates its link
        table was built with (:attr:`LinkTable.model`, ``shadowing_seed``,
        ``n_candidates``), checked against that table's rates (see "Agreement").

        Parameters
        ----------
        drop : Drop
            Its link table made by :func:`cellopt.radio.link_table` (one resource).
        n_interferers : int
            Cells per user whose load is followed exactly (≥ the table's candidates).

        Raises
        ------
        ValidationError
            For a link table made by hand (it records no model or seed), for full-load
            rates that are not the table's (e.g. a table built with other powers, or a
            drop whose network is not its table's), and as :meth:`from_network`.
        """
        links = drop.links
        model, seed, n_candidates = links.radio_settings("LoadCoupling.from_network")
        coupling = cls._build(drop.network, drop.problem, np.flatnonzero(drop.solvable),
                              n_candidates, n_interferers, model, seed)
        # The table rows of the problem's links: those of the solvable users, in order.
        src = np.flatnonzero(drop.solvable[links.user])[drop.problem.link_index]
        ones = np.ones(coupling.n_cells)
        rate = coupling.rates_mbps(ones)
        with np.errstate(divide="ignore"):
            sinr_db = 10.0 * np.log10(coupling.sinr(ones))
        ref_db, ref_rate = links.sinr_db[src], links.rate_mbps[src]
        radius = links.radius_m is not None
        if radius:  # the near-only SINR bounds the exact one from above
            if links.far_field_db is not None:
                ref_db = ref_db + links.far_field_db[src]
            ref_rate = coupling.gains.bandwidth_mhz * np.asarray(
                coupling.gains.efficiency(10.0 ** (ref_db / 10.0)), float)
        off = disagreeing_links(rate, ref_rate, sinr_db, ref_db, upper_only=radius)
        check_agreement(off, rate, ref_rate, ours=coupling._name("from_drop"),
                        theirs=f"the drop's link table (shadowing seed {links.shadowing_seed})",
                        fix="rebuild the drop with Drop.from_network(network, "
                            "radio.link_table(network, ...)) from this network, at the cells' "
                            "tx_power_dbm")
        return coupling

    def check(self, problem: Problem) -> None:
        """Refuse a problem this coupling was not made for.

        Both must be of one network where both record it (``network_fingerprint``: cell
        and user ids and positions). Its links must be the coupling's (same count and
        cells) and their rates the ones
        the coupling was built and checked for (`link_rate_mbps`; for a coupling made by
        hand, its own full-load rates), to round-off.

        Parameters
        ----------
        problem : Problem

        Raises
        ------
        ValidationError
            Naming the coupling, the problem and the fix.
        """
        fix = ("build the coupling from this problem (LoadCoupling.from_drop(drop), or "
               "LoadCoupling.from_network(network, problem, ...))")
        check_same_network(self.network_fingerprint, getattr(problem, "network_fingerprint", None),
                           ours_name="the coupling", theirs_name="the problem", fix=fix)
        if len(self.cell) != problem.n_links or not np.array_equal(self.cell, problem.cell):
            raise ValidationError(f"the coupling was built for other links ({len(self.cell)} "
                                  f"links; the problem has {problem.n_links}); fix: {fix}")
        reference = (self.rates_mbps(np.ones(self.n_cells)) if self.link_rate_mbps is None
                     else self.link_rate_mbps)
        off = disagreeing_links(problem.rate_mbps, reference)
        check_agreement(off, problem.rate_mbps, reference, ours="the problem's links",
                        theirs=self._name("built for"), fix=fix)

    def _name(self, how: str) -> str:
        seed = self.gains.shadowing_seed
        return f"the coupling ({how}" + ("" if seed is None else f", shadowing seed {seed}") + ")"

    def solve(self, problem: Problem, method: str | None = None, **options: Any) -> Solution:
        """:func:`solve_load_coupled` of `problem` under this coupling (what
        :meth:`cellopt.Drop.solve` calls for a load-coupled drop)."""
        return solve_load_coupled(problem, self, method, **options)

    @property
    def n_cells(self) -> int:
        return self.gains.n_cells

    @functools.cached_property
    def rx_mw(self) -> np.ndarray:
        """Received power at full power from each user's kept cells [mW], shape (U, n_interferers).

        Computed once: every iteration of :meth:`fixed_point` only rescales it by the loads.
        """
        g = self.gains
        return g.gain_mw_per_mw * (10.0 ** (g.max_power_dbm / 10.0))[g.cell]

    def sinr(self, load: np.ndarray) -> np.ndarray:
        """Linear SINR of every link when cell *k* transmits on the share ``load[k]``.

        Parameters
        ----------
        load : ndarray, shape (n_cells,)
            Loads in [0, 1].

        Returns
        -------
        ndarray, shape (L,)
        """
        load = self._check_load(load)
        g = self.gains
        # every kept cell at its load, the rest at full load (never optimistic)
        total = np.einsum("um,um->u", self.rx_mw, load[g.cell]) + g.background_mw
        interference = np.maximum(total[self.user] - self.signal_mw * load[self.cell], 0.0)
        return self.signal_mw / (g.noise_mw + interference)

    def rates_mbps(self, load: np.ndarray) -> np.ndarray:
        """Peak rate of every link [Mbit/s] at the given loads, shape (L,)."""
        return self.gains.bandwidth_mhz * np.asarray(self.gains.efficiency(self.sinr(load)), float)

    def fixed_point(
        self,
        traffic_mbps: np.ndarray,
        *,
        start: np.ndarray | None = None,
        hold: np.ndarray | None = None,
        tol: float = 1e-9,
        max_iter: int = 10_000,
    ) -> LoadFixedPoint:
        """The loads at which every link carries its traffic, iterated down from `start`.

        Parameters
        ----------
        traffic_mbps : ndarray, shape (L,)
            What each link must carry [Mbit/s] (a user's demand, split over its links).
        start : ndarray, shape (n_cells,), optional
            Loads to iterate down from (default: full load). If the traffic fits at
            `start` (it needs no more than `start` on any cell), every iterate stays below
            it, so the fixed point found is the largest one below `start`.
        hold : ndarray of bool, shape (n_cells,), optional
            Mask of the cells whose load stays at `start` (cells that use all the
            airtime they have); the others follow the iteration. A boolean array, not a
            list of cell indices.
        tol : float
            Stop when no load moves by more than this.
        max_iter : int
            Most iterations.

        Returns
        -------
        LoadFixedPoint
            ``converged`` is False if `max_iter` was reached first.

        Raises
        ------
        ValidationError
            For bad traffic, `start`, `tol` or `max_iter`, and a `hold` that is not a
            boolean array of shape (n_cells,).
        """
        traffic = np.asarray(traffic_mbps, dtype=float)
        if traffic.shape != self.cell.shape or not (np.isfinite(traffic) & (traffic >= 0)).all():
            raise ValidationError(f"traffic_mbps must be {len(self.cell)} finite values ≥ 0, one per "
                                  "link; fix: give each link's share of its user's demand in Mbit/s")
        tol = check_number(tol, "tol", low=0.0, low_open=True, fix="give a tolerance > 0")
        max_iter = check_count(max_iter, "max_iter", fix="give a whole number ≥ 1", minimum=1)
        load = np.ones(self.n_cells) if start is None else self._check_load(start)
        if hold is not None:
            hold = np.asarray(hold)
            if hold.dtype != bool or hold.shape != (self.n_cells,):
                raise ValidationError(
                    f"hold has dtype {hold.dtype} and shape {hold.shape}; it is the mask of the "
                    f"cells whose load stays at start; fix: give a boolean array of shape "
                    f"({self.n_cells},), e.g. np.isin(np.arange({self.n_cells}), cells) for a "
                    "list of cell indices")
        converged, n_iter = False, 0
        while True:  # iterations of a contraction, not a loop over data
            rate = self.rates_mbps(load)
            with np.errstate(divide="ignore", invalid="ignore"):
                need = np.where(traffic > 0, traffic / rate, 0.0)  # inf on a dead link
            required = np.bincount(self.cell, weights=need, minlength=self.n_cells)
            if converged or n_iter == max_iter:
                break
            new = np.minimum(required, 1.0)
            if hold is not None:
                new[hold] = load[hold]
            converged = np.abs(new - load).max(initial=0.0) <= tol
            load, n_iter = new, n_iter + 1
        return LoadFixedPoint(load=load, required=required, overloaded=required > 1.0 + tol,
                              converged=bool(converged), n_iter=n_iter, rate_mbps=rate)

    def _check_load(self, load: np.ndarray) -> np.ndarray:
        load = np.asarray(load, dtype=float)
        if load.shape != (self.n_cells,) or not ((load >= 0) & (load <= 1)).all():
            raise ValidationError(f"load must be {self.n_cells} values in [0, 1], one per cell; fix: "
                                  "give each cell's share of the band in use")
        return load


def solve_load_coupled(
    problem: Problem,
    coupling: LoadCoupling,
    method: str | None = None,
    *,
    max_rounds: int = 20,
    load_tol: float = 1e-3,
    **options: Any,
) -> Solution:
    """Solve the association problem with load-coupled interference.

    Round 1 solves the problem at full load (every cell interferes all the time). Its
    traffic then gets its own loads ``ρ¹``, the fixed point of
    :meth:`LoadCoupling.fixed_point`: the shares of the band the cells need to carry
    exactly that traffic when each interferes only on its own share. Round *t + 1*
    solves with the rates at ``ρᵗ`` and each cell's airtime capped at ``ρᵗ_j``, so its
    answer never makes a cell interfere more than assumed. Cells that use all of their
    cap keep it (their users would take more); the loads of the others are the fixed
    point of their traffic, found from ``ρᵗ`` down, so ``ρᵗ⁺¹ ≤ ρᵗ``. The previous
    round's traffic fits every new round, so the objective never falls and the loads
    never rise: the rounds stop when no load falls by more than `load_tol`, or when a
    round gains less than the solver's `tol` as a factor on every rate (loads can keep
    falling without gain where users whose demand is met shift between two cells).

    The answer is the last round's traffic at its own loads: each cell's airtime equals
    the load at which its rates are computed, an exact operating point of the
    load-coupled network, never worse than its round 1 (a full-load solve). A round that
    loses more than :data:`LOST_ROUND` to the round before (an inexact solve, within its
    `tol`) stops the rounds, and the answer is the round before's. Load moves towards
    cells that were quiet at full load are made in round 1 only (a conservative choice:
    letting a cell's airtime grow could overload its neighbours).

    Parameters
    ----------
    problem : Problem
        With one resource; its rates are replaced by the coupled rates.
    coupling : LoadCoupling
        Of `problem` (:meth:`LoadCoupling.from_network`).
    method : str, optional
        Any registered method (:func:`cellopt.solve`; None, the default: its default for
        the problem, ``"dual"``).
    max_rounds : int
        Most rounds (20).
    load_tol : float
        Convergence: the largest fall of a cell's load in the last round (1e-3).
    **options
        Passed to :func:`cellopt.solve` in every round (``tol`` among them).

    Returns
    -------
    Solution
        ``x``, rates and loads of the answer's round at its own loads, with
        ``load_coupling`` set (``answer_round``: the round whose traffic it is). The
        bound, prices and status are those of that round's solve, with
        ``bound_kind = "fixed_loads"``: they certify the problem with the interference
        fixed at, and each cell's airtime capped by, the loads it was
        solved at (``load_coupling["solved_at"]``; the load-coupled problem is not
        convex, and no bound over every load pattern is claimed). ``"max_iter"`` when
        `max_rounds` stopped the rounds first. The gap is recomputed from that bound and
        the answer's objective, and the status follows the rule of every solve
        (:func:`~cellopt.solvers.result.apply_status_rule`): ``"optimal"`` only where
        that gap is ≤ `tol`, ``"failed"`` for a −inf or NaN objective.

    Raises
    ------
    ValidationError
        For a coupling made for another problem (:meth:`LoadCoupling.check`), and bad
        `max_rounds` or `load_tol`.
    """
    if not isinstance(coupling, LoadCoupling):
        raise ValidationError(f"coupling is a {type(coupling).__name__}; fix: a LoadCoupling "
                              "(LoadCoupling.from_drop(drop))")
    coupling.check(problem)
    max_rounds = check_count(max_rounds, "max_rounds", fix="give a whole number ≥ 1", minimum=1)
    load_tol = check_number(load_tol, "load_tol", low=0.0, low_open=True,
                            fix="give a tolerance > 0")
    t0 = time.perf_counter()
    cap = np.ones(coupling.n_cells)
    changes, n_iter, previous, gain, answer_round = [], 0, None, None, 0
    tol = options.get("tol", 1e-4)
    for _ in range(max_rounds):  # outer rounds, each one whole solve
        # A cell capped at ρ_j is a cell whose links run at ρ_j × their rate: x' = x / ρ_j ≤ 1.
        # Caps are floored at MIN_LOAD so that no rate underflows (a nearly silent cell).
        cap = solved_at = np.maximum(cap, MIN_LOAD)
        capped = coupling.rates_mbps(cap) * cap[problem.cell]
        sol = solve(problem.replace(rate_mbps=capped), method=method, **options)
        n_iter += sol.n_iter
        traffic = sol.x * capped
        # Cells that used all their airtime keep it (their users want more); the others
        # fall to what their traffic needs, given those.
        used = np.bincount(problem.cell, weights=sol.x, minlength=problem.n_cells)
        fp = coupling.fixed_point(traffic, start=cap, hold=used >= 1.0 - SATURATED)
        changes.append(float((cap - fp.load).max(initial=0.0)))
        cap = fp.load
        if previous is not None:  # what the round gained, as a factor on every rate
            gain = certified_gap(problem, sol.objective, previous[0].objective,
                                 previous[0].utility)
            if gain is not None and gain < -LOST_ROUND:
                # The previous traffic fits this round, so only an inexact solve (within
                # its tol) loses: keep the previous round, its bound and its loads.
                sol, traffic, fp, solved_at = previous
                break
        previous, answer_round = (sol, traffic, fp, solved_at), len(changes)
        if changes[-1] <= load_tol or (gain is not None and gain <= tol):
            break
    # The last traffic at its own loads: held cells may need a little less than they kept.
    fp = coupling.fixed_point(traffic, start=fp.load)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(traffic > 0, traffic / fp.rate_mbps, 0.0)
    airtime = np.bincount(problem.cell, weights=x, minlength=problem.n_cells)
    x *= np.minimum(1.0, 1.0 / np.maximum(airtime, 1e-300))[problem.cell]  # rounding above 1
    sinr = coupling.sinr(fp.load)
    with np.errstate(divide="ignore"):
        sinr_db = 10.0 * np.log10(sinr)
    rounds = len(changes)
    if changes[-1] <= load_tol:
        how, converged = f"loads converged in {rounds} round(s)", True
    elif answer_round < rounds:
        how, converged = (f"round {rounds} lost a rate factor of {-gain:.1e} to round "
                          f"{answer_round}, an inexact solve within tol (loads still falling "
                          f"by {changes[-1]:.2g})"), True
    elif gain is not None and gain <= tol:
        how, converged = (f"round {rounds} gained a rate factor of only {gain:.1e} ≤ tol (loads "
                          f"still falling by {changes[-1]:.2g}, without gain)"), True
    else:
        how, converged = (f"stopped at max_rounds={max_rounds} with loads still falling by "
                          f"{changes[-1]:.2g}; raise max_rounds"), False
    if answer_round < rounds:
        how += f"; the answer is round {answer_round}'s, the better one"
    out = build_solution(problem.replace(rate_mbps=fp.rate_mbps, sinr_db=sinr_db), x,
                         method=sol.method, status=sol.status if converged else MAX_ITER,
                         message=f"{sol.message}; load coupling: {how}", mu=None, nu=None,
                         n_iter=n_iter, wall_s=time.perf_counter() - t0, history=sol.history,
                         upper_bound=sol.upper_bound)
    info = {"load": fp.load, "rate_mbps": fp.rate_mbps, "sinr_db": sinr_db, "rounds": rounds,
            "answer_round": answer_round,
            "load_change": np.array(changes), "solved_at": solved_at}
    out = dataclasses.replace(out, prices=sol.prices, load_coupling=info,
                              bound_kind=None if sol.upper_bound is None else "fixed_loads")
    # The one status rule: the gap is that of the reported bound and objective, "optimal"
    # only where it is ≤ tol, and a −inf or NaN objective is "failed".
    return apply_status_rule(problem, out, tol)
