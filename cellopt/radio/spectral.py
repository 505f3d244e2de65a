"""Spectral-efficiency maps: SINR (linear) in, bit/s/Hz out."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cellopt.checks import check_number, check_real
from cellopt.errors import ValidationError
from cellopt.parameters import register_choice

__all__ = ["NR_MCS_TABLES", "NR_OVERHEAD_FR1_DL", "SPECTRAL_EFFICIENCY", "get_efficiency",
           "nr_mcs", "nr_mcs_thresholds_db", "shannon", "shannon_gap", "tr36942"]


def _linear_sinr(sinr: np.ndarray) -> np.ndarray:
    """`sinr` as a float array of linear SINRs: numbers ≥ 0 (NaN passes through).

    Raises
    ------
    ValidationError
        A non-numeric array (strings, objects), or negative values: a SINR in dB given to
        a map of the linear SINR.
    """
    a = np.asarray(sinr)
    if a.dtype.kind not in "iuf":
        raise ValidationError(f"sinr has dtype {a.dtype}, not real numbers; fix: give the linear "
                              "SINR as numbers (a float or an array of floats)")
    g = a.astype(float, copy=False)
    negative = g < 0.0
    if negative.any():
        n_negative = int(np.count_nonzero(negative))
        raise ValidationError(
            f"sinr has {n_negative:,} negative value{'s' if n_negative > 1 else ''} (e.g. "
            f"{float(g[negative].flat[0]):g}), but a spectral-efficiency map takes the linear "
            "SINR γ ≥ 0, not dB; fix: give 10 ** (sinr_db / 10)")
    return g


def shannon(sinr: np.ndarray) -> np.ndarray:
    """Shannon capacity ``log2(1 + γ)`` [bit/s/Hz] of a linear SINR γ ≥ 0."""
    return np.log2(1.0 + _linear_sinr(sinr))


def shannon_gap(
    sinr: np.ndarray, gap_db: float = 3.0, max_bps_hz: float = np.inf
) -> np.ndarray:
    """Shannon with an SNR gap: ``min(log2(1 + γ / Γ), max_bps_hz)`` [bit/s/Hz].

    Parameters
    ----------
    sinr : ndarray
        Linear SINR γ ≥ 0 (a negative value, a SINR in dB, is refused).
    gap_db : float
        The gap Γ [dB] to capacity of practical coding and modulation.
    max_bps_hz : float
        Cap of the highest modulation and coding scheme (inf: none).
    """
    gap = 10.0 ** (check_real(gap_db, "gap_db") / 10.0)
    check_real(max_bps_hz, "max_bps_hz")
    return np.minimum(np.log2(1.0 + _linear_sinr(sinr) / gap), max_bps_hz)


def tr36942(
    sinr: np.ndarray,
    attenuation: float = 0.6,
    min_sinr_db: float = -10.0,
    max_bps_hz: float = 4.4,
) -> np.ndarray:
    """Truncated Shannon of TR 36.942 §A.2 (downlink): ``0.6 log2(1 + γ)``.

    Zero below −10 dB SINR, capped at 4.4 bit/s/Hz.

    Parameters
    ----------
    sinr : ndarray
        Linear SINR γ ≥ 0 (a negative value, a SINR in dB, is refused).
    attenuation, min_sinr_db, max_bps_hz : float
        The factor α, SINR_MIN [dB] and Thr_MAX of TR 36.942 Table A.2.

    Returns
    -------
    ndarray
        Spectral efficiency [bit/s/Hz], same shape.
    """
    check_real(attenuation, "attenuation")
    check_real(min_sinr_db, "min_sinr_db")
    check_real(max_bps_hz, "max_bps_hz")
    g = _linear_sinr(sinr)
    eff = np.minimum(attenuation * np.log2(1.0 + g), max_bps_hz)
    return np.where(g < 10.0 ** (min_sinr_db / 10.0), 0.0, eff)


#: The PDSCH MCS index tables of TS 38.214 §5.1.3.1: per MCS index, the modulation order
#: Q_m [bit/symbol] and the target code rate R × 1024. "64qam": Table 5.1.3.1-1 (MCS
#: 0–28), "256qam": Table 5.1.3.1-2 (0–27), "low_se": Table 5.1.3.1-3 (0–28). The
#: spectral efficiency of an MCS is Q_m · R [bit/s/Hz]; the reserved indices are left out.
NR_MCS_TABLES: dict[str, tuple[tuple[int, ...], tuple[float, ...]]] = {
    "64qam": ((2,) * 10 + (4,) * 7 + (6,) * 12,
              (120, 157, 193, 251, 308, 379, 449, 526, 602, 679,
               340, 378, 434, 490, 553, 616, 658,
               438, 466, 517, 567, 616, 666, 719, 772, 822, 873, 910, 948)),
    "256qam": ((2,) * 5 + (4,) * 6 + (6,) * 9 + (8,) * 8,
               (120, 193, 308, 449, 602,
                378, 434, 490, 553, 616, 658,
                466, 517, 567, 616, 666, 719, 772, 822, 873,
                682.5, 711, 754, 797, 841, 885, 916.5, 948)),
    "low_se": ((2,) * 15 + (4,) * 6 + (6,) * 8,
               (30, 40, 50, 64, 78, 99, 120, 157, 193, 251, 308, 379, 449, 526, 602,
                340, 378, 434, 490, 553, 616,
                438, 466, 517, 567, 616, 666, 719, 772)),
}

#: The overhead OH of TS 38.306 §4.1.2 for frequency range 1, downlink: the share of the
#: resource elements that carry no data (control, reference signals, guard).
NR_OVERHEAD_FR1_DL: float = 0.14


def nr_mcs_thresholds_db(table: str = "64qam", gap_db: float = 3.0) -> np.ndarray:
    """The SINR [dB] from which each MCS of an NR table is used, shape (n_mcs,).

    The mapping: MCS k is used from the SINR at which a Shannon bound with an
    implementation gap Γ carries its spectral efficiency SE_k = Q_m · R,
    ``γ_k = Γ · (2^{SE_k} − 1)``. With Γ = 3 dB (the default, as :func:`shannon_gap`) MCS
    0 of the 64QAM table starts at −4.5 dB and MCS 28 at 19.6 dB. Link-level BLER curves
    of a receiver would give other thresholds; pass them through a callable
    ``spectral_efficiency`` instead.

    Parameters
    ----------
    table : {"64qam", "256qam", "low_se"}
        A key of :data:`NR_MCS_TABLES`.
    gap_db : float
        Γ [dB], ≥ 0.
    """
    return 10.0 * np.log10(_thresholds(table, gap_db))


def nr_mcs(
    sinr: np.ndarray,
    table: str = "64qam",
    gap_db: float = 3.0,
    overhead: float = NR_OVERHEAD_FR1_DL,
) -> np.ndarray:
    """NR link abstraction: the spectral efficiency of the highest MCS a SINR supports.

    ``(1 − overhead) · Q_m · R`` of the MCS of TS 38.214 `table` with the largest
    spectral efficiency among those whose threshold (:func:`nr_mcs_thresholds_db`) is at
    most the SINR; 0 below MCS 0's. The thresholds grow with the efficiency, so this is
    non-decreasing in the SINR, also where the standard's modulation orders overlap (64QAM
    MCS 17, 2.5664 bit/s/Hz, comes before 16QAM MCS 16, 2.5703).

    Parameters
    ----------
    sinr : ndarray
        Linear SINR γ ≥ 0, any shape (a negative value, a SINR in dB, is refused).
    table : {"64qam", "256qam", "low_se"}
        Tables 5.1.3.1-1, -2 and -3 of TS 38.214.
    gap_db : float
        The implementation gap Γ [dB] of the thresholds.
    overhead : float
        Share of resource elements without data, in [0, 1) (TS 38.306 §4.1.2: 0.14 in
        FR1 downlink, 0.18 in FR2 downlink).

    Returns
    -------
    ndarray
        Spectral efficiency [bit/s/Hz], same shape as `sinr` (NaN where it is NaN).
    """
    qm, rate = _mcs_table(table)
    overhead = check_number(overhead, "overhead", low=0.0, high=1.0, high_open=True,
                            fix=f"give a share in [0, 1), e.g. {NR_OVERHEAD_FR1_DL} "
                                "(TS 38.306, FR1 downlink)")
    # Thresholds grow with the efficiency, so the best MCS at a SINR is found on the
    # efficiencies in increasing order.
    efficiency = np.sort(qm * rate)
    thresholds = np.sort(_thresholds(table, gap_db))
    g = _linear_sinr(sinr)
    index = np.searchsorted(thresholds, g, side="right")
    return np.where(np.isnan(g), np.nan, np.r_[0.0, (1.0 - overhead) * efficiency][index])


def _thresholds(table: str, gap_db: float) -> np.ndarray:
    """Linear SINR thresholds ``Γ · (2^{Q_m R} − 1)`` of an NR MCS table, shape (n_mcs,)."""
    qm, rate = _mcs_table(table)
    gap = 10.0 ** (check_real(gap_db, "gap_db") / 10.0)
    return gap * (2.0 ** (qm * rate) - 1.0)


def _mcs_table(table: str) -> tuple[np.ndarray, np.ndarray]:
    """(Q_m, R) of an NR MCS table, each shape (n_mcs,)."""
    if not isinstance(table, str) or table not in NR_MCS_TABLES:
        hint = (f" ({table!r} is the spectral_efficiency name of the table {table[3:]!r})"
                if isinstance(table, str) and table.removeprefix("nr_") in NR_MCS_TABLES else "")
        raise ValidationError(f"unknown NR MCS table {table!r}{hint}; fix: use one of "
                              f"{sorted(NR_MCS_TABLES)}")
    qm, rate = NR_MCS_TABLES[table]
    return np.asarray(qm, float), np.asarray(rate, float) / 1024.0


def _nr_64qam(sinr: np.ndarray) -> np.ndarray:
    """:func:`nr_mcs` with TS 38.214 Table 5.1.3.1-1 (up to 64QAM), Γ = 3 dB, OH = 0.14."""
    return nr_mcs(sinr, "64qam")


def _nr_256qam(sinr: np.ndarray) -> np.ndarray:
    """:func:`nr_mcs` with TS 38.214 Table 5.1.3.1-2 (up to 256QAM), Γ = 3 dB, OH = 0.14."""
    return nr_mcs(sinr, "256qam")


def _nr_low_se(sinr: np.ndarray) -> np.ndarray:
    """:func:`nr_mcs` with TS 38.214 Table 5.1.3.1-3 (low spectral efficiency), Γ = 3 dB,
    OH = 0.14."""
    return nr_mcs(sinr, "low_se")


SPECTRAL_EFFICIENCY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "shannon": shannon,
    "shannon_gap": shannon_gap,
    "tr36942": tr36942,
    "nr_64qam": _nr_64qam,
    "nr_256qam": _nr_256qam,
    "nr_low_se": _nr_low_se,
}
register_choice("spectral_efficiency", SPECTRAL_EFFICIENCY)


def get_efficiency(
    name_or_func: str | Callable[[np.ndarray], np.ndarray],
) -> Callable[[np.ndarray], np.ndarray]:
    """Look up a spectral-efficiency map by name, or pass a callable through.

    Raises
    ------
    ValidationError
        An unknown name (a ``ValueError`` too), listing the valid ones.
    """
    if callable(name_or_func):
        return name_or_func
    try:
        return SPECTRAL_EFFICIENCY[name_or_func]
    except (KeyError, TypeError):
        raise ValidationError(
            f"unknown spectral efficiency {name_or_func!r} (spectral_efficiency); fix: use one "
            f"of {sorted(SPECTRAL_EFFICIENCY)} or a callable of the linear SINR"
        ) from None
