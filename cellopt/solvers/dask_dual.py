"""``dual_dask``: the ``dual`` method with its users on a Dask cluster.

The O(links) work of :mod:`cellopt.solvers.dual` — users best-responding to prices,
their curvature, the repair of their implied shares — is local to each user; only the
per-group and per-cell sums are global. This method splits the users into parts, ships
each part's links once to a Dask worker, where a :mod:`dask.distributed` actor keeps
them, and runs the same projected Newton loop (:func:`~cellopt.solvers.dual_newton.newton_prices`)
on the client with those sums.

What runs where
---------------
*Client (coordinator).* Holds the problem (it built it); computes, once, the price units
and floors (the same as ``dual``'s), the part of every user, and ships the parts. Then
the whole Newton loop: the step (a factorization of the (groups + caps)-sized Hessian),
the line search, the continuation in τ, the certificate, the history. It never touches a
link again until the end, when the best shares are gathered once and the
:class:`~cellopt.Solution` is built.

*Workers (one actor per part).* Each keeps its part's links (as a
:class:`~cellopt.problem.Problem` of the part's users with every cell) and a
:class:`~cellopt.solvers.dual_model.SmoothedDual` over them in the whole problem's price
units. Per request they evaluate their users' share of g_τ, of the exact bound, of the
gradient and of the Hessian, apply repair factors, and keep the best feasible shares of
their links.

What crosses the network
------------------------
Per round, each part gets only the prices of the groups (cell × resource) and capped
cells its links touch (fixed when it is shipped), and answers on those alone:

- evaluation (every line-search trial): out those scaled prices and τ; back Σφ(m_τ),
  Σφ(π*), airtime per group and traffic per capped cell;
- Hessian (once per Newton step): out the point's id and τ; back the upper triangle of
  the part's Hessian on those prices, in CSR (8-byte values, 4-byte indices) — its
  off-diagonal entries come only from users split between cells, so it grows with the
  cells a part touches, not with its links;
- recovery (once per accepted step, 2–3 rounds, :meth:`_ClusterDual.recover`): back
  airtime and flow per group of the clipped implied shares; out a repair factor per
  group; back the repaired shares' airtime and flow per group and their utility; with a
  "fill" variant, once more;
- at the end: the bound at the best prices (out μ, ν of every cell; back one float per
  part, after one more round if some cell has backhaul 0) and the best shares (one float
  per link, once).

The repair is :func:`~cellopt.solvers.common.recover_feasible`'s, in rounds: airtime per
group and, since a group lies in one cell, traffic per cell after the airtime scaling is
``Σ_k scale_jk · flow_jk``; demand caps are per user, so local. The fill variant's loads
follow from the repaired shares' loads times the fill factors (exact up to rounding), so
it costs one round, not two.

Limits
------
Fixed resources only: no free power-pattern shares (``pattern_cost``) or share blocks —
use ``method="dual"`` for those. No single association, no warm start. The recovery has
neither ``dual``'s demand-first candidate nor its polish (a restricted ``ipm`` solve
that needs every link in one place), so with finite demands it can need more steps, or
stop at max_iter where ``dual`` certifies. Sums over parts
are added in another order than ``dual``'s, so results agree with ``dual`` to rounding,
not bit for bit. The client holds the whole problem (and, once, ``dual``'s per-link
arrays to compute the price units) and the returned shares.
"""

from __future__ import annotations

import pickle
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from cellopt.checks import as_float_array
from cellopt.cluster import open_client
from cellopt.errors import ValidationError, describe_rows
from cellopt.problem import Problem, utility
from cellopt.solution import Solution
from cellopt.solvers.arguments import check_arguments, check_problem
from cellopt.solvers.common import link_prices, user_min, user_value
from cellopt.solvers.dual_model import DualPoint, Recovered, SmoothedDual
from cellopt.solvers.dual_newton import (
    NewtonResult,
    check_stages,
    check_temperatures,
    final_status,
    newton_prices,
    start_prices,
)
from cellopt.solvers.linalg import SymmetricSystem
from cellopt.solvers.registry import register
from cellopt.solvers.result import build_solution

__all__ = ["CONNECT_TIMEOUT_S", "partition_users", "solve_dual_dask"]

#: Seconds to wait for a Dask scheduler (and for its first worker) before giving up.
CONNECT_TIMEOUT_S = 10.0


# ============================================================================ partition
def partition_users(x_m: np.ndarray, y_m: np.ndarray, n_parts: int) -> np.ndarray:
    """Parts of users by region: recursive coordinate bisection of their positions.

    Each region is cut across its longer extent (x or y) at the quantile that gives its
    two halves user counts in proportion to the parts each must still become — the
    median when that number is even — until there are `n_parts` regions. Parts hold
    ``n_users / n_parts`` users to within one per level of cuts (⌈log₂ n_parts⌉), and
    every part is an axis-aligned box of the plane, so the cells a part's users see are
    few and mostly its own: what ``dual_dask`` exchanges per part shrinks with them.

    Parameters
    ----------
    x_m, y_m : array_like, shape (n_users,)
        User positions [m] (any projected coordinates; e.g. ``network.users["x_m"]``).
    n_parts : int
        Number of parts ≥ 1. With fewer users than parts, some labels are unused.

    Returns
    -------
    ndarray of int64, shape (n_users,)
        The part of each user, in ``[0, n_parts)``; pass it as ``part`` to
        ``cellopt.solve(problem, method="dual_dask", part=...)`` (the problem's users in
        the same order).

    Raises
    ------
    ValidationError
        For positions of different shapes, not 1-D, or not finite, and for `n_parts` < 1.
    """
    x = as_float_array(x_m, "x_m", fix="give user positions in metres")
    y = as_float_array(y_m, "y_m", fix="give user positions in metres")
    if x.ndim != 1 or x.shape != y.shape:
        raise ValidationError(f"x_m has shape {x.shape} and y_m {y.shape}; fix: give one x and "
                              "one y per user, two 1-D arrays of the same length")
    bad = np.flatnonzero(~(np.isfinite(x) & np.isfinite(y)))
    if len(bad):
        raise ValidationError(f"users {describe_rows(bad)}: position NaN or infinite; fix: give "
                              "finite coordinates in metres")
    if isinstance(n_parts, bool) or not isinstance(n_parts, (int, np.integer)) or n_parts < 1:
        raise ValidationError(f"n_parts={n_parts!r}; fix: give a whole number ≥ 1")
    n = len(x)
    label = np.zeros(n, np.int64)          # current region of each user
    want = np.array([int(n_parts)])        # parts each current region must become
    first = np.array([0])                  # the first final label of each region
    while (want > 1).any():
        n_reg = len(want)
        count = np.bincount(label, minlength=n_reg)
        start = np.cumsum(count) - count
        last = np.maximum(start + count - 1, 0)
        # Per axis: each user's rank in its region, and the region's extent.
        rank, extent = [], []
        for coord in (x, y):
            order = np.lexsort((coord, label))
            r = np.empty(n, np.int64)
            r[order] = np.arange(n) - start[label[order]]
            rank.append(r)
            ends = coord[order[np.r_[np.minimum(start, n - 1), last]]] if n else np.zeros(2 * n_reg)
            extent.append(np.where(count > 0, ends[n_reg:] - ends[:n_reg], 0.0))
        along_y = extent[1] > extent[0]
        rank = np.where(along_y[label], rank[1], rank[0])
        left = want // 2
        # Users of the left half: the share left / want of the region, rounded.
        cut = (2 * count * left + want) // (2 * want)
        split = want > 1
        # New regions: each region that splits becomes (left, right), the others stay.
        n_new = np.where(split, 2, 1)
        base = np.cumsum(n_new) - n_new
        right = split[label] & (rank >= cut[label])
        label = base[label] + right
        want_new = np.empty(int(n_new.sum()), np.int64)
        first_new = np.empty_like(want_new)
        want_new[base] = np.where(split, left, want)
        first_new[base] = first
        want_new[base[split] + 1] = want[split] - left[split]
        first_new[base[split] + 1] = first[split] + left[split]
        want, first = want_new, first_new
    return first[label]


# ============================================================================ the method
@register("dual_dask", kind="optimizer", distributed=True)
def solve_dual_dask(
    problem: Problem,
    *,
    tol: float = 1e-4,
    max_iter: int | None = None,
    time_limit_s: float | None = None,
    callback: Callable[[dict[str, Any]], bool | None] | None = None,
    scheduler: Any = None,
    part: np.ndarray | None = None,
    n_parts: int | None = None,
    user_xy_m: np.ndarray | None = None,
    tau0: float = 0.05,
    tau_min: float = 1e-9,
    stage_maxiter: int = 60,
    stage_accuracy: float = 0.5,
) -> Solution:
    """The ``dual`` method with the users split into parts held by Dask workers.

    Same method, prices, certificate and statuses as :func:`~cellopt.solvers.dual.solve_dual`
    (see :mod:`cellopt.solvers.dask_dual` for what runs where). The certificate is the
    exact dual function ``Σ μ + Σ ν C + Σ_parts Σ_users φ_i(π_i*)`` at the returned
    prices, summed over the parts on the workers, and the gap its
    :func:`~cellopt.solvers.certificate.certified_gap` against the returned feasible shares.

    Parameters
    ----------
    problem : Problem
        Fixed resources only (no ``pattern_cost``); backhaul caps and prices per Mbit/s
        are fine.
    tol : float
        Target certified rate-equivalent gap.
    max_iter : int, optional
        Cap on Newton steps (default 500).
    time_limit_s : float, optional
        Wall-clock cap [s], counted from the call (a cluster's start and the shipping of
        the parts included).
    callback : callable, optional
        Called after every iteration with the history row (a dict); True stops.
    scheduler : dask.distributed.Client or str, optional
        Run on this cluster: a connected ``Client``, or a scheduler address such as
        ``"tcp://HOST:8786"`` (connected for the call, closed after). None (default):
        a ``LocalCluster`` of 2 worker processes with 1 thread each, started for the
        call and closed after.
    part : ndarray of int, shape (n_users,), optional
        Part label ≥ 0 of every user (e.g. from :func:`partition_users`); labels need not
        be consecutive. Parts go to the workers in turn.
    n_parts : int, optional
        Without `part`: this many parts (default: one per worker), by region with
        `user_xy_m`, else contiguous blocks of user rows.
    user_xy_m : ndarray, shape (n_users, 2), optional
        Positions of the problem's users [m]: without `part`, the users are split by
        region (:func:`partition_users`). ``Drop.solve`` passes them.
    tau0 : float
        First relative smoothing temperature.
    tau_min : float
        Smallest temperature.
    stage_maxiter : int
        Newton steps per continuation stage.
    stage_accuracy : float
        A stage ends when the residual of the implied shares is below
        ``max(0.1·tol·|objective|, stage_accuracy·(g_τ − g))``.

    Returns
    -------
    Solution
        ``method="dual_dask"``. ``history``: ``dual``'s columns plus ``bytes_sent`` and
        ``bytes_received``, the bytes of every argument sent to the workers and every
        result received from them since the previous row (numpy arrays by ``nbytes``,
        other objects by their pickled size): row 0 counts the first evaluation and
        recovery, each later row its iteration's Hessian, line-search evaluations and
        recovery (and, after a stage, the next stage's first evaluation). The one-time
        shipping of the parts and the bytes after the last row (the certificate and the
        gather of the shares, whose bytes are also given alone) are not in the history:
        the ``message`` ends with them.

    Raises
    ------
    ValidationError
        For free pattern shares (fix: ``method="dual"``), part labels that are not one
        integer ≥ 0 per user, both `part` and `n_parts`, `n_parts` < 1, temperatures
        ≤ 0, or a `scheduler` that is not a Client or an address.
    CelloptError
        Without ``dask.distributed``, or for a scheduler that cannot be reached (or has no
        worker) within :data:`CONNECT_TIMEOUT_S` seconds.
    """
    t0 = time.perf_counter()
    p = problem
    check_problem(p)
    check_arguments("dual_dask", tol=tol, max_iter=max_iter, time_limit_s=time_limit_s,
                    callback=callback, single_association=False,
                    options=dict(scheduler=scheduler, part=part, n_parts=n_parts,
                                 user_xy_m=user_xy_m, tau0=tau0, tau_min=tau_min,
                                 stage_maxiter=stage_maxiter, stage_accuracy=stage_accuracy))
    check_temperatures(tau0, tau_min)
    stage_maxiter = check_stages(stage_maxiter, stage_accuracy)
    if p.free_shares:
        raise ValidationError("method 'dual_dask' does not handle free power-pattern shares "
                              "(Problem.pattern_cost); fix: use method=\"dual\"")
    labels = _check_parts(p, part, n_parts)
    if user_xy_m is not None:
        fix = f"give the finite positions of the problem's users, shape ({p.n_users}, 2) [m]"
        user_xy_m = as_float_array(user_xy_m, "user_xy_m", fix=fix)
        if user_xy_m.shape != (p.n_users, 2) or not np.isfinite(user_xy_m).all():
            raise ValidationError(f"user_xy_m has shape {user_xy_m.shape} or non-finite values; "
                                  f"fix: {fix}")
    client, close = open_client(scheduler, CONNECT_TIMEOUT_S)
    model = None
    try:
        if labels is None:
            count = n_parts if n_parts is not None else len(_workers(client))
            count = max(1, min(int(count), p.n_users))
            if user_xy_m is None:
                labels = (np.arange(p.n_users) * count) // max(p.n_users, 1)
            else:
                labels = partition_users(user_xy_m[:, 0], user_xy_m[:, 1], count)
        model = _ClusterDual(client, p, tol, labels)
        y = start_prices(model, p, None)
        res = newton_prices(model, p, y, t0=t0, tol=tol, max_iter=max_iter,
                            time_limit_s=time_limit_s, callback=callback, tau0=tau0,
                            tau_min=tau_min, stage_maxiter=stage_maxiter,
                            stage_accuracy=stage_accuracy)
        # Bytes after the last history row: the certificate, the gather of x (and a
        # stage's first evaluation, if the loop ended right after it).
        mu, nu, bound = model.certificate(res)
        received = model.received
        x = model.gather()
        gathered = model.received - received
        status, message = final_status(p, res, bound, tol)
        message += (f"; {model.n_parts} parts on {model.n_workers} workers: links shipped "
                    f"once {_mb(model.setup_bytes)}; after the last history row (certificate, "
                    f"gather of x): sent {_mb(model.sent)}, received {_mb(model.received)}, "
                    f"of which x {_mb(gathered)}")
    finally:
        if model is not None:
            model.release()
        close()
    return build_solution(
        p, x, method="dual_dask", status=status, message=message, mu=mu, nu=nu,
        upper_bound=bound, n_iter=res.n_iter, wall_s=time.perf_counter() - t0,
        history=res.history)


def _mb(n_bytes: int) -> str:
    return f"{n_bytes / 1e6:.3g} MB"


def _check_parts(p: Problem, part: Any, n_parts: Any) -> np.ndarray | None:
    """Consecutive part labels from `part` (shape (n_users,)), or None to split by `n_parts`."""
    if part is not None and n_parts is not None:
        raise ValidationError(f"both part and n_parts={n_parts!r} given; fix: give part labels "
                              "or a number of parts, not both")
    if part is None:
        if n_parts is not None and (isinstance(n_parts, bool)
                                    or not isinstance(n_parts, (int, np.integer)) or n_parts < 1):
            raise ValidationError(f"n_parts={n_parts!r}; fix: give a whole number ≥ 1, or None "
                                  "for one part per worker")
        return None
    labels = np.asarray(part)
    if labels.shape != (p.n_users,):
        raise ValidationError(f"part has shape {labels.shape}; fix: one part label per user, "
                              f"shape ({p.n_users},) (e.g. partition_users(x_m, y_m, n_parts))")
    if labels.dtype == bool or not np.issubdtype(labels.dtype, np.integer):
        raise ValidationError(f"part holds {labels.dtype} values; fix: give integer labels ≥ 0 "
                              "(e.g. partition_users(x_m, y_m, n_parts))")
    bad = np.flatnonzero(labels < 0)
    if len(bad):
        raise ValidationError(f"users {describe_rows(bad)}: part label negative (values "
                              f"{labels[bad][:10].tolist()}); fix: give labels ≥ 0")
    return np.unique(labels, return_inverse=True)[1].reshape(-1)


# ============================================================================ cluster
def _workers(client: Any) -> list[str]:
    """Addresses of every worker (``scheduler_info`` may list only a few)."""
    return sorted(client.nthreads())


def _nbytes(obj: Any) -> int:
    """Bytes of an argument or result: numpy arrays by ``nbytes`` (tuples, lists and dicts
    of them summed), anything else by its pickled size."""
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if isinstance(obj, (tuple, list)):
        return sum(_nbytes(o) for o in obj)
    if isinstance(obj, dict):
        return sum(_nbytes(k) + _nbytes(v) for k, v in obj.items())
    return len(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


class _ClusterDual:
    """The :class:`~cellopt.solvers.dual_model.DualModel` of ``dual_dask``: prices here, users on
    the workers (one :class:`_PartWorker` actor per part).

    Each part is sent, per round, only the prices of the groups and capped cells its links
    touch (``sel``, fixed at set-up) and answers with its sums on those alone.

    Parameters
    ----------
    client : dask.distributed.Client
    problem : Problem
    tol : float
    labels : ndarray of int64, shape (n_users,)
        Consecutive part labels.
    """

    def __init__(self, client: Any, problem: Problem, tol: float, labels: np.ndarray):
        p = problem
        self.p, self.client = p, client
        # Price units and floors need global counts (users per group at their best link,
        # a median): computed once here, where the problem is, exactly as `dual` does. The
        # same pass runs the checks (users whose only cells have backhaul 0).
        setup = SmoothedDual(p, tol)
        self.G, self.n, self.s, self.lb = setup.G, setup.n, setup.s, setup.lb
        self.fixed, self.capped, self.C = setup.fixed, setup.capped, setup.C
        self.n_links = setup.n_links
        del setup
        self.group_cell = np.arange(self.G) // p.n_resources
        self.sent = self.received = 0          # since the last history row
        self._key = 0
        self._kept = -1
        self._recovery = 0
        self._commit: tuple[int, int] | None = None
        self._futures: list[Any] = []
        self.actors: list[Any] = []
        self.links: list[np.ndarray] = []     # global link positions of each part
        self.sel: list[np.ndarray] = []       # prices each part touches (groups, then G + caps)
        self.n_sel_groups: list[int] = []
        try:
            self._ship(labels)
        except BaseException:  # a part that did not start: let the workers drop the others
            self.release()
            raise

    # ------------------------------------------------------------------ set-up
    def _ship(self, labels: np.ndarray) -> None:
        """Send each part's links to its worker once and start its actor there."""
        p = self.p
        workers = _workers(self.client)
        self.n_parts = int(labels.max(initial=-1)) + 1
        self.n_workers = len(workers)
        # Users and links grouped by part (stable: user order, and link order, kept).
        user_order = np.argsort(labels, kind="stable")
        user_count = np.bincount(labels, minlength=self.n_parts)
        user_start = np.cumsum(user_count) - user_count
        local = np.empty(p.n_users, np.int64)
        local[user_order] = np.arange(p.n_users) - user_start[labels[user_order]]
        link_part = labels[p.user]
        link_order = np.argsort(link_part, kind="stable")
        link_count = np.bincount(link_part, minlength=self.n_parts)
        cap_of_cell = np.full(p.n_cells, -1, np.int64)
        cap_of_cell[self.capped] = np.arange(len(self.capped))
        open_cell = p.backhaul_mbps > 0
        shared = dict(alpha=p.alpha, n_cells=p.n_cells, n_resources=p.n_resources,
                      backhaul_mbps=p.backhaul_mbps, price_per_mbps=p.price_per_mbps,
                      s=self.s, lb=self.lb)
        index = np.int32 if max(p.n_users, p.n_cells, self.n) < 2**31 else np.int64
        self.setup_bytes = 0
        pending = []
        for k, (idx, users) in enumerate(zip(np.split(link_order, np.cumsum(link_count)[:-1]),
                                             np.split(user_order, np.cumsum(user_count)[:-1]),
                                             strict=True)):
            cell = p.cell[idx]
            kept = open_cell[cell]
            groups = np.unique(p.group[idx][kept])
            caps = np.unique(cap_of_cell[cell[kept]])
            sel = np.r_[groups, self.G + caps[caps >= 0]].astype(index)
            data = dict(user=local[p.user[idx]].astype(index), cell=cell.astype(index),
                        resource=p.resource[idx].astype(index), rate_mbps=p.rate_mbps[idx],
                        weight=p.weight[users], demand_mbps=p.demand_mbps[users], sel=sel,
                        n_sel_groups=len(groups), **shared)
            worker = workers[k % len(workers)]
            [data_future] = self.client.scatter([data], workers=[worker], hash=False)
            actor_future = self.client.submit(_PartWorker, data_future, actor=True,
                                              workers=[worker], pure=False)
            self._futures += [data_future, actor_future]
            self.links.append(idx)
            self.sel.append(sel.astype(np.int64))
            self.n_sel_groups.append(len(groups))
            self.setup_bytes += _nbytes(data)
            pending.append(actor_future)
        self.actors = [f.result() for f in pending]
        self.linkless = _total(self._round("info"))
        self.sent = self.received = 0

    def release(self) -> None:
        """Let the workers drop the parts (the actors and their data)."""
        self.actors = []
        if self._futures:
            self.client.cancel(self._futures)
        self._futures = []

    def _call(self, method: str, args: list[tuple]) -> list[Any]:
        """Call `method` on every part's actor, part k with ``args[k]``; the results in part
        order. Counts the bytes both ways."""
        futures = [getattr(actor, method)(*a) for actor, a in zip(self.actors, args, strict=True)]
        results = [f.result() for f in futures]
        self.sent += sum(_nbytes(a) for a in args)
        self.received += sum(_nbytes(r) for r in results)
        return results

    def _round(self, method: str, *args: Any) -> list[Any]:
        """:meth:`_call` with the same arguments for every part."""
        return self._call(method, [args] * len(self.actors))

    def _on_groups(self, full: np.ndarray) -> list[tuple[np.ndarray]]:
        """A per-group vector (shape (G,)) restricted to the groups of each part."""
        return [full[sel[:ng]] for sel, ng in zip(self.sel, self.n_sel_groups, strict=True)]

    def _add_groups(self, parts: list[np.ndarray]) -> np.ndarray:
        """Σ over parts of per-group values on each part's groups, shape (G,)."""
        total = np.zeros(self.G)
        for sel, ng, v in zip(self.sel, self.n_sel_groups, parts, strict=True):
            total[sel[:ng]] += v
        return total

    # ------------------------------------------------------------------ DualModel
    def evaluate(self, y: np.ndarray, tau: float) -> DualPoint:
        """g_τ, the exact bound and ∇_y g_τ, from every part's sums."""
        self._key += 1
        parts = self._call("evaluate", [(self._key, y[sel], float(tau), self._kept)
                                        for sel in self.sel])
        pt = DualPoint()
        pt.key, pt.y = self._key, y
        v = y * self.s
        mu, nu = v[:self.G], v[self.G:]
        pt.mu, pt.nu = mu, nu
        smooth = _total([r[0] for r in parts])
        exact = _total([r[1] for r in parts])
        grad = np.zeros(self.n)                  # Σ_parts airtime per group, traffic per cap
        for sel, r in zip(self.sel, parts, strict=True):
            grad[sel] += r[2]
        airtime = float(mu.sum())
        nu_term = float(nu @ self.C)
        pt.g_tau = airtime + nu_term + smooth + self.linkless
        pt.bound = airtime + nu_term + exact + self.linkless
        pt.air, pt.traffic = grad[:self.G], grad[self.G:]
        pt.grad = np.r_[1.0 - pt.air, self.C - pt.traffic] * self.s
        return pt

    def hessian(self, pt: DualPoint, tau: float) -> SymmetricSystem:
        """Σ_parts of the parts' Hessians, each sent as the upper triangle of its rows and
        columns ``sel``."""
        rows, cols, vals = [], [], []
        for sel, part in zip(self.sel, self._round("hessian", pt.key, float(tau)), strict=True):
            if part is None:
                continue
            upper = sp.csr_array(part, shape=(len(sel), len(sel))).tocoo()
            off = upper.row != upper.col
            rows += [sel[upper.row], sel[upper.col[off]]]
            cols += [sel[upper.col], sel[upper.row[off]]]
            vals += [upper.data, upper.data[off]]
        if not rows:
            return SymmetricSystem(sp.csr_array((self.n, self.n)))
        H = sp.coo_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(self.n, self.n))
        return SymmetricSystem(H.tocsr())

    def retain(self, pt: DualPoint) -> None:
        """The workers keep pt's state through the evaluations that follow (its id goes
        with the next evaluation)."""
        self._kept = pt.key

    def recover(self, pt: DualPoint) -> Recovered:
        """:func:`~cellopt.solvers.common.recover_feasible` in rounds (see the module
        docstring); the shares stay on the workers, ``Recovered.x`` names them."""
        self._recovery += 1
        commit, self._commit = self._commit, None
        G = self.G
        # 1. Loads of the clipped implied shares; repair: airtime, then backhaul.
        parts = self._round("repair_loads", pt.key, self._recovery, commit)
        air = self._add_groups([r[0] for r in parts])
        flow = self._add_groups([r[1] for r in parts])
        factor = self._repair_factor(air, flow)
        # 2. Apply it (and the demand caps, per user); the repaired shares' loads.
        parts = self._call("repair_apply", [(f,) for f in self._on_groups(factor)])
        air1 = self._add_groups([r[0] for r in parts])
        flow1 = self._add_groups([r[1] for r in parts])
        trials = [(0, _total([r[2] for r in parts]), self._cost(flow1))]
        # 3. "Fill": rescale priced groups to airtime 1, repair again; its loads before
        # the repair are the repaired shares' loads × the fill factors.
        fill = (pt.y[:G] > 0) & (air1 > 1e-12) & (air1 < 1.0)
        if fill.any():
            up = np.ones(G)
            up[fill] = 1.0 / air1[fill]
            factor = self._repair_factor(air1 * up, flow1 * up)
            parts = self._call("repair_fill", list(zip(self._on_groups(up),
                                                       self._on_groups(factor), strict=True)))
            flow3 = self._add_groups([r[0] for r in parts])
            trials.append((1, _total([r[1] for r in parts]), self._cost(flow3)))
        best = Recovered(x=None, objective=-np.inf, theta=None, utility=-np.inf)
        for which, util, cost in trials:
            if util - cost > best.objective:
                best = Recovered(x=(self._recovery, which), objective=util - cost, theta=None,
                                 utility=util)
        return best

    def _repair_factor(self, air: np.ndarray, flow: np.ndarray) -> np.ndarray:
        """:func:`~cellopt.solvers.common.repair`'s airtime scale per group times its
        backhaul scale per cell, per group (shape (G,)), from airtime and flow [Mbit/s] per
        group; the traffic of a cell after the airtime scale is Σ_k scale_jk · flow_jk."""
        cap = self.p.backhaul_mbps
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            g_scale = np.where(air > 1.0, 1.0 / air, 1.0)
            traffic = np.bincount(self.group_cell, flow * g_scale, minlength=self.p.n_cells)
            c_scale = np.where(traffic > cap, cap / traffic, 1.0)
        return g_scale * c_scale[self.group_cell]

    def _cost(self, flow: np.ndarray) -> float:
        """Σ_j c_j T_j of per-group flows [Mbit/s]."""
        traffic = np.bincount(self.group_cell, flow, minlength=self.p.n_cells)
        return float(np.dot(self.p.price_per_mbps, traffic))

    def commit(self, rec: Recovered) -> None:
        """Keep `rec` on the workers as the best (told with the next recovery or gather)."""
        self._commit = rec.x

    def row_extra(self) -> dict[str, Any]:
        """Bytes sent to and received from the workers since the last row."""
        row = dict(bytes_sent=self.sent, bytes_received=self.received)
        self.sent = self.received = 0
        return row

    # ------------------------------------------------------------------ the end
    def certificate(self, res: NewtonResult) -> tuple[np.ndarray, np.ndarray, float]:
        """(μ, ν, bound): the best prices, ν of zero-capacity cells set as
        :func:`~cellopt.solvers.common.block_zero_capacity` does, and the exact dual
        function there, summed over the parts."""
        p = self.p
        mu = res.mu
        nu = np.zeros(p.n_cells)
        nu[self.capped] = res.nu
        zero = p.backhaul_mbps <= 0
        if zero.any() and p.n_links:
            parts = self._round("zero_capacity", mu, nu)
            top_open = np.max([r[0] for r in parts], axis=0)
            low_closed = np.min([r[1] for r in parts], axis=0)
            fallback = 1e12 * max(max(r[2] for r in parts), 1.0)
            closed = np.where(np.isfinite(low_closed),
                              np.maximum(fallback - np.minimum(low_closed, fallback), 0.0), 0.0)
            nu[zero] = np.maximum(top_open, closed) * (1.0 + 1e-9) + 1e-12
        capped = np.isfinite(p.backhaul_mbps)
        nu = np.where(capped, nu, 0.0)
        value = _total(self._round("bound_term", mu, nu))
        bound = float(float(mu.sum()) + (nu[capped] * p.backhaul_mbps[capped]).sum() + value)
        return mu, nu, bound

    def gather(self) -> np.ndarray:
        """The best feasible shares, shape (L,), from every part (once)."""
        commit, self._commit = self._commit, None
        x = np.zeros(self.p.n_links)
        for idx, part in zip(self.links, self._round("gather", commit), strict=True):
            x[idx] = part
        return x


def _total(values: list[Any]) -> Any:
    """The sum of the parts' values, in part order (the first part's value itself for one part)."""
    total = values[0]
    for v in values[1:]:
        total = total + v
    return total


# ============================================================================ workers
class _PartWorker:
    """One part of the users and their links, kept on a Dask worker (an actor).

    Prices arrive and sums leave restricted to ``sel``: the groups (then ``G +`` capped
    cells) this part's open links touch.

    Parameters
    ----------
    data : dict
        ``user`` (local index, sorted), ``cell``, ``resource``, ``rate_mbps`` per link;
        ``weight``, ``demand_mbps`` per user of the part; ``alpha``, ``n_cells``,
        ``n_resources``, ``backhaul_mbps``, ``price_per_mbps`` of the whole problem; ``s``,
        ``lb``: the price units and floors (shape (n,)); ``sel``, ``n_sel_groups``.
    """

    def __init__(self, data: dict[str, Any]):
        n_links = len(data["user"])
        self.problem = Problem(
            user=data["user"].astype(np.int64), cell=data["cell"].astype(np.int64),
            resource=data["resource"].astype(np.int64), rate_mbps=data["rate_mbps"],
            link_index=np.arange(n_links), n_users=len(data["weight"]),
            n_cells=int(data["n_cells"]), n_resources=int(data["n_resources"]),
            weight=data["weight"], alpha=float(data["alpha"]), demand_mbps=data["demand_mbps"],
            backhaul_mbps=data["backhaul_mbps"], price_per_mbps=data["price_per_mbps"])
        m = SmoothedDual(self.problem, 1.0, units=(data["s"], data["lb"]))
        self.model = m
        self.sel = data["sel"].astype(np.int64)
        self.groups = self.sel[:int(data["n_sel_groups"])]
        self.caps = self.sel[int(data["n_sel_groups"]):] - m.G
        self.demand = self.problem.demand_mbps[m.users]
        self.points: dict[int, DualPoint] = {}
        self.pinned = -1
        self.recovery = -1
        self.work = np.zeros(m.n_links)
        self.pending: list[np.ndarray] = [self.work, self.work]
        self.best = np.zeros(m.n_links)

    def info(self) -> float:
        """Σ w U(0) of the part's users without an open link."""
        return float(self.model.linkless_value)

    def _on_groups(self, values: np.ndarray, fill: float) -> np.ndarray:
        """Per-group values given on this part's groups, as shape (G,)."""
        full = np.full(self.model.G, fill)
        full[self.groups] = values
        return full

    def evaluate(self, key: int, y_sel: np.ndarray, tau: float, kept: int
                 ) -> tuple[float, float, np.ndarray]:
        """(Σφ(m_τ), Σφ(π*), airtime per group then traffic per capped cell, on ``sel``) at
        the scaled prices `y_sel` of ``sel``. Of the earlier points only the one a recovery
        is pinned to and `kept` (:meth:`_ClusterDual.retain`) stay."""
        y = np.zeros(self.model.n)
        y[self.sel] = y_sel
        pt = self.model.evaluate(y, tau)
        self.points = {k: v for k, v in self.points.items() if k in (self.pinned, kept)}
        self.points[key] = pt
        return pt.smooth, pt.exact, np.r_[pt.air[self.groups], pt.traffic[self.caps]]

    def hessian(self, key: int, tau: float) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """This part's Hessian of g_τ at the point `key` on ``sel``: its upper triangle as
        CSR (data, indices, indptr)."""
        if not self.model.n_links:
            return None
        H = self.model.hessian(self.points[key], tau).sparse
        upper = sp.triu(sp.csr_array(H)[self.sel][:, self.sel], format="csr")
        return upper.data, upper.indices.astype(np.int32), upper.indptr.astype(np.int32)

    def _take(self, commit: tuple[int, int] | None) -> None:
        if commit is not None:
            recovery, which = commit
            if recovery != self.recovery:
                raise RuntimeError(f"commit of recovery {recovery}, but this part holds "
                                   f"recovery {self.recovery}")
            self.best = self.pending[which]

    def repair_loads(self, key: int, recovery: int, commit: tuple[int, int] | None
                     ) -> tuple[np.ndarray, np.ndarray]:
        """Start recovery `recovery` at the point `key` (kept for its Hessian): airtime and
        flow [Mbit/s] per group of the clipped implied shares."""
        self._take(commit)
        self.recovery = recovery
        self.pinned = key
        self.work = np.clip(self.points[key].x, 0.0, 1.0)
        return self._loads(self.work)

    def repair_apply(self, factor: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """Scale by `factor` per group, then cap demands: airtime, flow per group, Σ w U(r)."""
        x = self._repaired(self.work, factor)
        self.pending[0] = self.work = x
        air, flow = self._loads(x)
        return air, flow, self._utility(x)

    def repair_fill(self, up: np.ndarray, factor: np.ndarray) -> tuple[np.ndarray, float]:
        """The fill variant: repaired shares × `up` per group, repaired again with `factor`;
        flow per group and Σ w U(r)."""
        m = self.model
        x = self._repaired(np.clip(self.work * self._on_groups(up, 1.0)[m.g], 0.0, 1.0), factor)
        self.pending[1] = x
        return self._loads(x)[1], self._utility(x)

    def _repaired(self, x: np.ndarray, factor: np.ndarray) -> np.ndarray:
        m = self.model
        x = x * self._on_groups(factor, 1.0)[m.g]
        rate = np.bincount(m.seg, m.R * x, minlength=len(m.starts))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            over = np.where(rate > self.demand, self.demand / rate, 1.0)
        return x * over[m.seg]

    def _loads(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        m = self.model
        return (np.bincount(m.g, x, minlength=m.G)[self.groups],
                np.bincount(m.g, m.R * x, minlength=m.G)[self.groups])

    def _utility(self, x: np.ndarray) -> float:
        """Σ w U(r) over every user of the part (users without open links at rate 0)."""
        m, p = self.model, self.problem
        rate = np.zeros(p.n_users)
        rate[m.users] = np.bincount(m.seg, m.R * x, minlength=len(m.starts))
        with np.errstate(invalid="ignore"):
            return float(np.sum(p.weight * utility(rate, p.alpha)))

    def zero_capacity(self, mu: np.ndarray, nu: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, float]:
        """For :func:`~cellopt.solvers.common.block_zero_capacity` (ν = 0 on those cells):
        per zero-capacity cell the largest ``best open price − π_e`` of users with an open
        link, the smallest π_e of users without one; and the largest π_e."""
        p = self.problem
        zero = p.backhaul_mbps <= 0
        pi = link_prices(p, mu, nu)
        best_open = user_min(p, np.where(zero[p.cell], np.inf, pi))
        blocked = zero[p.cell]
        has_open = np.isfinite(best_open)[p.user]
        top = np.zeros(p.n_cells)
        sel = blocked & has_open
        np.maximum.at(top, p.cell[sel], np.maximum(best_open[p.user[sel]] - pi[sel], 0.0))
        low = np.full(p.n_cells, np.inf)
        sel = blocked & ~has_open
        np.minimum.at(low, p.cell[sel], pi[sel])
        return top[zero], low[zero], float(np.max(pi, initial=0.0))

    def bound_term(self, mu: np.ndarray, nu: np.ndarray) -> float:
        """Σ_users φ_i(π_i*) of the part, as :func:`~cellopt.solvers.certificate.dual_bound`."""
        p = self.problem
        pi = user_min(p, link_prices(p, mu, nu))
        value = user_value(np.where(np.isfinite(pi), pi, 0.0), p.weight, p.alpha,
                           p.rate_cap_mbps)
        return float(value.sum())

    def gather(self, commit: tuple[int, int] | None) -> np.ndarray:
        """The best feasible shares on every link of the part (0 on zero-capacity cells)."""
        self._take(commit)
        x = np.zeros(self.problem.n_links)
        x[self.model.keep] = self.best
        return x
