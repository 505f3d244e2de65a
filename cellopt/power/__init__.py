"""Power optimization: patterns of per-cell power levels, chosen jointly with association."""

from cellopt.power.eicic import abs_grid, abs_problem, solve_abs
from cellopt.power.gains import GainTable
from cellopt.power.joint import explain_stop, master_problem, solve_power
from cellopt.power.options import ColumnGenerationOptions
from cellopt.power.patterns import PatternSpace
from cellopt.power.problem import PowerProblem
from cellopt.solution import PowerResult

__all__ = ["ColumnGenerationOptions", "GainTable", "PatternSpace", "PowerProblem", "PowerResult", "abs_grid",
           "abs_problem", "explain_stop", "master_problem", "solve_abs", "solve_power"]
