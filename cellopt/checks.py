"""Argument checks shared by every layer: each value is refused where it enters.

Every check raises a :class:`~cellopt.errors.ValidationError` whose message names the
argument, says what is wrong with the value and ends with ``"; fix: ..."``.

- :func:`check_real` and :func:`check_count` — a parameter of the catalogue
  (:data:`cellopt.parameters.LIMITS`): its unit, possible range and fix, and a warning
  outside its usual range (:func:`outside_usual` tests a column of values);
  :func:`check_per_tier` and :func:`check_choice` — a scenario key given per tier, and a
  name (:data:`~cellopt.parameters.TIER_LIMITS`, :data:`~cellopt.parameters.CHOICES`);
- :func:`check_number` — a real number (not a boolean or a string), finite unless told,
  within a range given by the caller; :func:`check_count` with a `fix` — a whole number
  given as an integer (not a boolean, not a float), ≥ a minimum, within int64;
- :func:`check_bool` — a flag is ``True`` or ``False`` (Python or numpy), never a string
  such as ``"false"`` (which Python reads as true) nor a number;
- :func:`check_array` — an array of numbers (or integers, or booleans) of a given shape,
  finite and within a range;
- :func:`check_callable`, :func:`check_seeds`, :func:`check_names` and :func:`close_names`
  (the valid names nearest an unknown one, for messages); :func:`is_real`,
  :func:`is_integer` and :func:`shown` (a value for a message).
"""

from __future__ import annotations

import difflib
import math
import numbers
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from cellopt.errors import ValidationError, describe_rows
from cellopt.parameters import CHOICES, LIMITS, TIER_LIMITS

__all__ = ["INT64_MAX", "as_float", "as_float_array", "callback_stop", "check_array", "check_bool",
           "check_callable", "check_choice", "check_count", "check_names", "check_number",
           "check_per_tier", "check_real", "check_seeds", "close_names", "is_integer", "is_real",
           "outside_usual", "shown"]

#: Largest whole number a count may be: counts index int64 arrays.
INT64_MAX = int(np.iinfo(np.int64).max)


def shown(value: Any) -> str:
    """`value` for a message: its repr, shortened (a 400-digit integer stays readable)."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}...({len(text)} characters)"


def is_real(value: Any) -> bool:
    """A real number (Python or numpy), not a boolean."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def is_integer(value: Any) -> bool:
    """An integer (Python or numpy), not a boolean."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


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


def _real(value: Any, name: str, unit: str, fix: str, infinite: tuple[float, ...]) -> float:
    """`value` as a float: a real number that fits one, not NaN, infinite only if in
    `infinite`."""
    if not is_real(value):
        raise ValidationError(f"{name}={shown(value)} is a {type(value).__name__}, not a "
                              f"number; fix: {fix}")
    try:
        v = float(value)
    except OverflowError:  # an integer beyond the float range, e.g. 10**400
        raise ValidationError(f"{name}={shown(value)}{unit} is beyond the floating-point range; "
                              f"fix: {fix}") from None
    if math.isnan(v) or (math.isinf(v) and v not in infinite):
        raise ValidationError(f"{name}={v}{unit} is not finite; fix: {fix}")
    return v


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
    v = _real(value, name, unit, fix, (-math.inf, math.inf) if allow_inf else ())
    if v < low or v > high or (low_open and v == low) or (high_open and v == high):
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise ValidationError(f"{name}={v:.6g}{unit} is outside {interval}{unit}; fix: {fix}")
    return v


def check_real(value: Any, name: str, kind: str | None = None, *, warn: bool = True,
               stacklevel: int = 3, tier: str | None = None) -> float:
    """`value` as a float, after checking it against ``LIMITS[kind]``.

    Parameters
    ----------
    value : any
        The parameter as given.
    name : str
        How messages name it, e.g. ``"isd_m"`` or ``"RadioModel.noise_figure_db['macro']"``.
    kind : str, optional
        Key of :data:`~cellopt.parameters.LIMITS`; default `name`.
    warn : bool
        Warn (:class:`UserWarning`) outside the usual range.
    stacklevel : int
        Of the warning: 3 points at the caller of the function that calls this one.
    tier : str, optional
        The value is that of cells of this tier: warn outside the tier's usual range
        (:meth:`~cellopt.parameters.Quantity.usual_for`), where the limit has one.

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        Not a real number (strings, booleans, None), NaN, infinite where not allowed, or
        outside the possible range; the message names the parameter and the fix.
    """
    limit = LIMITS[name if kind is None else kind]
    unit = f" {limit.unit}" if limit.unit else ""
    v = _real(value, name, unit, limit.fix, (math.inf,) if limit.allow_inf else ())
    if v < limit.low or (limit.low_open and v == limit.low) or v > limit.high:
        raise ValidationError(f"{name}={v:.6g}{unit} is outside the possible range "
                              f"{limit.interval()}; fix: {limit.fix}")
    usual = limit.usual_for(tier)
    if warn and usual is not None and not usual[0] <= v <= usual[1]:
        lo, hi = usual
        of = f" of {tier} cells" if usual != limit.usual else ""
        warnings.warn(f"{name}={v:.6g}{unit} is outside the usual range [{lo:g}, {hi:g}]{unit}"
                      f"{of} (legal, but check the unit): {limit.fix}", UserWarning,
                      stacklevel=stacklevel)
    return v


def outside_usual(values: np.ndarray, kind: str, tiers: np.ndarray | None = None) -> np.ndarray:
    """Which values are outside the usual range of ``LIMITS[kind]`` (:func:`check_real`'s
    warning, for a column of values rather than one).

    Parameters
    ----------
    values : array_like of float, shape (n,)
        The values; NaN ones (not given) are never outside.
    kind : str
        Key of :data:`~cellopt.parameters.LIMITS`.
    tiers : array_like of str, shape (n,), optional
        The tier of each value's cell: the tier's usual range where the limit has one
        (:meth:`~cellopt.parameters.Quantity.usual_for`).

    Returns
    -------
    ndarray of bool, shape (n,)
    """
    limit = LIMITS[kind]
    values = np.asarray(values, float)
    low = np.full(values.shape, -math.inf)
    high = np.full(values.shape, math.inf)
    if limit.usual is not None:
        low[:], high[:] = limit.usual
    if tiers is not None:
        tiers = np.asarray(tiers, object)
        for tier, lo, hi in limit.usual_per_tier:
            mine = tiers == tier
            low[mine], high[mine] = lo, hi
    with np.errstate(invalid="ignore"):
        return (values < low) | (values > high)


def check_count(value: Any, name: str, *, fix: str | None = None, minimum: int | None = None) -> int:
    """`value` as an int ≥ `minimum`: a Python or numpy integer that fits an int64.

    Parameters
    ----------
    value : any
        The count as given.
    name : str
        How messages name it.
    fix : str, optional
        How to give a good value; default that of the count ``LIMITS[name]``, whose
        `low` is then also the default `minimum`.
    minimum : int, optional
        Smallest legal count; default 0 (or ``LIMITS[name].low``, see `fix`).

    Returns
    -------
    int

    Raises
    ------
    ValidationError
        Booleans, floats (whole ones too: ``3.0`` is refused, with the hint ``3``),
        strings, None, values below `minimum` and values beyond int64.
    """
    if fix is None:
        fix = LIMITS[name].fix
        minimum = int(LIMITS[name].low) if minimum is None else minimum
    minimum = 0 if minimum is None else minimum
    if isinstance(value, (bool, np.bool_)):
        raise ValidationError(f"{name}={value!r} is a boolean, not a count; fix: {fix}")
    if not is_integer(value):
        if not is_real(value):
            raise ValidationError(f"{name}={shown(value)} is a {type(value).__name__}, not a "
                                  f"whole number; fix: {fix}")
        try:
            whole = math.isfinite(float(value)) and float(value).is_integer()
        except OverflowError:
            whole = False
        what = f"a {type(value).__name__}, not an int" if whole else "not a whole number"
        hint = f" (e.g. {name}={int(value)})" if whole and abs(float(value)) < 2**63 else ""
        raise ValidationError(f"{name}={shown(value)} is {what}; fix: {fix}{hint}")
    count = int(value)
    if count < minimum:
        raise ValidationError(f"{name}={count} is below {minimum}; fix: {fix}")
    if count > INT64_MAX:
        raise ValidationError(f"{name}={shown(count)} is beyond any count cellopt can index "
                              f"(2**63 − 1); fix: {fix}")
    return count


def check_per_tier(value: float | dict[str, float], name: str) -> None:
    """Check a per-tier scenario value against ``TIER_LIMITS[name]``, tier by tier.

    Parameters
    ----------
    value : float or dict of str to float
        One number for every tier, or a number per tier.
    name : str
        Key of :data:`~cellopt.parameters.TIER_LIMITS`.

    Raises
    ------
    ValidationError
        A value that is not finite or is outside the limit, naming the tier.
    """
    limit = TIER_LIMITS[name]
    for tier, v in (value.items() if isinstance(value, dict) else [("every tier", value)]):
        if not (math.isfinite(v) and limit.low <= v <= limit.high) or (limit.low_open
                                                                      and v == limit.low):
            raise ValidationError(f"{name} of {tier} is {v}; fix: {limit.fix}")


def check_choice(value: str | list[str], name: str) -> None:
    """Check a name (or, for a choice with a noun, names) against ``CHOICES[name]``.

    Raises
    ------
    ValidationError
        An unknown name; the message lists the valid ones.
    """
    choice = CHOICES[name]
    valid = choice.names()
    if choice.noun is None:
        if value not in valid:
            raise ValidationError(f"{name}={value!r}; fix: use one of {list(valid)}")
        return
    unknown = [t for t in ([value] if isinstance(value, str) else value) if t not in valid]
    if unknown:
        raise ValidationError(f"{name} has unknown {choice.noun} {unknown}; fix: use "
                              f"{choice.noun} from {list(valid)}")


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
