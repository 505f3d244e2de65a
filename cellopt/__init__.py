"""cellopt: user association, bandwidth and power for cellular networks, with certified bounds."""

from cellopt import radio, topology
from cellopt.errors import CelloptError, ResourceLimitError, StoreError, ValidationError
from cellopt.linktable import LinkTable
from cellopt.network import Network
from cellopt.power import solve_power
from cellopt.problem import Problem
from cellopt.solution import Solution
from cellopt.solvers import METHODS, solve

__version__ = "0.1.0"

__all__ = [
    "METHODS", "CelloptError", "LinkTable", "Network", "Problem", "ResourceLimitError", "Solution",
    "StoreError", "ValidationError", "__version__",
    "radio", "solve", "solve_power", "topology",
]
