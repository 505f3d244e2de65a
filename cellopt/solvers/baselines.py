"""Baseline association rules: max RSRP, max SINR, range expansion, load aware.

Each baseline does two things:

1. **Association.** Every user is given one serving cell by a rule that ignores backhaul
   caps and prices: the strongest cell (``max_rsrp``), the best mean SINR (``max_sinr``),
   the strongest cell after a per-tier bias (``range_expansion``), or a selfish best
   response to the cells' loads (``load_aware``). Only the problem's links count (links of
   zero rate were dropped when the problem was built); users without links get cell −1
   and rate 0.
2. **In-cell shares.** Given the association, the problem restricted to the serving
   cells' links is separable per cell. It is solved exactly, *without* backhaul caps but
   with the prices c_j in the objective: in closed form (vectorized bisection on the
   cells' airtime prices) for one resource, by an inner convex solver for several. Cells
   whose traffic then exceeds their cap are reported in ``Solution.exceeded_backhaul`` and
   their shares scaled down by :func:`~cellopt.solvers.common.repair`, so that every
   reported rate is achievable. This part is the same for every baseline
   (:mod:`cellopt.solvers.association`).

The reported prices are the in-cell airtime prices μ (ν = 0). By weak duality
``g(μ, 0)`` is a valid, if loose, upper bound on the optimum of the *full* problem; it is
kept as ``upper_bound``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy.special import gammaln

from cellopt.checks import check_array, check_count, check_number
from cellopt.errors import ValidationError
from cellopt.network import TIERS
from cellopt.problem import Problem, utility
from cellopt.solution import Solution
from cellopt.solvers.association import (
    Callback,
    Pairs,
    argmax_per_user,
    baseline_solution,
    call_with_row,
    check_baseline,
)
from cellopt.solvers.registry import register
from cellopt.status import MAX_ITER, SOLVED, STOPPED, TIME_LIMIT

__all__ = ["DEFAULT_BIAS_DB", "cell_offsets", "load_aware", "max_rsrp", "max_sinr", "range_expansion",
           "tier_bias_db"]

#: Default range-expansion bias per tier [dB].
DEFAULT_BIAS_DB: dict[str, float] = {"macro": 0.0, "pico": 6.0, "femto": 6.0}

#: A move must raise the mover's log payoff by more than this (guards against cycling on
#: rounding noise; with equal weights every accepted move raises the potential by as much).
_MOVE_EPS = 1e-12
#: Rounds of the disjoint-move selection per best-response round (each pass takes every
#: move that is the best at both of its cells; the rest wait for the next round).
_SELECTION_PASSES = 32


# ============================================================================ registered
@register("max_rsrp", kind="baseline")
def max_rsrp(
    problem: Problem,
    *,
    tol: float = 1e-4,
    max_iter: int | None = None,
    time_limit_s: float | None = None,
    callback: Callback = None,
    inner_method: str = "dual",
    inner_options: Mapping[str, Any] | None = None,
) -> Solution:
    """Serve each user by the cell of its link with the largest RSRP.

    Parameters
    ----------
    problem : Problem
        Needs ``rsrp_dbm`` (shape (L,), [dBm]).
    tol, max_iter, time_limit_s, callback, inner_method, inner_options
        As for :func:`~cellopt.solvers.association.check_baseline`.

    Returns
    -------
    Solution
        status ``"solved"`` (or the inner solver's status if it did not succeed).

    Raises
    ------
    ValueError
        If the problem has no RSRP.
    """
    t0 = time.perf_counter()
    inner = check_baseline('max_rsrp', problem, tol=tol, max_iter=max_iter,
                           time_limit_s=time_limit_s, callback=callback,
                           inner_method=inner_method, inner_options=inner_options)
    assoc = _strongest(problem, None, "max_rsrp")
    return baseline_solution(problem, assoc, method="max_rsrp", rule="each user served by its "
                             "strongest cell (max RSRP)", t0=t0, tol=tol,
                             time_limit_s=time_limit_s, callback=callback, inner=inner)


@register("max_sinr", kind="baseline")
def max_sinr(
    problem: Problem,
    *,
    tol: float = 1e-4,
    max_iter: int | None = None,
    time_limit_s: float | None = None,
    callback: Callback = None,
    inner_method: str = "dual",
    inner_options: Mapping[str, Any] | None = None,
) -> Solution:
    """Serve each user by the cell with the largest mean linear SINR over its resources.

    The mean is ``Σ_k 10^(SINR_ijk / 10) / K`` over the K resources; a resource whose link
    was dropped (rate 0, so negligible SINR) counts as 0.

    Parameters
    ----------
    problem : Problem
        Needs ``sinr_db`` (shape (L,), [dB]).
    tol, max_iter, time_limit_s, callback, inner_method, inner_options
        As for :func:`max_rsrp`.

    Returns
    -------
    Solution

    Raises
    ------
    ValueError
        If the problem has no SINR.
    """
    t0 = time.perf_counter()
    inner = check_baseline('max_sinr', problem, tol=tol, max_iter=max_iter,
                           time_limit_s=time_limit_s, callback=callback,
                           inner_method=inner_method, inner_options=inner_options)
    sinr = _require(problem, "sinr_db", "max_sinr")
    pairs = Pairs(problem)
    mean_linear = pairs.sum_per_pair(10.0 ** (sinr / 10.0)) / problem.n_resources
    assoc = pairs.cell_of(argmax_per_user(pairs.user, mean_linear, problem.n_users))
    return baseline_solution(problem, assoc, method="max_sinr", rule="each user served by its "
                             "cell of largest mean SINR (max SINR)", t0=t0, tol=tol,
                             time_limit_s=time_limit_s, callback=callback, inner=inner)


@register("range_expansion", kind="baseline")
def range_expansion(
    problem: Problem,
    *,
    tol: float = 1e-4,
    max_iter: int | None = None,
    time_limit_s: float | None = None,
    callback: Callback = None,
    bias_db: float | Mapping[str, float] | None = None,
    inner_method: str = "dual",
    inner_options: Mapping[str, Any] | None = None,
) -> Solution:
    """Serve each user by the cell maximizing RSRP + the bias of the cell's tier.

    Parameters
    ----------
    problem : Problem
        Needs ``rsrp_dbm`` (shape (L,), [dBm]) and ``cell_tier`` (shape (n_cells,)).
    tol, max_iter, time_limit_s, callback
        As for :func:`max_rsrp`.
    bias_db : float or dict, optional
        A float: bias [dB] of pico and femto cells (macro 0). A dict: tier name → bias
        [dB] for any of :data:`cellopt.network.TIERS` (missing tiers 0). Default
        :data:`DEFAULT_BIAS_DB` (6 dB for picos and femtos). All-zero biases give
        :func:`max_rsrp` (and then ``cell_tier`` is not needed).
    inner_method, inner_options
        As for :func:`max_rsrp`.

    Returns
    -------
    Solution

    Raises
    ------
    ValueError
        If RSRP or tiers are missing, for an unknown tier or a non-finite bias.
    """
    t0 = time.perf_counter()
    inner = check_baseline('range_expansion', problem, tol=tol, max_iter=max_iter,
                           time_limit_s=time_limit_s, callback=callback, bias_db=bias_db,
                           inner_method=inner_method, inner_options=inner_options)
    bias = _tier_bias(bias_db)
    if bias.any() and problem.cell_tier is None:
        raise ValidationError("range_expansion needs each cell's tier (problem.cell_tier is None); "
                         "fix: build the problem with Problem.from_network(network, links) or "
                         "pass cell_tier= (codes into cellopt.network.TIERS) to "
                         "Problem.from_links")
    assoc = _strongest(problem, bias[problem.cell_tier] if bias.any() else None, "range_expansion")
    shown = ", ".join(f"{t} {b:g} dB" for t, b in zip(TIERS, bias, strict=True))
    return baseline_solution(problem, assoc, method="range_expansion", rule=f"each user served "
                             f"by its cell of largest RSRP + tier bias (range expansion: "
                             f"{shown})", t0=t0, tol=tol, time_limit_s=time_limit_s,
                             callback=callback, inner=inner)


@register("cell_offsets", kind="baseline")
def cell_offsets(
    problem: Problem,
    *,
    tol: float = 1e-4,
    max_iter: int | None = None,
    time_limit_s: float | None = None,
    callback: Callback = None,
    offsets_db: np.ndarray | None = None,
    inner_method: str = "dual",
    inner_options: Mapping[str, Any] | None = None,
) -> Solution:
    """Serve each user by the cell maximizing RSRP + the cell's own offset.

    The rule a live network applies with a cell individual offset per cell (the offset of
    the A3 event, or the idle-mode q-OffsetCell): each user picks, among its links, the
    cell of largest ``rsrp_dbm + offsets_db[cell]``, ties going to the lower cell row;
    each cell then shares its airtime optimally among its users (see the module notes).
    :func:`range_expansion` is the case of one offset per tier; :mod:`cellopt.deploy`
    fits one offset per cell and judges it on users it was not fitted to.

    Parameters
    ----------
    problem : Problem
        Needs ``rsrp_dbm`` (shape (L,), [dBm]).
    tol, max_iter, time_limit_s, callback
        As for :func:`max_rsrp`.
    offsets_db : ndarray, shape (n_cells,), optional
        Offset of each cell [dB], finite; default all 0 (:func:`max_rsrp`).
    inner_method, inner_options
        As for :func:`max_rsrp`.

    Returns
    -------
    Solution

    Raises
    ------
    ValueError
        If the problem has no RSRP, or for offsets of the wrong shape or not finite.
    """
    t0 = time.perf_counter()
    inner = check_baseline('cell_offsets', problem, tol=tol, max_iter=max_iter,
                           time_limit_s=time_limit_s, callback=callback, offsets_db=offsets_db,
                           inner_method=inner_method, inner_options=inner_options)
    offsets = np.zeros(problem.n_cells) if offsets_db is None else check_array(
        offsets_db, "offsets_db", shape=(problem.n_cells,),
        fix=f"give one finite offset [dB] per cell, shape ({problem.n_cells},)")
    assoc = _strongest(problem, offsets, "cell_offsets")
    spread = f"{offsets.min():g} to {offsets.max():g} dB" if problem.n_cells else "none"
    return baseline_solution(problem, assoc, method="cell_offsets", rule=f"each user served by "
                             f"its cell of largest RSRP + the cell's offset (offsets {spread})",
                             t0=t0, tol=tol, time_limit_s=time_limit_s, callback=callback,
                             inner=inner)


@register("load_aware", kind="baseline")
def load_aware(
    problem: Problem,
    *,
    tol: float = 1e-4,
    max_iter: int | None = None,
    time_limit_s: float | None = None,
    callback: Callback = None,
    max_rounds: int | None = None,
    inner_method: str = "dual",
    inner_options: Mapping[str, Any] | None = None,
) -> Solution:
    """Selfish best response of the users to the cells' loads.

    Start from max RSRP (max full-band rate if the problem has no RSRP). A user's payoff
    in cell j is the rate it would get there under weight-proportional sharing of the
    current loads: ``w_i R_ij / W_j`` where it is and ``w_i R_ij / (W_j + w_i)`` if it
    moved in, with ``W_j`` the total weight already in j and ``R_ij = Σ_k R_ijk`` the
    user's full-band rate in j [Mbit/s]. In each round every user's best alternative and
    log gain are computed at once; a set of improving moves whose origin and destination
    cells are all distinct is selected (greedy by gain, vectorized: a move is taken when
    it is the best move touching both of its cells, repeated on the moves left untouched)
    and applied. Rounds repeat until nobody can raise its payoff by more than a factor
    ``exp(1e-12)`` (a Nash equilibrium) or the round cap is hit. The in-cell shares of the
    final association are then optimized as for every baseline.

    **Termination (equal weights).** With all ``w_i = w`` the payoff is
    ``log(w R_ij / n_j)`` (``n_j`` users in j) and
    ``Φ(σ) = Σ_i log R_{i,σ(i)} − Σ_j log(n_j!)`` is an exact potential: a single move
    ``a → b`` changes Φ by ``log R_ib − log R_ia − log(n_b + 1) + log n_a``, exactly the
    mover's gain. Φ is a sum of per-cell terms plus per-user terms, and the moves of a
    round touch pairwise distinct cells, so Φ changes by the sum of the movers' gains, each
    > 1e-12: Φ strictly increases every round. There are finitely many associations, so
    none repeats and the dynamics stop at a Nash equilibrium. With unequal weights the
    payoff ``log(w_i R_ij / W_j)`` is a weighted congestion game, which in general has no
    potential of this form (``F(W + w) − F(W) = w log(W + w)`` for all W, w is impossible);
    termination is then only guaranteed by the round cap. Either way ``message`` says
    whether an equilibrium was reached and after how many rounds and moves.

    Parameters
    ----------
    problem : Problem
    tol : float
        Relative gap passed to the inner solver (several resources only).
    max_iter : int, optional
        Cap on the rounds (the smaller of `max_iter` and `max_rounds` applies).
    time_limit_s : float, optional
        Wall-clock budget [s]; checked every round (status ``"time_limit"``).
    callback : callable, optional
        Called after round 0 (the start) and every round with ``iteration, objective,
        upper_bound (None), gap (None), moves, potential``; returning True stops the
        rounds (status ``"stopped"``; the in-cell shares are still optimized).
    max_rounds : int, optional
        Cap on the rounds; default ``10 × n_users``.
    inner_method, inner_options
        As for :func:`max_rsrp`.

    Returns
    -------
    Solution
        status ``"solved"`` at an equilibrium, ``"max_iter"`` if the cap stopped moves
        that were still improving, ``"time_limit"`` or ``"stopped"``. ``n_iter`` = rounds;
        ``history`` has one row per round (round 0 = the start) with ``moves``, the
        ``objective`` of weight-proportional sharing in that round's association (before
        the in-cell optimization and the backhaul repair) and the ``potential`` Φ (NaN
        with unequal weights); ``upper_bound`` and ``gap`` are NaN per round.

    Raises
    ------
    ValueError
        For a bad `max_rounds`.
    """
    t0 = time.perf_counter()
    inner = check_baseline('load_aware', problem, tol=tol, max_iter=max_iter,
                           time_limit_s=time_limit_s, callback=callback, max_rounds=max_rounds,
                           inner_method=inner_method, inner_options=inner_options)
    cap = 10 * problem.n_users if max_rounds is None else \
        check_count(max_rounds, "max_rounds", fix="give a whole number of rounds ≥ 0, or None "
                    "(10 × the users)")
    cap = int(cap) if max_iter is None else min(int(cap), int(max_iter))
    pairs = Pairs(problem)
    start_score = pairs.max_per_pair(problem.rsrp_dbm) if problem.rsrp_dbm is not None \
        else pairs.rate
    start = "max RSRP" if problem.rsrp_dbm is not None else "max full-band rate (no RSRP)"
    game = _LoadGame(problem, pairs, argmax_per_user(pairs.user, start_score, problem.n_users))

    history = [game.row(0, 0)]
    stop = call_with_row(callback, history[-1])
    rounds = moves = 0
    reason = "stopped" if stop else ""
    while not reason:
        mover, dest = game.improving_moves()
        if not len(mover):
            reason = "equilibrium"
        elif rounds >= cap:
            reason = "cap"
        elif time_limit_s is not None and time.perf_counter() - t0 > time_limit_s:
            reason = "time"
        else:
            game.current[mover] = dest
            rounds += 1
            moves += len(mover)
            history.append(game.row(rounds, len(mover)))
            if call_with_row(callback, history[-1]):
                reason = "stopped"
    status = {"equilibrium": SOLVED, "cap": MAX_ITER, "time": TIME_LIMIT,
              "stopped": STOPPED}[reason]
    what = {"equilibrium": "reached a Nash equilibrium",
            "cap": f"hit the round cap ({cap}) with improving moves left",
            "time": f"hit the time limit ({time_limit_s:g} s) with improving moves left"
            if time_limit_s is not None else "",
            "stopped": "stopped by the callback"}[reason]
    proof = "equal weights: exact potential, termination guaranteed" if game.equal_weights \
        else "unequal weights: no potential argument, capped by max_rounds"
    rule = (f"selfish best response to cell loads (load aware) from {start}: {what} after "
            f"{rounds} rounds and {moves} moves ({proof})")
    return baseline_solution(problem, pairs.cell_of(game.current), method="load_aware", rule=rule,
                             t0=t0, tol=tol, time_limit_s=time_limit_s, callback=None,
                             inner=inner, n_iter=rounds, history=history, status=status)


# ============================================================================ load-aware game
class _LoadGame:
    """State of the best-response dynamics: each user's current (user, cell) pair."""

    def __init__(self, problem: Problem, pairs: Pairs, current: np.ndarray):
        self.problem, self.pairs = problem, pairs
        self.current = np.asarray(current, np.int64).copy()  # pair index per user (−1: none)
        self.weight = problem.weight
        self.equal_weights = bool(problem.n_users == 0 or np.ptp(problem.weight) == 0)

    def _load(self) -> tuple[np.ndarray, np.ndarray]:
        """Users with a cell, and W_j (total weight per cell), shape (n_cells,)."""
        has = np.flatnonzero(self.current >= 0)
        cells = self.pairs.cell[self.current[has]]
        return has, np.bincount(cells, self.weight[has], minlength=self.problem.n_cells)

    def improving_moves(self) -> tuple[np.ndarray, np.ndarray]:
        """Users to move this round and their new pairs (disjoint origin / destination cells).

        Returns
        -------
        mover : ndarray of int64, shape (m,)
        dest : ndarray of int64, shape (m,)
            Pair index of each mover's new cell.
        """
        pairs, cur = self.pairs, self.current
        has, load = self._load()
        n_pairs = len(pairs.user)
        own = np.zeros(n_pairs, bool)
        own[cur[has]] = True
        here = pairs.rate[cur[has]] / load[pairs.cell[cur[has]]]
        here_of_user = np.full(self.problem.n_users, np.nan)
        here_of_user[has] = here
        w = self.weight[pairs.user]
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = np.log(pairs.rate / (load[pairs.cell] + w)) - np.log(here_of_user[pairs.user])
        gain[own | ~np.isfinite(gain)] = -np.inf
        best = argmax_per_user(pairs.user, gain, self.problem.n_users)
        user = np.flatnonzero(best >= 0)
        user = user[gain[best[user]] > _MOVE_EPS]
        if not len(user):
            return user, user
        origin, dest = pairs.cell[cur[user]], pairs.cell[best[user]]
        keep = _disjoint_moves(origin, dest, gain[best[user]], self.problem.n_cells)
        return user[keep], best[user[keep]]

    def row(self, iteration: int, moves: int) -> dict[str, Any]:
        """History row: objective of weight-proportional sharing and the potential."""
        has, load = self._load()
        p = self.problem
        pair = self.current[has]
        cells = self.pairs.cell[pair]
        rate = self.weight[has] * self.pairs.rate[pair] / load[cells]
        with np.errstate(invalid="ignore", divide="ignore"):
            # Users without links add U(0) = 0 (they exist only for α < 1).
            util = float(np.sum(p.weight[has] * utility(rate, p.alpha)))
        cost = float(np.dot(p.price_per_mbps[cells], rate))
        potential = np.nan
        if self.equal_weights:
            n_in = np.bincount(cells, minlength=p.n_cells)
            potential = float(np.log(self.pairs.rate[pair]).sum() - gammaln(n_in + 1.0).sum())
        return {"iteration": iteration, "objective": util - cost, "upper_bound": np.nan,
                "gap": np.nan, "moves": moves, "potential": potential}


def _disjoint_moves(origin: np.ndarray, dest: np.ndarray, gain: np.ndarray,
                    n_cells: int) -> np.ndarray:
    """Greedy-by-gain set of moves whose cells (origins and destinations) are all distinct.

    Each pass takes every remaining move that has the largest gain among the remaining
    moves touching its origin and among those touching its destination (ties by position),
    then drops the moves that touch a cell just taken. The best remaining move is always
    taken, so each pass makes progress; after :data:`_SELECTION_PASSES` passes the rest
    waits for the next round.

    Parameters
    ----------
    origin, dest : ndarray of int, shape (m,)
        Cells of each move (origin ≠ destination).
    gain : ndarray, shape (m,)
    n_cells : int

    Returns
    -------
    ndarray of bool, shape (m,)
        The moves taken.
    """
    m = len(gain)
    rank = np.empty(m, np.int64)
    rank[np.argsort(-gain, kind="stable")] = np.arange(m)
    active = np.ones(m, bool)
    take = np.zeros(m, bool)
    for _ in range(_SELECTION_PASSES):
        idx = np.flatnonzero(active)
        if not len(idx):
            break
        best = np.full(n_cells, m, np.int64)
        np.minimum.at(best, origin[idx], rank[idx])
        np.minimum.at(best, dest[idx], rank[idx])
        win = idx[(best[origin[idx]] == rank[idx]) & (best[dest[idx]] == rank[idx])]
        take[win] = True
        used = np.zeros(n_cells, bool)
        used[origin[win]] = True
        used[dest[win]] = True
        active &= ~(used[origin] | used[dest])
    return take


# ============================================================================ helpers
def _strongest(problem: Problem, offsets_db: np.ndarray | None, method: str) -> np.ndarray:
    """Each user's cell of largest RSRP (+ the cell's offset), ties to the lower cell row,
    shape (n_users,) (−1: no link): the association of max-RSRP, range expansion and
    per-cell offsets."""
    pairs = Pairs(problem)
    score = pairs.max_per_pair(_require(problem, "rsrp_dbm", method))
    if offsets_db is not None:
        score = score + offsets_db[pairs.cell]
    return pairs.cell_of(argmax_per_user(pairs.user, score, problem.n_users))


def _require(problem: Problem, name: str, method: str) -> np.ndarray:
    values = getattr(problem, name)
    if values is None:
        raise ValidationError(
            f"{method} needs {name} per link but the problem has none; fix: build the problem "
            f"with Problem.from_network(network, links) or pass {name}= to Problem.from_links")
    return values


def tier_bias_db(bias_db: float | Mapping[str, float] | None) -> dict[str, float]:
    """The bias [dB] of every tier of :data:`cellopt.network.TIERS` that
    :func:`range_expansion` applies for its `bias_db` argument."""
    return dict(zip(TIERS, _tier_bias(bias_db).tolist(), strict=True))


def _tier_bias(bias_db: float | Mapping[str, float] | None) -> np.ndarray:
    """Bias per tier code [dB], shape (len(TIERS),)."""
    if bias_db is None:
        bias_db = DEFAULT_BIAS_DB
    fix = "give finite biases in dB: a number, or a dict tier -> number"
    if isinstance(bias_db, Mapping):
        unknown = sorted(set(bias_db) - set(TIERS))
        if unknown:
            raise ValidationError(f"bias_db has unknown tiers {unknown}; fix: use tiers from {list(TIERS)}")
        bias = np.array([check_number(bias_db.get(t, 0.0), f"bias_db[{t!r}]", unit="dB", fix=fix)
                         for t in TIERS])
    else:
        value = check_number(bias_db, "bias_db", unit="dB", fix=fix)
        bias = np.array([0.0 if t == "macro" else value for t in TIERS])
    return bias
