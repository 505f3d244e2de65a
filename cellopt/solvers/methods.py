"""Every method module, imported here so that its methods register.

A new method module is added to the import below; ``import cellopt.solvers`` imports this
module, so :data:`~cellopt.solvers.registry.METHODS` is complete once the package is.
"""

from __future__ import annotations

from types import ModuleType

from cellopt.solvers import alm, baselines, dask_dual, dual, ipm, random_association, reference

__all__ = ["MODULES"]

#: The modules that register methods, in the order they are imported.
MODULES: tuple[ModuleType, ...] = (alm, baselines, dask_dual, dual, ipm, random_association,
                                   reference)
