"""The status of a :class:`~cellopt.Solution`: one constant per value, and what each means.

The constants are plain strings, so ``solution.status == "optimal"`` and
``solution.status == OPTIMAL`` say the same. This module imports nothing.

One rule decides the two statuses that are about the answer rather than about how a
method ended (:func:`cellopt.solvers.result.apply_status_rule`, applied by
:func:`cellopt.solve`, :func:`cellopt.solve_power` and
:func:`cellopt.load_coupling.solve_load_coupled` to everything they return):
``"optimal"`` only when the reported ``upper_bound`` is finite and certifies
``gap ≤ tol``, and ``"failed"`` whenever the objective is −inf or NaN.
"""

from __future__ import annotations

__all__ = [
    "CONVERGED", "FAILED", "LOCAL_OPTIMUM", "MAX_ITER", "OPTIMAL", "SOLVED", "STATUSES", "STOPPED",
    "SUCCESSFUL", "TAIL_OFF", "TIME_LIMIT",
]

OPTIMAL = "optimal"
SOLVED = "solved"
MAX_ITER = "max_iter"
TIME_LIMIT = "time_limit"
STOPPED = "stopped"
CONVERGED = "converged"
LOCAL_OPTIMUM = "local_optimum"
TAIL_OFF = "tail_off"
FAILED = "failed"

#: Status values and what each means. Only "optimal" claims a certified gap ≤ tol.
STATUSES: dict[str, str] = {
    OPTIMAL: "certified: the reported upper_bound gives gap ≤ tol",
    SOLVED: "the method finished (a heuristic or a rounding; the gap says how good it is)",
    MAX_ITER: "stopped at max_iter before the gap reached tol (also: a single solve whose "
              "claim of optimality the reported upper_bound does not certify)",
    TIME_LIMIT: "stopped at time_limit_s before the gap reached tol",
    STOPPED: "the callback asked to stop",
    CONVERGED: "column generation ended on its own with exact pricing (no pattern improves, "
               "or its bound certified tol during the run but not the finished answer), "
               "but the reported gap is above tol",
    LOCAL_OPTIMUM: "column generation: the pattern search finds no improving pattern "
                   "(not certified)",
    TAIL_OFF: "column generation: the objective gained less than gain_tol over three "
              "iterations (not certified)",
    FAILED: "the method could not produce a certified answer, or its objective is −inf "
            "or NaN, which is never an answer (see message)",
}

#: The statuses of a method that ended on its own terms (:attr:`Solution.success
#: <cellopt.Solution.success>`): not at a limit, not stopped, not failed.
SUCCESSFUL: tuple[str, ...] = (OPTIMAL, SOLVED, CONVERGED, LOCAL_OPTIMUM, TAIL_OFF)
