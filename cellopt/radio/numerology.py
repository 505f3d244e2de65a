"""Carrier numerology: resource blocks, subcarriers and the per-resource-element power offset.

A carrier of channel bandwidth BW and subcarrier spacing Δf carries N_RB resource blocks
of 12 subcarriers each. N_RB is fixed by the 3GPP RF specifications, not by
``BW / (12 Δf)``: the rest of the channel is guard band (10 % of an LTE carrier of
3–20 MHz, 2–20 % of an NR one). The tables here are data, as printed in the standards:

- :data:`LTE_N_RB` — TS 36.101 Table 5.6-1 (E-UTRA, 15 kHz);
- :data:`NR_FR1_N_RB` — TS 38.101-1 Table 5.3.2-1 (NR, frequency range 1, 410–7125 MHz);
- :data:`NR_FR2_N_RB` — TS 38.101-2 Table 5.3.2-1 (NR, frequency range 2-1,
  24.25–52.6 GHz).

:func:`prb_count` looks a carrier up, :func:`subcarriers` gives 12 · N_RB and
:func:`rsrp_offset_db` the dB between a carrier's total transmit power and its power
per resource element, the quantity RSRP measures. :func:`numerology` gives the NR
numerology μ of a subcarrier spacing, with its slot duration.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from cellopt.checks import check_number, shown
from cellopt.errors import ValidationError
from cellopt.parameters import register_choice

__all__ = [
    "LTE_N_RB",
    "NR_FR1_N_RB",
    "NR_FR2_N_RB",
    "NR_SUBCARRIER_SPACINGS_KHZ",
    "SUBCARRIERS_PER_RB",
    "Numerology",
    "numerology",
    "prb_count",
    "rsrp_offset_db",
    "subcarriers",
]

#: Subcarriers in one resource block, N_sc^RB (TS 36.211 §6.2.3, TS 38.211 §4.4.4.1).
SUBCARRIERS_PER_RB: int = 12

#: TS 36.101 Table 5.6-1, "Transmission bandwidth configuration N_RB in E-UTRA channel
#: bandwidths": channel bandwidth [MHz] → N_RB, all at 15 kHz. The same numbers are
#: TS 36.104 Table 5.6-1 (base station); checked against its Release 18 text.
LTE_N_RB: dict[float, int] = {1.4: 6, 3: 15, 5: 25, 10: 50, 15: 75, 20: 100}

#: TS 38.101-1 Table 5.3.2-1, "Maximum transmission bandwidth configuration N_RB" (NR
#: frequency range 1), Release 17 (its 15 columns, 5–100 MHz; unchanged in Release 18):
#: subcarrier spacing [kHz] → {channel bandwidth [MHz] → N_RB}. ``None`` is an entry
#: the standard marks N/A (no 15 kHz carrier above 50 MHz, no 5 MHz carrier at 60 kHz).
#: 70 MHz is absent from the first Release 15 versions; 35 and 45 MHz came with the
#: Release 17 work item NR_bands_R17_BWs. Release 18 adds a 3 MHz column (15 RB at
#: 15 kHz, N/A at 30 and 60 kHz), which is left out here. TS 38.104 Table 5.3.2-1 (base
#: station) has the same numbers.
NR_FR1_N_RB: dict[int, dict[float, int | None]] = {
    15: {5: 25, 10: 52, 15: 79, 20: 106, 25: 133, 30: 160, 35: 188, 40: 216, 45: 242,
         50: 270, 60: None, 70: None, 80: None, 90: None, 100: None},
    30: {5: 11, 10: 24, 15: 38, 20: 51, 25: 65, 30: 78, 35: 92, 40: 106, 45: 119,
         50: 133, 60: 162, 70: 189, 80: 217, 90: 245, 100: 273},
    60: {5: None, 10: 11, 15: 18, 20: 24, 25: 31, 30: 38, 35: 44, 40: 51, 45: 58,
         50: 65, 60: 79, 70: 93, 80: 107, 90: 121, 100: 135},
}

#: TS 38.101-2 Table 5.3.2-1, "Maximum transmission bandwidth configuration N_RB" (NR
#: frequency range 2-1), Releases 15–17: subcarrier spacing [kHz] → {channel bandwidth
#: [MHz] → N_RB}; ``None`` is N/A (no 400 MHz carrier at 60 kHz). Checked against the
#: Release 17 text as reproduced in TS 38.521-2 §5.3.2, whose minimum guard bands
#: (Table 5.3.3-1) these numbers reproduce. The 480 and 960 kHz carriers of FR2-2
#: (52.6–71 GHz, Release 17) are left out.
NR_FR2_N_RB: dict[int, dict[float, int | None]] = {
    60: {50: 66, 100: 132, 200: 264, 400: None},
    120: {50: 32, 100: 66, 200: 132, 400: 264},
}

#: The subcarrier spacings [kHz] NR carries data on: Δf = 2^μ · 15 kHz, μ = 0..3
#: (TS 38.211 Table 4.2-1; μ = 4, 240 kHz, carries only SS/PBCH blocks).
NR_SUBCARRIER_SPACINGS_KHZ: tuple[int, ...] = (15, 30, 60, 120)

_TABLES: dict[str, dict[int, dict[float, int | None]]] = {"fr1": NR_FR1_N_RB, "fr2": NR_FR2_N_RB}
_SOURCES = {"lte": "TS 36.101 Table 5.6-1", "fr1": "TS 38.101-1 Table 5.3.2-1",
            "fr2": "TS 38.101-2 Table 5.3.2-1"}
_RATS = ("lte", "nr")
register_choice("rat", _RATS)
_FRS = ("fr1", "fr2")
_BANDWIDTH_FIX = "give the channel bandwidth in MHz, e.g. bandwidth_mhz=10"


class Numerology(NamedTuple):
    """An NR numerology of TS 38.211 §4.2–4.3 (normal cyclic prefix).

    Attributes
    ----------
    mu : int
        The numerology μ, 0..3.
    subcarrier_spacing_khz : int
        Δf = 2^μ · 15 [kHz].
    slots_per_subframe : int
        2^μ slots in each 1 ms subframe.
    slot_ms : float
        Slot duration 1 / 2^μ [ms].
    symbols_per_slot : int
        OFDM symbols per slot, 14 with the normal cyclic prefix.
    """

    mu: int
    subcarrier_spacing_khz: int
    slots_per_subframe: int
    slot_ms: float
    symbols_per_slot: int = 14


def numerology(subcarrier_spacing_khz: float) -> Numerology:
    """The NR numerology μ of a subcarrier spacing, with its slot duration.

    Δf = 2^μ · 15 kHz (TS 38.211 Table 4.2-1); a 1 ms subframe holds 2^μ slots of 14
    symbols (TS 38.211 Table 4.3.2-1), so a slot lasts 1 / 2^μ ms: 1 ms at 15 kHz,
    0.5 ms at 30 kHz, 0.25 ms at 60 kHz, 0.125 ms at 120 kHz.

    Parameters
    ----------
    subcarrier_spacing_khz : {15, 30, 60, 120}
        Δf [kHz].

    Returns
    -------
    Numerology

    Raises
    ------
    ValidationError
        Any other spacing, listing the valid ones (and a hint for one given in Hz).
    """
    scs = _check_nr_scs(subcarrier_spacing_khz)
    mu = NR_SUBCARRIER_SPACINGS_KHZ.index(scs)
    return Numerology(mu=mu, subcarrier_spacing_khz=scs, slots_per_subframe=2**mu,
                      slot_ms=1.0 / 2**mu)


def prb_count(bandwidth_mhz: float, subcarrier_spacing_khz: float = 15, *, rat: str = "nr",
              fr: str | None = None) -> int:
    """The number of physical resource blocks N_RB of a carrier.

    LTE (``rat="lte"``): TS 36.101 Table 5.6-1, 15 kHz only. NR (``rat="nr"``): TS
    38.101-1 Table 5.3.2-1 (FR1: 15, 30, 60 kHz; 5–100 MHz) or TS 38.101-2 Table
    5.3.2-1 (FR2: 60, 120 kHz; 50–400 MHz); see :data:`NR_FR1_N_RB` and
    :data:`NR_FR2_N_RB` for the releases.

    The frequency range follows from the pair where only one range has it: 15 and
    30 kHz are FR1 only, 120 kHz FR2 only, and at 60 kHz 5–45 and 60–90 MHz are FR1
    only, 200 MHz FR2 only. 60 kHz at 50 or 100 MHz exists in both, with different
    N_RB (FR1: 65 and 135; FR2: 66 and 132): there `fr` must be given, and it is refused
    rather than guessed.

    Parameters
    ----------
    bandwidth_mhz : float
        Channel bandwidth BW_Channel [MHz], one of the table's (10, not 1e7 Hz).
    subcarrier_spacing_khz : float
        Δf [kHz]: 15, 30, 60 or 120 for NR; 15 for LTE.
    rat : {"nr", "lte"}
        Radio access technology (case-insensitive).
    fr : {"fr1", "fr2"}, optional
        NR frequency range (case-insensitive): FR1 410–7125 MHz, FR2 24.25–52.6 GHz.
        Needed only for 60 kHz at 50 or 100 MHz; where given, only its table is used.
        Not for LTE.

    Returns
    -------
    int
        N_RB.

    Raises
    ------
    ValidationError
        An unknown `rat` or `fr`, `fr` with LTE; a subcarrier spacing that is not an NR
        numerology (listing 15, 30, 60, 120), or not 15 kHz for LTE; a bandwidth that
        is not a positive number, not in the table (listing the valid ones at that
        spacing and the nearest), given in Hz or kHz (hint: give MHz), or marked N/A at
        that spacing (listing the spacings that have it); 60 kHz at 50 or 100 MHz
        without `fr`.

    Examples
    --------
    >>> prb_count(100, 30)
    273
    >>> prb_count(10, rat="lte")
    50
    >>> prb_count(100, 60, fr="fr2")
    132
    """
    rat = _check_choice(rat, "rat", _RATS)
    bw = _check_bandwidth(bandwidth_mhz)
    if rat == "lte":
        if fr is not None:
            raise ValidationError(f"fr={shown(fr)} is given with rat='lte'; fix: leave fr out "
                                  "(frequency ranges are NR's), or pass rat='nr'")
        _check_lte_scs(subcarrier_spacing_khz)
        return _lookup_lte(bw)
    scs = _check_nr_scs(subcarrier_spacing_khz)
    ranges = _FRS if fr is None else (_check_choice(fr, "fr", _FRS),)
    return _lookup_nr(bw, scs, ranges)


def subcarriers(bandwidth_mhz: float, subcarrier_spacing_khz: float = 15, *, rat: str = "nr",
                fr: str | None = None) -> int:
    """The number of subcarriers of a carrier, 12 · N_RB (see :func:`prb_count`).

    LTE 10 MHz: 12 · 50 = 600; NR 100 MHz at 30 kHz: 12 · 273 = 3276.

    Parameters
    ----------
    bandwidth_mhz, subcarrier_spacing_khz, rat, fr
        As for :func:`prb_count`.

    Returns
    -------
    int

    Raises
    ------
    ValidationError
        As :func:`prb_count`.
    """
    return SUBCARRIERS_PER_RB * prb_count(bandwidth_mhz, subcarrier_spacing_khz, rat=rat, fr=fr)


def rsrp_offset_db(bandwidth_mhz: float, subcarrier_spacing_khz: float = 15, *,
                   rat: str = "nr", fr: str | None = None) -> float:
    """The dB from a carrier's total transmit power to its power per resource element.

    ``10 log10(12 · N_RB)`` [dB]. RSRP is a power per resource element (RE): the
    linear average over the REs that carry the cell-specific reference signals (LTE,
    TS 36.214 §5.1.1) or the secondary synchronization signals (NR SS-RSRP, TS 38.215
    §5.1.1). A cell transmitting P_tx [dBm] in total is received with

        RSRP = P_tx − rsrp_offset_db + coupling gain  [dBm],

    under the assumption that the reference signal EPRE (energy per resource element)
    equals the average EPRE over the carrier: the power is spread evenly over all
    12 · N_RB subcarriers and the reference signals are not boosted (an operator's
    RS power boost, or NR's SSB power offset, adds to RSRP what it takes from nothing
    here). For NR, the SSB is taken to use the carrier's subcarrier spacing; an SSB at
    half the carrier's spacing (15 kHz SSB on a 30 kHz carrier) has half the energy per
    RE, 3 dB less.

    The subcarriers counted are those of the transmission bandwidth configuration, not
    the channel bandwidth over Δf: an LTE 10 MHz carrier has 600 subcarriers (27.78 dB),
    not 10 MHz / 15 kHz = 666.7 (28.24 dB), because 1 MHz of it is guard band. Using
    ``W / Δf`` would put every RSRP 0.46 dB too low.

    Parameters
    ----------
    bandwidth_mhz, subcarrier_spacing_khz, rat, fr
        As for :func:`prb_count`.

    Returns
    -------
    float
        The offset [dB], > 0: 27.78 dB for LTE 10 MHz, 30.79 dB for LTE 20 MHz,
        35.15 dB for NR 100 MHz at 30 kHz.

    Raises
    ------
    ValidationError
        As :func:`prb_count`.
    """
    n = subcarriers(bandwidth_mhz, subcarrier_spacing_khz, rat=rat, fr=fr)
    return 10.0 * math.log10(n)


# ---------------------------------------------------------------------------- checks
def _check_choice(value: Any, name: str, valid: tuple[str, ...]) -> str:
    """`value` lower-cased, after checking that it is one of `valid` (lower-case names)."""
    if isinstance(value, str) and value.strip().lower() in valid:
        return value.strip().lower()
    listed = " or ".join(f"{name}={v!r}" for v in valid)
    raise ValidationError(f"{name}={shown(value)} is not known; fix: pass {listed}")


def _check_bandwidth(value: Any) -> float:
    """`value` as a float, after checking it is a finite number > 0 (MHz, not checked here)."""
    return check_number(value, "bandwidth_mhz", low=0.0, low_open=True, unit="MHz",
                        fix=_BANDWIDTH_FIX)


def _scs_number(value: Any) -> float:
    """`value` as a float, after checking that it is a finite real number."""
    return check_number(value, "subcarrier_spacing_khz", unit="kHz",
                        fix="give the subcarrier spacing in kHz, e.g. subcarrier_spacing_khz=30")


def _check_nr_scs(value: Any) -> int:
    """An NR data subcarrier spacing [kHz] as an int, one of 15, 30, 60, 120."""
    scs = _scs_number(value)
    for valid in NR_SUBCARRIER_SPACINGS_KHZ:
        if scs == valid:
            return valid
    listed = ", ".join(str(v) for v in NR_SUBCARRIER_SPACINGS_KHZ)
    fix = f"use one of {listed}"
    if scs / 1000.0 in NR_SUBCARRIER_SPACINGS_KHZ:
        fix = (f"give kHz, not Hz: subcarrier_spacing_khz={scs / 1000.0:g} for {scs:g} Hz; or "
               + fix)
    elif scs == 240:
        fix += " (240 kHz, μ = 4, carries only SS/PBCH blocks, not data)"
    raise ValidationError(f"subcarrier_spacing_khz={scs:g} is not an NR numerology; fix: {fix}")


def _check_lte_scs(value: Any) -> None:
    """Refuse an LTE subcarrier spacing other than 15 kHz."""
    scs = _scs_number(value)
    if scs != 15:
        hint = " (15000 Hz is 15 kHz)" if scs == 15_000 else ""
        raise ValidationError(f"subcarrier_spacing_khz={scs:g} is not an LTE subcarrier spacing "
                              f"for rat='lte'{hint}; fix: use 15 (LTE carriers have one "
                              "numerology, TS 36.211), or rat='nr' for NR numerologies")


# ---------------------------------------------------------------------------- lookup
def _match(bw: float, keys: Any) -> float | None:
    """The key of `keys` equal to `bw` up to rounding, or None."""
    for key in keys:
        if math.isclose(bw, key, rel_tol=1e-9, abs_tol=1e-9):
            return key
    return None


def _listed(bandwidths: Any) -> str:
    """Bandwidths as ``"5, 10, 1.4"`` [MHz]."""
    return ", ".join(f"{b:g}" for b in bandwidths)


def _unit_hint(bw: float, valid: list[float]) -> str:
    """A hint for a bandwidth given in Hz or kHz, or for one far beyond any carrier; or ""."""
    for factor, unit in ((1e6, "Hz"), (1e3, "kHz")):
        if _match(bw / factor, valid) is not None:
            return f"give MHz, not {unit}: bandwidth_mhz={bw / factor:g} for {bw:g} {unit}"
    if bw > 1000.0:
        return "give MHz (10 MHz = 1e7 Hz)"
    return ""


def _advice(bw: float, valid: list[float], listed: str) -> str:
    """The fix for a bandwidth not in a table: its unit slip, or the valid and nearest ones."""
    hint = _unit_hint(bw, valid)
    if hint:
        return f"{hint} (valid: {listed})"
    below = [b for b in valid if b < bw]
    above = [b for b in valid if b > bw]
    near = ([max(below)] if below else []) + ([min(above)] if above else [])
    return f"use one of {listed} (nearest: {_listed(near)} MHz)"


def _lookup_lte(bw: float) -> int:
    key = _match(bw, LTE_N_RB)
    if key is not None:
        return LTE_N_RB[key]
    valid = sorted(LTE_N_RB)
    raise ValidationError(
        f"bandwidth_mhz={bw:g} is not an LTE channel bandwidth ({_SOURCES['lte']}); fix: "
        + _advice(bw, valid, f"{_listed(valid)} MHz"))


def _lookup_nr(bw: float, scs: int, ranges: tuple[str, ...]) -> int:
    """N_RB of an NR carrier from the tables of `ranges`, or a ValidationError."""
    found: dict[str, int] = {}
    not_applicable: list[str] = []
    valid: dict[str, list[float]] = {}  # frequency range -> bandwidths with an N_RB at `scs`
    for fr in ranges:
        rows = _TABLES[fr].get(scs)
        if rows is None:
            continue
        valid[fr] = sorted(b for b, n in rows.items() if n is not None)
        key = _match(bw, rows)
        n_rb = None if key is None else rows[key]
        if n_rb is not None:
            found[fr] = n_rb
        elif key is not None:
            not_applicable.append(fr)
    if len(found) == 1:
        return next(iter(found.values()))
    if len(found) > 1:
        both = "; ".join(f"{fr.upper()}: {n} PRB ({_SOURCES[fr]})" for fr, n in found.items())
        raise ValidationError(
            f"bandwidth_mhz={bw:g} at subcarrier_spacing_khz={scs} exists in both NR frequency "
            f"ranges ({both}); fix: pass fr='fr1' (carrier below 7.125 GHz) or fr='fr2' "
            "(24.25–52.6 GHz)")
    if not valid:  # `fr` was given, and its table has no such spacing
        fr = ranges[0]
        other = [f for f in _FRS if scs in _TABLES[f]]
        raise ValidationError(
            f"subcarrier_spacing_khz={scs} is not used in {fr.upper()} ({_SOURCES[fr]} has "
            f"{', '.join(str(s) for s in _TABLES[fr])} kHz); fix: use one of those, or "
            f"fr={other[0]!r}")
    listed = " or ".join(f"{_listed(b)} MHz" + (f" ({fr.upper()})" if len(valid) > 1 else "")
                         for fr, b in valid.items())
    elsewhere = _other_spacings(bw, scs, ranges)
    also = f"; or, for {bw:g} MHz, use {elsewhere}" if elsewhere else ""
    if not_applicable:
        where = " and ".join(_SOURCES[fr] for fr in not_applicable)
        raise ValidationError(
            f"bandwidth_mhz={bw:g} at subcarrier_spacing_khz={scs} is N/A in {where}; fix: at "
            f"{scs} kHz use one of {listed}{also}")
    where = " and ".join(_SOURCES[fr] for fr in valid)
    release = (" (3 MHz at 15 kHz came in Release 18, after these tables)"
               if scs == 15 and _match(bw, [3.0]) is not None else "")
    every = sorted({b for bandwidths in valid.values() for b in bandwidths})
    raise ValidationError(
        f"bandwidth_mhz={bw:g} is not an NR channel bandwidth at subcarrier_spacing_khz={scs} "
        f"in {where}{release}; fix: {_advice(bw, every, listed)}{also}")


def _other_spacings(bw: float, scs: int, ranges: tuple[str, ...]) -> str:
    """The other spacings at which `bw` is a carrier in `ranges`, as ``"30 or 60 kHz (FR1)"``."""
    parts = []
    for fr in ranges:
        spacings = [s for s, rows in _TABLES[fr].items() if s != scs
                    and (key := _match(bw, rows)) is not None and rows[key] is not None]
        if spacings:
            parts.append(f"{' or '.join(str(s) for s in spacings)} kHz ({fr.upper()})")
    return " or ".join(parts)
