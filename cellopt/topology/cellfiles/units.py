"""Units of a cell file's values, and how they become cellopt's.

Powers become dBm, antenna heights metres, angles degrees and frequencies MHz (the texts
below say how, for :class:`~cellopt.topology.cellfiles.columns.ColumnReading`); E-UTRA
EARFCNs and NR-ARFCNs become their downlink carrier frequency
(:func:`earfcn_to_mhz`, :func:`nr_arfcn_to_mhz`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["earfcn_to_mhz", "nr_arfcn_to_mhz"]

# Power units and how they become dBm.
_POWER_UNITS = {"dBm": "dBm, as it is", "dBW": "dBW + 30 = dBm",
                "W": "10·log10(W) + 30 = dBm", "kW": "10·log10(kW) + 60 = dBm",
                "mW": "10·log10(mW) = dBm"}
# Length units of an antenna height and how they become metres.
_METRES = {"ft": 0.3048, "km": 1000.0, "cm": 0.01, "mm": 0.001}
_METRES_HOW = {"ft": "feet × 0.3048", "km": "km × 1000", "cm": "cm / 100", "mm": "mm / 1000"}
_RADIANS_HOW = "radians × 180/π = degrees"
_HZ = {"Hz": 1e-6, "kHz": 1e-3, "MHz": 1.0, "GHz": 1e3}

# E-UTRA downlink bands, TS 36.101 Table 5.7.3-1: (band, F_DL_low [MHz], N_Offs-DL,
# last N_DL); F_DL = F_DL_low + 0.1 (N_DL − N_Offs-DL).
_EUTRA_DL = (
    (1, 2110.0, 0, 599), (2, 1930.0, 600, 1199), (3, 1805.0, 1200, 1949),
    (4, 2110.0, 1950, 2399), (5, 869.0, 2400, 2649), (6, 875.0, 2650, 2749),
    (7, 2620.0, 2750, 3449), (8, 925.0, 3450, 3799), (9, 1844.9, 3800, 4149),
    (10, 2110.0, 4150, 4749), (11, 1475.9, 4750, 4949), (12, 729.0, 5010, 5179),
    (13, 746.0, 5180, 5279), (14, 758.0, 5280, 5379), (17, 734.0, 5730, 5849),
    (18, 860.0, 5850, 5999), (19, 875.0, 6000, 6149), (20, 791.0, 6150, 6449),
    (21, 1495.9, 6450, 6599), (22, 3510.0, 6600, 7399), (23, 2180.0, 7500, 7699),
    (24, 1525.0, 7700, 8039), (25, 1930.0, 8040, 8689), (26, 859.0, 8690, 9039),
    (27, 852.0, 9040, 9209), (28, 758.0, 9210, 9659), (29, 717.0, 9660, 9769),
    (30, 2350.0, 9770, 9869), (31, 462.5, 9870, 9919), (32, 1452.0, 9920, 10359),
    (33, 1900.0, 36000, 36199), (34, 2010.0, 36200, 36349), (35, 1850.0, 36350, 36949),
    (36, 1930.0, 36950, 37549), (37, 1910.0, 37550, 37749), (38, 2570.0, 37750, 38249),
    (39, 1880.0, 38250, 38649), (40, 2300.0, 38650, 39649), (41, 2496.0, 39650, 41589),
    (42, 3400.0, 41590, 43589), (43, 3600.0, 43590, 45589), (44, 703.0, 45590, 46589),
    (45, 1447.0, 46590, 46789), (46, 5150.0, 46790, 54539), (47, 5855.0, 54540, 55239),
    (48, 3550.0, 55240, 56739), (49, 3550.0, 56740, 58239), (50, 1432.0, 58240, 59089),
    (51, 1427.0, 59090, 59139), (52, 3300.0, 59140, 60139), (53, 2483.5, 60140, 60254),
    (65, 2110.0, 65536, 66435), (66, 2110.0, 66436, 67335), (67, 738.0, 67336, 67535),
    (68, 753.0, 67536, 67835), (69, 2570.0, 67836, 68335), (70, 1995.0, 68336, 68585),
    (71, 617.0, 68586, 68935), (72, 461.0, 68936, 68985), (73, 460.0, 68986, 69035),
    (74, 1475.0, 69036, 69465), (75, 1432.0, 69466, 70315), (76, 1427.0, 70316, 70365),
    (85, 728.0, 70366, 70545), (87, 420.0, 70546, 70595), (88, 422.0, 70596, 70645),
)


def earfcn_to_mhz(earfcn: np.ndarray | Sequence[float]) -> np.ndarray:
    """Downlink carrier frequency of E-UTRA EARFCNs (TS 36.101 §5.7.3, Table 5.7.3-1).

    Parameters
    ----------
    earfcn : array_like of int
        Downlink EARFCNs N_DL.

    Returns
    -------
    ndarray of float
        F_DL = F_DL_low + 0.1 (N_DL − N_Offs-DL) [MHz]; NaN for numbers outside the
        downlink ranges of the table (uplink EARFCNs, unknown bands, non-integers).
    """
    n = np.asarray(earfcn, dtype=float)
    out = np.full(n.shape, np.nan)
    whole = np.isfinite(n) & (n == np.round(n))
    for _, low, offset, last in _EUTRA_DL:
        inside = whole & (n >= offset) & (n <= last)
        out[inside] = low + 0.1 * (n[inside] - offset)
    return np.round(out, 6)


def nr_arfcn_to_mhz(nr_arfcn: np.ndarray | Sequence[float]) -> np.ndarray:
    """Frequency of NR-ARFCNs (TS 38.104 §5.4.2.1, Table 5.4.2.1-1).

    Parameters
    ----------
    nr_arfcn : array_like of int
        NR-ARFCNs N_REF in [0, 3279165].

    Returns
    -------
    ndarray of float
        F_REF = F_REF-Offs + ΔF_Global (N_REF − N_REF-Offs) [MHz]; NaN outside
        [0, 3279165] and for non-integers.
    """
    n = np.asarray(nr_arfcn, dtype=float)
    out = np.full(n.shape, np.nan)
    whole = np.isfinite(n) & (n == np.round(n))
    for first, last, step_mhz, f0, n0 in ((0, 599_999, 0.005, 0.0, 0),
                                          (600_000, 2_016_666, 0.015, 3000.0, 600_000),
                                          (2_016_667, 3_279_165, 0.060, 24250.08, 2_016_667)):
        inside = whole & (n >= first) & (n <= last)
        out[inside] = f0 + step_mhz * (n[inside] - n0)
    return np.round(out, 6)
