"""Power optimization: patterns of per-cell power levels, chosen jointly with association."""

from cellopt.power.gains import GainTable
from cellopt.power.joint import master_problem, solve_power
from cellopt.power.patterns import PatternSpace

__all__ = ["GainTable", "PatternSpace", "master_problem", "solve_power"]
