"""Interference from beyond the interference radius, as a mean field.

With an interference radius R, the link table sums the interference of every cell
within R of a user exactly. The cells beyond R are replaced by their mean: cell j
spreads its mean effective power ``e_j`` (transmit power × boresight gain × the mean of
the sector pattern over all bearings × the mean of the log-normal shadowing × its own
wall) over the area around it, and a user receives from the ring ``R < r < D`` of that
density

    F_u = Σ_t  [Σ_{j within R of u, tier t} e_j / (π R²)] · Φ_t(R),
    Φ_t(R) = ∫_R^D 2π r · 10^(−PL_t(r)/10) dr,

times its own wall loss if it is indoors. The density is that of the cells around the
user (within R), so users at the edge of a network or in a rural area get the smaller
far field they should; D is half the diagonal of the cells' bounding box (how far the
network reaches from a user in its middle). docs/model.md measures the error this
leaves against the full sum.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from cellopt.checks import check_number
from cellopt.errors import ValidationError
from cellopt.network import TIERS, Network
from cellopt.radio.antenna import sector_gain_db
from cellopt.radio.model import CouplingGains, RadioModel

__all__ = ["FarField", "auto_radius_m", "cell_extent_m", "ring_integral_m2"]

#: Points of the log-spaced grid of the ring integrals.
GRID_POINTS = 4000
#: Default share of the mean interference left to the far field by the automatic radius.
FAR_SHARE = 0.01


def _rings_beyond(pathloss, min_distance_m: float, log_r: np.ndarray) -> np.ndarray:
    """``∫_{r_i}^{r_last} 2π r 10^(−PL(max(r, d_min))/10) dr`` for each point r_i of a log grid.

    Trapezoids in log r (``∫ f dr = ∫ f r d(log r)``), summed from the outside in.
    """
    r = np.exp(log_r)
    g = 2.0 * np.pi * r * r * 10.0 ** (-np.asarray(pathloss(np.maximum(r, min_distance_m)), float)
                                        / 10.0)
    beyond = np.zeros(len(log_r))
    beyond[:-1] = np.cumsum((0.5 * (g[1:] + g[:-1]) * np.diff(log_r))[::-1])[::-1]
    return beyond


def ring_integral_m2(pathloss, min_distance_m: float, inner_m: float, outer_m: float) -> float:
    """``∫ 2π r 10^(−PL(max(r, d_min))/10) dr`` over ``inner_m < r < outer_m`` [m²].

    Parameters
    ----------
    pathloss : callable
        Path loss [dB] of a distance [m].
    min_distance_m : float
        Distances below this are raised to it, as in the radio model.
    inner_m, outer_m : float
        Ring radii [m]; 0 if ``outer_m ≤ inner_m``.

    Returns
    -------
    float
        The mean coupling gain integrated over the ring [m²]: times a density of
        transmitters [per m²] and their power [mW] it is the received power [mW].
    """
    if not outer_m > inner_m:
        return 0.0
    log_r = np.linspace(math.log(max(inner_m, 1e-3)), math.log(outer_m), GRID_POINTS)
    return float(_rings_beyond(pathloss, min_distance_m, log_r)[0])


def _mean_sector_gain(model: RadioModel) -> float:
    """Mean of the linear sector pattern over all bearings (1 for an omni antenna)."""
    angle = np.linspace(-180.0, 180.0, 3601)[:-1]
    return float(np.mean(10.0 ** (sector_gain_db(angle, model.theta_3db_deg,
                                                 model.max_attenuation_db) / 10.0)))


def _mean_panel_gain(coupling: CouplingGains) -> np.ndarray:
    """Mean of each cell's linear 3-D antenna pattern over all bearings at the horizon
    (a far user), relative to its maximum gain, shape (C,); 1 for omni cells."""
    out = np.ones(len(coupling.azimuth))
    cells = coupling.sectorised
    if len(cells):
        bearing = np.radians(np.arange(0.5, 360.0, 1.0))[None, :]
        gain = coupling.pattern_db(np.zeros((1, 1), int), cells[:, None],
                                   np.sin(bearing) * 1e4, np.cos(bearing) * 1e4, dz_m=0.0)
        out[cells] = np.mean(10.0 ** (gain / 10.0), axis=1)
    return out


def _mean_emission_mw(coupling: CouplingGains, power_mw: np.ndarray) -> np.ndarray:
    """Each cell's mean effective power toward a far outdoor user [mW], shape (C, K)."""
    model = coupling.model
    if model.antenna == "tr38901":
        pattern = _mean_panel_gain(coupling)
    else:
        pattern = np.ones(len(coupling.azimuth))
        pattern[coupling.sectorised] = _mean_sector_gain(model)
    # E[10^(−S/10) | a_u] over the site terms b_us, S = σ(√ρ a_u + √(1−ρ) b_us) in dB; the
    # user's own term a_u is applied per user (FarField.interference_mw)
    sigma = coupling.shadow_std * math.log(10.0) / 10.0
    shadow = np.exp(0.5 * (1.0 - model.site_correlation) * sigma**2)
    wall = np.where(coupling.indoor_cell, 10.0 ** (-coupling.wall_loss / 10.0), 1.0)
    gain = 10.0 ** (coupling.boresight_dbi / 10.0) * pattern * shadow * wall
    return power_mw * gain[:, None]


def cell_extent_m(network: Network) -> float:
    """Diagonal of the cells' bounding box [m]: no user–cell distance inside it is longer."""
    c = network.cell_arrays()
    if not len(c["x_m"]):
        return 0.0
    return float(math.hypot(np.ptp(c["x_m"]), np.ptp(c["y_m"])))


class FarField:
    """The mean-field interference of the cells beyond each user's interference radius.

    A user u with radius R_u (its cells within R_u counted exactly) receives on
    resource k ``Σ_{j within R_u} e_jk · Φ_t(j)(R_u) / (π R_u²)`` from the cells beyond,
    through its wall if it is indoors (module docstring).

    Parameters
    ----------
    coupling : CouplingGains
    power_mw : ndarray, shape (C, K)
        Transmit power of every cell on every resource [mW].
    outer_m : float
        How far the far field reaches [m].
    """

    def __init__(self, coupling: CouplingGains, power_mw: np.ndarray, outer_m: float):
        model = coupling.model
        self.tier = coupling.tier
        self.outdoor_mw = _mean_emission_mw(coupling, power_mw)
        self.indoor_mw = self.outdoor_mw * 10.0 ** (-coupling.indoor_loss_db() / 10.0)[:, None]
        self.indoor = coupling.indoor
        rho = model.site_correlation
        self.own_shadow = None
        if rho > 0 and np.any(coupling.shadow_std > 0):
            self.own_shadow = functools.partial(coupling.own_shadowing,
                                                decorrelation_m=model.decorrelation_m)
            self.own_std = coupling.shadow_std * math.sqrt(rho)
        # Φ_t(R) for every R on a log grid, as the integral from R to outer_m.
        self.log_r = np.linspace(0.0, math.log(max(outer_m, 2.0)), GRID_POINTS)
        self.ring = np.zeros((len(TIERS), GRID_POINTS))
        for tier, prop in coupling.propagation.items():
            k = TIERS.index(tier)
            self.ring[k] = _rings_beyond(prop.mean_loss_db,
                                         model.per_tier("min_distance_m")[k], self.log_r)

    def per_area(self, radius_m: np.ndarray) -> np.ndarray:
        """``Φ_t(R) / (π R²)`` [dimensionless] for each radius and tier, shape (U, T)."""
        log_r = np.log(np.asarray(radius_m, float))
        out = np.stack([np.interp(log_r, self.log_r, ring, right=0.0) for ring in self.ring], axis=1)
        return out / (np.pi * np.asarray(radius_m, float)[:, None] ** 2)

    def interference_mw(self, users: np.ndarray, radius_m: np.ndarray, cell: np.ndarray,
                        valid: np.ndarray) -> np.ndarray:
        """Far-field interference of a block of users [mW], shape (U, K).

        With shadowing correlated between sites (``site_correlation`` ρ > 0), each user's
        own term a_u is the same toward the far cells as toward the near ones: the far
        field is the mean given a_u, ``10^(−σ√ρ a_u/10)`` times the mean over the rest.

        Parameters
        ----------
        users : ndarray of int, shape (U,)
            Row positions of the users.
        radius_m : ndarray, shape (U,)
            Each user's interference radius [m].
        cell : ndarray of int, shape (U, M)
            The cells within each user's radius (any row where `valid` is False).
        valid : ndarray of bool, shape (U, M)
        """
        weight = np.take_along_axis(self.per_area(radius_m), self.tier[cell], axis=1) * valid
        if self.own_shadow is not None:
            weight = weight * 10.0 ** (-self.own_std[cell] * self.own_shadow(users)[:, None] / 10.0)
        indoor = self.indoor[users]
        emission = np.where(indoor[:, None, None], self.indoor_mw[cell], self.outdoor_mw[cell])
        return np.einsum("um,umk->uk", weight, emission)


def auto_radius_m(network: Network, model: RadioModel | None = None,
                  far_share: float = FAR_SHARE) -> float:
    """An interference radius from the path-loss model: the far field is `far_share` of the rest.

    At the network's mean cell density λ (cells over the cells' bounding box), the
    smallest R whose mean far field ``Σ_t λ_t e_t Φ_t(R)`` is at most `far_share` of the
    mean interference from beyond the typical nearest-cell distance ``0.5/√λ``. Most of
    the far field is then added back as its mean (:class:`FarField`), so
    the error in the SINR is a fraction of `far_share` (measured in docs/model.md).

    Parameters
    ----------
    network : Network
    model : RadioModel, optional
    far_share : float
        In (0, 1).

    Returns
    -------
    float
        Radius [m]; the cells' extent (every cell counted exactly) if no smaller radius
        meets the share. It ignores wraparound: :func:`~cellopt.radio.link_table` with
        ``interference_radius_m="auto"`` counts every cell exactly where it is not below
        half the wraparound period.
    """
    far_share = check_number(far_share, "far_share", low=0.0, high=1.0, low_open=True,
                             high_open=True, fix="give a share in (0, 1), e.g. 0.05")
    if not isinstance(network, Network):
        raise ValidationError(f"network is a {type(network).__name__}; fix: give a cellopt Network")
    if model is not None and not isinstance(model, RadioModel):
        raise ValidationError(f"model is a {type(model).__name__}; fix: give a RadioModel or None")
    model = model or RadioModel()
    coupling = CouplingGains(network, model, 0)
    power = 10.0 ** (network.cells["tx_power_dbm"].to_numpy(float) / 10.0)[:, None]
    outer = cell_extent_m(network)
    table = FarField(coupling, power, outer)
    c = network.cell_arrays()
    area = max(np.ptp(c["x_m"]) * np.ptp(c["y_m"]), 1.0) if len(c["x_m"]) else 1.0
    near = 0.5 / math.sqrt(network.n_cells / area) if network.n_cells else outer
    # The mean far field beyond each radius of the table, at the network's mean density
    # (Σ over the cells of a tier of e_j, times Φ_t): it falls with the radius.
    far = np.bincount(coupling.tier, table.outdoor_mw[:, 0], minlength=len(TIERS)) @ table.ring
    total = float(np.interp(math.log(near), table.log_r, far)) if outer > near else 0.0
    if total <= 0:
        return outer
    return float(np.exp(np.interp(far_share * total, far[::-1], table.log_r[::-1])))
