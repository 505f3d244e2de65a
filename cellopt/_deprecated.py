"""Names that moved, importable from their old place for one release with a warning."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any


def moved_names(old_module: str, new_places: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving moved names with a :class:`DeprecationWarning`.

    Parameters
    ----------
    old_module : str
        The module the names used to live in, e.g. ``"cellopt.network"``.
    new_places : mapping of str to str
        Old name -> ``"new.module:new_name"`` (or ``"new.module"`` for the same name).

    Returns
    -------
    callable
        Assign it to the old module's ``__getattr__``.
    """

    def __getattr__(name: str) -> Any:
        try:
            place = new_places[name]
        except KeyError:
            raise AttributeError(f"module {old_module!r} has no attribute {name!r}") from None
        module, _, new_name = place.partition(":")
        new_name = new_name or name
        warnings.warn(f"{old_module}.{name} moved to {module}.{new_name}; import it from there "
                      "(the old name goes in the next release)", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(module), new_name)

    return __getattr__
