"""The status of a :class:`~cellopt.Solution`: one constant per value, and what each means.

The constants are plain strings, so ``solution.status == "optimal"`` and
``solution.status == OPTIMAL`` say the same. This module imports nothing.
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
    OPTIMAL: "certified: gap ≤ tol",
    SOLVED: "the method finished (a heuristic or a rounding; the gap says how good it is)",
    MAX_ITER: "stopped at max_iter before the gap reached tol",
    TIME_LIMIT: "stopped at time_limit_s before the gap reached tol",
    STOPPED: "the callback asked to stop",
    CONVERGED: "column generation: no pattern improves (exact pricing), gap still above tol",
    LOCAL_OPTIMUM: "column generation: the pattern search finds no improving pattern "
                   "(not certified)",
    TAIL_OFF: "column generation: the objective gained less than gain_tol over three "
              "iterations (not certified)",
    FAILED: "the method could not produce a certified answer (see message)",
}

#: The statuses of a method that ended on its own terms (:attr:`Solution.success
#: <cellopt.Solution.success>`): not at a limit, not stopped, not failed.
SUCCESSFUL: tuple[str, ...] = (OPTIMAL, SOLVED, CONVERGED, LOCAL_OPTIMUM, TAIL_OFF)
