"""When a long call shows its progress: one rule for every long call.

Every long call of cellopt (link tables, coverage maps, reading a large cell file, joint
power, runs, sweeps, capacity studies) takes ``progress: bool | None = None``:

- ``None`` (the default): show progress when standard error is a terminal, and nothing
  otherwise (a notebook cell's stderr, a pipe, a log file, CI, a test);
- ``True``: show it anyway (a bar redrawn in place is written to stderr as it is);
- ``False``: show nothing.

What is shown is display only: no result depends on it. :func:`shows` applies the rule;
:func:`progress_bar` is the tqdm bar every long call draws with it.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from cellopt.errors import ValidationError

__all__ = ["progress_bar", "shows"]


def shows(progress: bool | None, name: str = "progress") -> bool:
    """Whether a long call given `progress` shows its progress.

    Parameters
    ----------
    progress : bool or None
        The call's argument: None shows progress when standard error is a terminal.
    name : str
        The argument's name, for the message when it is neither a bool nor None.

    Returns
    -------
    bool

    Raises
    ------
    ValidationError
        `progress` is not True, False or None (e.g. the string ``"false"``).
    """
    if progress is None:
        isatty = getattr(sys.stderr, "isatty", None)
        try:
            return bool(isatty()) if isatty is not None else False
        except (OSError, ValueError):  # a closed or detached stream
            return False
    if isinstance(progress, bool | np.bool_):
        return bool(progress)
    raise ValidationError(f"{name}={progress!r} is a {type(progress).__name__}, not True, False "
                          f"or None; fix: pass {name}=True (show), False (show nothing) or None "
                          "(show when standard error is a terminal)")


def progress_bar(total: float | None, *, progress: bool | None, desc: str, unit: str = "it",
                 **options: Any) -> Any:
    """A tqdm bar on standard error, drawn when :func:`shows` says so (else disabled).

    Parameters
    ----------
    total : float or None
        Steps to come (None: unknown).
    progress : bool or None
        The long call's argument (see the module docstring).
    desc, unit : str
        The bar's label and the unit of a step.
    **options
        Passed on to :class:`tqdm.tqdm` (e.g. ``unit_scale``, ``leave``, ``bar_format``).

    Returns
    -------
    tqdm.tqdm
        A disabled bar counts but draws nothing, so callers update it either way.
    """
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=not shows(progress), file=sys.stderr,
                **options)
