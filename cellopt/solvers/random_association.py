"""The ``random`` baseline: each user served by a cell drawn uniformly among its links' cells.

The naive reference point of association studies: neither signal, nor load, nor price
counts, only which cells can serve a user at all — the cells of its links in the problem
(a link table's candidate cells; links of zero rate were dropped when the problem was
built). A smart rule is worth what it gains over this one. Each user's cell comes from
its own uniform draw (the i-th of ``n_users``), so the same seed gives a user the same
pick whatever the other users' links. The in-cell shares, the backhaul repair, the
bound and the status are those of every baseline (:mod:`cellopt.solvers.association`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from cellopt.checks import check_count
from cellopt.problem import Problem
from cellopt.solution import Solution
from cellopt.solvers.association import Callback, Pairs, baseline_solution, check_baseline
from cellopt.solvers.registry import register

__all__ = ["random_association"]


@register("random", kind="baseline")
def random_association(
    problem: Problem,
    *,
    tol: float = 1e-4,
    max_iter: int | None = None,
    time_limit_s: float | None = None,
    callback: Callback = None,
    rng: np.random.Generator | int = 0,
    inner_method: str = "dual",
    inner_options: Mapping[str, Any] | None = None,
) -> Solution:
    """Serve each user by a cell drawn uniformly at random among the cells of its links.

    User i, with links to n_i distinct cells (sorted by cell row), takes the one of rank
    ``floor(u_i · n_i)``, u_i the i-th of ``n_users`` uniform numbers drawn from `rng`;
    a user without links gets cell −1 and rate 0. Each cell then shares its airtime
    optimally among its users, as in every baseline.

    Parameters
    ----------
    problem : Problem
    rng : numpy.random.Generator or int
        The draw: an integer seed ≥ 0 (default 0: the same problem gets the same
        association), or a Generator, advanced by ``n_users`` numbers.
    tol, max_iter, time_limit_s, callback, inner_method, inner_options
        As for :func:`~cellopt.solvers.association.check_baseline`.

    Returns
    -------
    Solution
        status ``"solved"`` (or the inner solver's status if it did not succeed); the
        message names the seed.

    Raises
    ------
    ValidationError
        For an `rng` that is neither a Generator nor an integer ≥ 0.
    """
    t0 = time.perf_counter()
    inner = check_baseline("random", problem, tol=tol, max_iter=max_iter, time_limit_s=time_limit_s,
                           callback=callback, rng=rng, inner_method=inner_method,
                           inner_options=inner_options)
    if isinstance(rng, np.random.Generator):
        generator, seed = rng, "a given generator"
    else:
        seed = check_count(rng, "rng", fix="give an integer seed ≥ 0, or a numpy.random.Generator")
        generator, seed = np.random.default_rng(seed), f"seed {seed}"
    pairs = Pairs(problem)  # sorted by user, then cell
    count = np.bincount(pairs.user, minlength=problem.n_users)
    first = np.cumsum(count) - count
    rank = np.minimum((generator.random(problem.n_users) * count).astype(np.int64),
                      np.maximum(count - 1, 0))
    pair = np.where(count > 0, first + rank, -1)
    return baseline_solution(problem, pairs.cell_of(pair), method="random",
                             rule=f"each user served by a cell drawn uniformly among its links' "
                                  f"cells (random, {seed})", t0=t0, tol=tol,
                             time_limit_s=time_limit_s, callback=callback, inner=inner)
