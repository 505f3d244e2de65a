"""cellopt: user association, bandwidth and power for cellular networks, with certified bounds.

The names below are loaded when first used, so ``import cellopt`` is quick and the heavy
dependencies (geopandas, cvxpy, matplotlib) are imported only by what needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from cellopt._version import __version__
from cellopt.errors import CelloptError, ResourceLimitError, StoreError, ValidationError

#: Public name -> (module, attribute); attribute None for a subpackage.
_LAZY: dict[str, tuple[str, str | None]] = {
    "radio": ("cellopt.radio", None),
    "topology": ("cellopt.topology", None),
    "power": ("cellopt.power", None),
    "deploy": ("cellopt.deploy", None),
    "study": ("cellopt.study", None),
    "plotting": ("cellopt.plotting", None),
    "LinkTable": ("cellopt.linktable", "LinkTable"),
    "Drop": ("cellopt.drop", "Drop"),
    "Network": ("cellopt.network", "Network"),
    "Problem": ("cellopt.problem", "Problem"),
    "Solution": ("cellopt.solution", "Solution"),
    "METHODS": ("cellopt.solvers", "METHODS"),
    "solve": ("cellopt.solvers", "solve"),
    "solve_power": ("cellopt.power", "solve_power"),
    "load_scenario": ("cellopt.study.scenario", "load_scenario"),
    "run_scenario": ("cellopt.study.run", "run_scenario"),
    "run_sweep": ("cellopt.study.sweep", "run_sweep"),
    "capacity": ("cellopt.study.capacity", "capacity"),
    "capacity_sweep": ("cellopt.study.capacity", "capacity_sweep"),
}

__all__ = ["CelloptError", "ResourceLimitError", "StoreError", "ValidationError", "__version__",
           *_LAZY]


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'cellopt' has no attribute {name!r}") from None
    value = importlib.import_module(module)
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    """The public names (``__all__``), loaded or not: no helper of this module."""
    return sorted(__all__)


if TYPE_CHECKING:  # for type checkers and IDEs: the same names, eagerly
    from cellopt import deploy, plotting, power, radio, study, topology  # noqa: F401
    from cellopt.drop import Drop  # noqa: F401
    from cellopt.linktable import LinkTable  # noqa: F401
    from cellopt.network import Network  # noqa: F401
    from cellopt.power import solve_power  # noqa: F401
    from cellopt.problem import Problem  # noqa: F401
    from cellopt.solution import Solution  # noqa: F401
    from cellopt.solvers import METHODS, solve  # noqa: F401
    from cellopt.study.capacity import capacity, capacity_sweep  # noqa: F401
    from cellopt.study.run import run_scenario  # noqa: F401
    from cellopt.study.scenario import load_scenario  # noqa: F401
    from cellopt.study.sweep import run_sweep  # noqa: F401
