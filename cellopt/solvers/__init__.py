"""Solvers for the association problem, behind one front door: :func:`solve`.

- :mod:`~cellopt.solvers.api` — :func:`solve`;
- :mod:`~cellopt.solvers.registry` — the methods, what each declares, the default method;
- :mod:`~cellopt.solvers.arguments` — the checks of a call (problem, arguments, options, warm
  starts, a baseline's inner solver);
- :mod:`~cellopt.solvers.methods` — the method modules, imported so that they register;
- :mod:`~cellopt.solvers.certificate` — the dual bound and the certified gap;
- :mod:`~cellopt.solvers.result` — a :class:`~cellopt.Solution` from shares and prices;
- :mod:`~cellopt.solvers.association` — a fixed association made an answer (the part every
  baseline shares);
- :mod:`~cellopt.solvers.common` — pieces the methods share (best responses, loads, repair).
"""

from __future__ import annotations

from cellopt.solvers import methods  # noqa: F401  (every method registers on import)
from cellopt.solvers.api import solve
from cellopt.solvers.registry import (
    BLOCK_METHODS,
    METHOD_INFO,
    METHODS,
    PATTERN_METHODS,
    MethodInfo,
    OptionInfo,
    method_info,
    method_options,
    method_table,
    methods_with,
    register,
)

__all__ = [
    "BLOCK_METHODS", "METHODS", "METHOD_INFO", "PATTERN_METHODS", "MethodInfo", "OptionInfo",
    "method_info", "method_options", "method_table", "methods_with", "register", "solve",
]
