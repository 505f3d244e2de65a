"""Argument checks shared by the public functions: each value is refused where it enters.

Every check raises a :class:`~cellopt.errors.ValidationError` whose message names the
argument, says what is wrong with the value and ends with ``"; fix: ..."``. Catalogued
parameters (units and usual ranges, :data:`cellopt.parameters.LIMITS`) are checked with
:func:`cellopt.parameters.check_real` and :func:`~cellopt.parameters.check_count`; the
helpers here cover the rest:

- :func:`check_bool` — a flag is ``True`` or ``False`` (Python or numpy), never a string
  such as ``"false"`` (which Python reads as true) nor a number;
- :func:`check_number` — a real number (not a boolean or a string), finite unless told,
  within a range;
- :func:`check_int` — a whole number given as an integer (not a boolean, not a float),
  within a range that fits an int64;
- :func:`check_array` — an array of numbers (or integers, or booleans) of a given shape,
  finite and within a range;
- :func:`check_callable`, :func:`check_seeds` and :func:`close_names` (the valid names
  nearest an unknown one, for messages).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from cellopt.errors import ValidationError, describe_rows
from cellopt.parameters import is_integer, is_real, shown

__all__ = ["INT64_MAX", "as_float", "as_float_array", "callback_stop", "check_array", "check_bool",
           "check_callable", "check_int", "check_names", "check_number", "check_seeds", "close_names",
           "shown"]

#: Largest whole number a count may be: counts index int64 arrays.
INT64_MAX = int(np.iinfo(np.int64).max)


def as_float(value: Any) -> float:
    """A real number as a float; inf for an integer beyond the float range (10**400)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


def check_bool(value: Any, name: str) -> bool:
    """`value` as a bool, after checking that it is one (Python or numpy).

    Parameters
    ----------
    value : any
        The flag as given.
    name : str
        How messages name it.

    Returns
    -------
    bool

    Raises
    ------
    ValidationError
        For anything but ``True``, ``False``, ``numpy.True_`` and ``numpy.False_``: the
        strings ``"false"`` and ``"no"`` (truthy in Python), 0 and 1, None.
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    hint = ""
    if isinstance(value, str) and value.strip().lower() in ("false", "no", "off", "0", "true",
                                                             "yes", "on", "1"):
        word = value.strip().lower() in ("true", "yes", "on", "1")
        hint = f" (a non-empty string counts as true in Python), e.g. {name}={word}"
    raise ValidationError(f"{name}={shown(value)} is a {type(value).__name__}, not True or "
                          f"False; fix: pass {name}=True or {name}=False{hint}")


def check_number(value: Any, name: str, *, low: float = -math.inf, high: float = math.inf,
                 low_open: bool = False, high_open: bool = False, allow_inf: bool = False,
                 unit: str = "", fix: str) -> float:
    """`value` as a float, after checking that it is a real number within a range.

    Parameters
    ----------
    value : any
        The number as given.
    name : str
        How messages name it.
    low, high : float
        The range; `low_open` / `high_open` exclude the end itself.
    allow_inf : bool
        ±inf is legal where the range allows it (e.g. an unlimited capacity); otherwise
        the value must be finite.
    unit : str
        Shown after the value in messages (e.g. ``"m"``).
    fix : str
        How to give a good value, appended to the message.

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        For booleans, strings, None and other non-numbers, NaN, integers beyond the
        floating-point range, infinities unless `allow_inf`, and values out of range.
    """
    unit = f" {unit}" if unit else ""
    if not is_real(value):
        raise ValidationError(f"{name}={shown(value)} is a {type(value).__name__}, not a "
                              f"number; fix: {fix}")
    try:
        v = float(value)
    except OverflowError:
        raise ValidationError(f"{name}={shown(value)} is beyond the floating-point range; "
                              f"fix: {fix}") from None
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValidationError(f"{name}={v}{unit} is not finite; fix: {fix}")
    if v < low or v > high or (low_open and v == low) or (high_open and v == high):
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise ValidationError(f"{name}={v:.6g}{unit} is outside {interval}{unit}; fix: {fix}")
    return v


def check_int(value: Any, name: str, *, minimum: int = 0, maximum: int = INT64_MAX,
              fix: str) -> int:
    """`value` as an int, after checking that it is an integer in ``[minimum, maximum]``.

    Parameters
    ----------
    value : any
        The whole number as given: a Python or numpy integer.
    name : str
        How messages name it.
    minimum, maximum : int
        The range (by default ≥ 0 and within int64).
    fix : str
        How to give a good value, appended to the message.

    Returns
    -------
    int

    Raises
    ------
    ValidationError
        For booleans, floats (even whole ones: ``3.0`` is refused with the hint
        ``3``), strings, None, and integers out of range.
    """
    if isinstance(value, (bool, np.bool_)):
        raise ValidationError(f"{name}={value!r} is a boolean, not a whole number; fix: {fix}")
    if not is_integer(value):
        hint = ""
        try:
            if is_real(value) and math.isfinite(float(value)) and float(value).is_integer() \
                    and abs(float(value)) <= INT64_MAX:
                hint = f" (e.g. {name}={int(value)})"
        except OverflowError:
            pass
        raise ValidationError(f"{name}={shown(value)} is a {type(value).__name__}, not a whole "
                              f"number; fix: {fix}{hint}")
    count = int(value)
    if count < minimum:
        raise ValidationError(f"{name}={count} is below {minimum}; fix: {fix}")
    if count > maximum:
        raise ValidationError(f"{name}={shown(count)} is above {maximum:,}; fix: {fix}")
    return count


def check_callable(value: Any, name: str, *, fix: str) -> None:
    """Refuse a `value` that is neither None nor callable (ValidationError)."""
    if value is not None and not callable(value):
        raise ValidationError(f"{name}={shown(value)} is a {type(value).__name__}, not a "
                              f"function; fix: {fix}")


def callback_stop(answer: Any, name: str = "callback") -> bool:
    """Whether a callback's `answer` asks to stop: True stops, False or None goes on.

    Raises
    ------
    ValidationError
        For any other answer (a string, a number, an array...), whose truth a run
        would otherwise guess, naming the callback and the fix.
    """
    if answer is None or isinstance(answer, (bool, np.bool_)):
        return bool(answer)
    raise ValidationError(f"{name} returned {shown(answer)} (a {type(answer).__name__}); fix: "
                          "return True to stop the run, and False or None to go on")


def as_float_array(value: Any, name: str, *, fix: str, copy: bool = True) -> np.ndarray:
    """`value` (a number or an array of numbers, any shape) as a float64 array.

    Only numbers pass: booleans, strings (even ``"10"``, which numpy would convert) and
    integers beyond the floating-point range are refused, so that no value is silently
    read as something else. Object arrays (e.g. a pandas column of dtype object) pass if
    every entry is a real number.

    `copy` False: a float64 array given is returned as it is, not copied.

    Raises
    ------
    ValidationError
        Naming `name`, with `fix`.
    """
    def refuse(why: str) -> ValidationError:  # the message is built only when it is needed
        return ValidationError(f"{name}={shown(value)} cannot be read as numbers: {why}; "
                               f"fix: {fix}")

    if isinstance(value, (str, bytes, bool, np.bool_)) or value is None:
        raise refuse(f"it is a {type(value).__name__}")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):  # ragged nested sequences
        raise refuse("it is ragged or mixed") from None
    if arr.dtype.kind == "O":
        flat = arr.reshape(-1)
        bad = [k for k, v in enumerate(flat) if not is_real(v)]
        if bad:
            first = flat[bad[0]]
            raise refuse(f"{shown(first)} ({type(first).__name__}) at "
                         f"{_entries(np.asarray(bad), arr.shape)} is not a number")
        try:
            return arr.astype(float)
        except OverflowError:
            raise refuse("it holds integers beyond the floating-point range") from None
    if arr.dtype.kind not in "iuf":
        raise refuse(f"it holds {arr.dtype} values")
    return arr.astype(float, copy=copy)


def check_array(value: Any, name: str, *, shape: tuple[int, ...], kind: str = "float",
                finite: bool = True, low: float | None = None, high: float | None = None,
                fix: str, copy: bool = True) -> np.ndarray:
    """`value` as an array of `shape`, after checking its type and values.

    Parameters
    ----------
    value : array_like
        The array as given.
    name : str
        How messages name it.
    shape : tuple of int
        The shape it must have.
    kind : {"float", "int", "bool"}
        "float": numbers (integers and floats; booleans and strings are refused),
        returned as float64; "int": integers, returned as int64; "bool": booleans.
    finite : bool
        ("float") refuse NaN and ±inf; NaN is always refused.
    low, high : float, optional
        Values must be ≥ `low` and ≤ `high`.
    fix : str
        How to give a good value, appended to the message.
    copy : bool
        False: an array already of the dtype returned is not copied.

    Returns
    -------
    ndarray
        float64, int64 or bool (a new array unless `copy` is False).

    Raises
    ------
    ValidationError
        A wrong shape or dtype, NaN (or infinities with `finite`), values out of range;
        the message names the first offending entries.
    """
    if kind == "float":
        arr = as_float_array(value, name, fix=fix, copy=copy)
    else:
        if isinstance(value, (str, bytes)) or value is None:
            raise ValidationError(f"{name}={shown(value)} is a {type(value).__name__}, not an "
                                  f"array of shape {tuple(shape)}; fix: {fix}")
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError):  # ragged nested sequences
            raise ValidationError(f"{name} is not an array (ragged or mixed); fix: {fix}") from None
        wanted = {"int": ("iu", "integers"), "bool": ("b", "booleans")}[kind]
        if arr.size and arr.dtype.kind not in wanted[0]:
            raise ValidationError(f"{name} holds {arr.dtype} values, not {wanted[1]}; fix: {fix}")
    if arr.shape != tuple(shape):
        raise ValidationError(f"{name} has shape {arr.shape}, expected {tuple(shape)}; fix: {fix}")
    if kind == "bool":
        return arr.astype(bool, copy=copy)
    if kind == "int":
        if arr.dtype.kind == "u" and arr.size and arr.max() > INT64_MAX:
            raise ValidationError(f"{name} has entries above {INT64_MAX:,}; fix: {fix}")
        arr = arr.astype(np.int64, copy=copy)
    flat = arr.reshape(-1)
    if kind == "float":
        bad = np.flatnonzero(np.isnan(flat) | (np.isinf(flat) if finite else False))
        if len(bad):
            what = "NaN or infinite" if finite else "NaN"
            raise ValidationError(f"{name} is {what} at {_entries(bad, shape)}; fix: {fix}")
    for bound, below in ((low, True), (high, False)):
        if bound is None:
            continue
        bad = np.flatnonzero(flat < bound if below else flat > bound)
        if len(bad):
            side = "below" if below else "above"
            raise ValidationError(f"{name} is {side} {bound:g} at {_entries(bad, shape)} (values "
                                  f"{flat[bad[:5]].tolist()}); fix: {fix}")
    return arr


def _entries(flat_index: np.ndarray, shape: tuple[int, ...]) -> str:
    """Offending entries of an array, by flat position (1-d: rows; else index tuples)."""
    if len(shape) <= 1:
        return describe_rows(flat_index, limit=5)
    shown = [tuple(int(i) for i in np.unravel_index(k, shape)) for k in flat_index[:5]]
    more = f" and {len(flat_index) - 5} more" if len(flat_index) > 5 else ""
    return f"entries {shown}{more}"


def check_seeds(seeds: Any, name: str = "seeds") -> list[int]:
    """`seeds` as a non-empty list of seeds: integers in ``[0, 2**64)``.

    Raises
    ------
    ValidationError
        For a string, a non-sequence, an empty sequence, or an entry that is not an
        integer (booleans and floats included) or out of range.
    """
    fix = "give a non-empty list of integer seeds ≥ 0, e.g. [0, 1, 2]"
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        raise ValidationError(f"{name}={shown(seeds)} is a {type(seeds).__name__}, not a list "
                              f"of seeds; fix: {fix}")
    values = list(seeds)
    if not values:
        raise ValidationError(f"{name} is empty; fix: {fix}, or leave it out (drops decides)")
    bad = [k for k, s in enumerate(values) if not (is_integer(s) and 0 <= int(s) < 2**64)]
    if bad:
        raise ValidationError(f"{name} has entries {[values[k] for k in bad[:5]]} at positions "
                              f"{bad[:5]} that are not integer seeds in [0, 2**64); fix: {fix}")
    return [int(s) for s in values]


def close_names(name: Any, valid: Sequence[str], n: int = 3) -> list[str]:
    """The valid names nearest `name` (for "did you mean" hints), best first; may be empty."""
    if not isinstance(name, str):
        return []
    return difflib.get_close_matches(name, list(valid), n=n, cutoff=0.6)


def check_names(given: Iterable[str], valid: Sequence[str], *, what: str, fix: str) -> None:
    """Refuse names not in `valid`: "unknown {what} [...]; fix: did you mean [...]? {fix}".

    `what` names the kind of name and where it was given (e.g. "field(s) ... for
    Problem.replace"); the hint lists the nearest valid names (:func:`close_names`).
    """
    unknown = sorted(set(given) - set(valid))
    if unknown:
        near = sorted({n for k in unknown for n in close_names(k, valid)})
        raise ValidationError(f"unknown {what.format(unknown)}; fix: "
                              + (f"did you mean {near}? " if near else "") + fix)
