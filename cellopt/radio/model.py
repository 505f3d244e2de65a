"""The radio model: coupling gains between users and cells, noise, SINR.

Everything here works on a block of users against all cells at once; the link table
(:mod:`cellopt.radio.links`) walks over the users block by block so that no array of
size users × cells is ever allocated for a large network.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

import numpy as np

from cellopt.errors import ValidationError
from cellopt.network import TIERS, Network
from cellopt.parameters import check_real
from cellopt.radio.antenna import angle_off_boresight_deg, sector_gain_db
from cellopt.radio.pathloss import tr36814_macro, tr36814_pico
from cellopt.radio.shadowing import standard_normal_hash
from cellopt.radio.spectral import SPECTRAL_EFFICIENCY, get_efficiency

__all__ = ["Coupling", "RadioModel", "sinr_db", "thermal_noise_dbm"]

THERMAL_NOISE_DBM_PER_HZ = -174.0
RSRP_SUBCARRIER_HZ = 15e3
#: The site index that keys a user's own shadowing term (shared by all its sites): far
#: beyond any real site index.
USER_TERM = 2**62


def thermal_noise_dbm(bandwidth_mhz: float | np.ndarray, noise_figure_db: float = 9.0) -> np.ndarray:
    """Noise power ``−174 dBm/Hz + 10 log10 W[Hz] + NF`` [dBm] over `bandwidth_mhz`.

    Parameters
    ----------
    bandwidth_mhz : float or ndarray
        Bandwidth [MHz].
    noise_figure_db : float
        Receiver noise figure [dB] (9 dB, TR 36.814 UE).

    Raises
    ------
    ValidationError
        A bandwidth that is not finite and > 0, or a noise figure outside [0, 100] dB.
    """
    try:
        raw = np.asarray(bandwidth_mhz)
    except (TypeError, ValueError):
        raw = np.full(1, np.nan)
    # numbers only: a string ("10"), a boolean or an integer beyond float64 (an object
    # array) is refused, not converted
    width = raw.astype(float) if raw.dtype.kind in "iuf" else np.full(1, np.nan)
    if not (np.isfinite(width) & (width > 0)).all():
        shown = repr(bandwidth_mhz) if len(repr(bandwidth_mhz)) <= 60 else \
            f"{repr(bandwidth_mhz)[:40]}..."
        raise ValidationError(f"bandwidth_mhz={shown}; fix: give bandwidths > 0 in MHz")
    check_real(noise_figure_db, "noise_figure_db", warn=False)
    return THERMAL_NOISE_DBM_PER_HZ + 10.0 * np.log10(width * 1e6) + noise_figure_db



@dataclasses.dataclass(frozen=True)
class RadioModel:
    """Parameters of the radio model; every default is TR 36.814 unless noted.

    Parameters
    ----------
    pathloss : mapping tier -> callable(distance_m) -> dB
        Path-loss model per tier (macro ``128.1 + 37.6 log10 R``; pico and femto
        ``140.7 + 36.7 log10 R``, R in km).
    min_distance_m : mapping tier -> float
        Distances below this are raised to it before the path loss (35 m macro, 10 m
        pico, TR 36.814; 10 m femto, an assumption).
    shadowing_std_db : mapping tier -> float
        Log-normal shadowing standard deviation (8 dB macro, 10 dB pico and femto);
        0 disables it. Sectors of one site share the value (full intra-site correlation);
        between sites the correlation is `site_correlation`.
    site_correlation : float
        Correlation, in [0, 1], of one user's shadowing toward two different sites (0.5,
        TR 36.814 Table A.2.1.1-2: "between sites 0.5"). The shadowing of user u toward
        site s is ``σ (√ρ a_u + √(1−ρ) b_us)`` with a_u and b_us independent N(0, 1); 0
        makes sites independent.
    wall_loss_db : float or mapping tier -> float
        Loss of one exterior wall [dB] (20 dB), per tier of the cell. A link crosses the
        wall of an indoor user's building and the wall of an indoor cell's building, so
        it pays this loss 0, 1 or 2 times (see `indoor_tiers`).
    indoor_tiers : tuple of str
        Tiers whose cells are indoors (``("femto",)``: home and shop femtocells). Their
        links to outdoor users and to indoor users of other buildings cross the cell's
        own exterior wall too; ``()`` treats every cell as outdoors.
    building_radius_m : float
        An indoor cell's building, as a disc of this radius around it (15 m, about a
        700 m² urban lot; an assumption): indoor users within it share the building and
        cross no exterior wall to that cell.
    noise_figure_db : float
        UE noise figure (9 dB).
    theta_3db_deg, max_attenuation_db : float
        3-sector pattern beamwidth (70°) and floor (25 dB).
    spectral_efficiency : str or callable
        ``"tr36942"`` (default), ``"shannon"``, ``"shannon_gap"``, ``"nr_64qam"``,
        ``"nr_256qam"``, ``"nr_low_se"`` (the TS 38.214 MCS tables,
        :func:`~cellopt.radio.spectral.nr_mcs`), or a callable of the linear SINR
        returning bit/s/Hz.
    """

    pathloss: Mapping[str, Callable[[np.ndarray], np.ndarray]] = dataclasses.field(
        default_factory=lambda: {"macro": tr36814_macro, "pico": tr36814_pico,
                                 "femto": tr36814_pico})
    min_distance_m: Mapping[str, float] = dataclasses.field(
        default_factory=lambda: {"macro": 35.0, "pico": 10.0, "femto": 10.0})
    shadowing_std_db: Mapping[str, float] = dataclasses.field(
        default_factory=lambda: {"macro": 8.0, "pico": 10.0, "femto": 10.0})
    site_correlation: float = 0.5
    wall_loss_db: float | Mapping[str, float] = 20.0
    indoor_tiers: tuple[str, ...] = ("femto",)
    building_radius_m: float = 15.0
    noise_figure_db: float = 9.0
    theta_3db_deg: float = 70.0
    max_attenuation_db: float = 25.0
    spectral_efficiency: str | Callable[[np.ndarray], np.ndarray] = "tr36942"

    def per_tier(self, name: str) -> np.ndarray:
        """A tier-indexed array (order of :data:`cellopt.network.TIERS`) of a mapping field."""
        value = getattr(self, name)
        if not isinstance(value, Mapping):
            return np.full(len(TIERS), float(value))
        missing = [t for t in TIERS if t not in value]
        if missing:
            raise ValidationError(f"RadioModel.{name} has no value for tiers {missing}; fix: "
                                  f"give one for each of {list(TIERS)}")
        return np.array([float(value[t]) for t in TIERS])

    def __post_init__(self) -> None:
        # Every field is checked here, once, so that no NaN or overflow reaches the links:
        # impossible values raise (all of them listed), implausible ones warn.
        problems: list[str] = []

        def check(value: object, name: str, kind: str) -> None:
            try:
                check_real(value, name, kind, stacklevel=5)
            except ValidationError as err:
                problems.extend(err.problems)

        if isinstance(self.indoor_tiers, str):  # a lone tier name, not its letters
            object.__setattr__(self, "indoor_tiers", (self.indoor_tiers,))
        if not isinstance(self.indoor_tiers, (tuple, list)):
            problems.append(f"RadioModel.indoor_tiers={self.indoor_tiers!r}; fix: give a tuple of "
                            f"tiers from {list(TIERS)}, e.g. ('femto',)")
        else:
            unknown = [t for t in self.indoor_tiers if t not in TIERS]
            if unknown:
                problems.append(f"RadioModel.indoor_tiers has unknown tiers {unknown}; fix: "
                                f"use tiers from {list(TIERS)}")
        for name in ("pathloss", "min_distance_m", "shadowing_std_db", "wall_loss_db"):
            value = getattr(self, name)
            if not isinstance(value, Mapping):
                if name == "pathloss":
                    problems.append(f"RadioModel.pathloss is a {type(value).__name__}; fix: give a "
                                    "mapping tier -> callable(distance_m) -> dB")
                else:
                    check(value, f"RadioModel.{name}", name)
                continue
            unknown = [t for t in value if t not in TIERS]
            if unknown:
                problems.append(f"RadioModel.{name} has unknown tiers {unknown}; fix: use tiers "
                                f"from {list(TIERS)}")
            for tier, v in value.items():
                if name == "pathloss":
                    if not callable(v):
                        problems.append(f"RadioModel.pathloss[{tier!r}] is a {type(v).__name__}; "
                                        "fix: give a callable of the distance in metres")
                elif tier in TIERS:
                    check(v, f"RadioModel.{name}[{tier!r}]", name)
        for name in ("site_correlation", "building_radius_m", "noise_figure_db", "theta_3db_deg",
                     "max_attenuation_db"):
            check(getattr(self, name), f"RadioModel.{name}", name)
        se = self.spectral_efficiency
        if not (callable(se) or (isinstance(se, str) and se in SPECTRAL_EFFICIENCY)):
            problems.append(f"RadioModel.spectral_efficiency={se!r}; fix: use one of "
                            f"{sorted(SPECTRAL_EFFICIENCY)} or a callable of the linear SINR")
        if problems:
            raise ValidationError(problems)

    def efficiency(self) -> Callable[[np.ndarray], np.ndarray]:
        return get_efficiency(self.spectral_efficiency)


class Coupling:
    """Coupling gains (antenna gain − path loss − shadowing − wall losses) [dB] of user blocks.

    Built once per network; :meth:`gain_db` then evaluates any block of users against
    every cell.

    Parameters
    ----------
    network : Network
    model : RadioModel
    seed : int
        Shadowing seed.
    """

    def __init__(self, network: Network, model: RadioModel, seed: int):
        c = network.cell_arrays()
        u = network.user_arrays()
        self.model = model
        self.seed = int(seed)
        self.cell_xy = np.column_stack([c["x_m"], c["y_m"]])
        self.user_xy = np.column_stack([u["x_m"], u["y_m"]])
        self.indoor = u["indoor"]
        self.tier = c["tier"]
        self.site = c["site"]
        self.n_sites = int(self.site.max()) + 1 if len(self.site) else 0
        self.azimuth = c["azimuth_deg"]
        self.sectorised = np.flatnonzero(~np.isnan(self.azimuth))
        self.boresight_dbi = c["antenna_gain_dbi"]
        self.shifts = network.wrap_shifts_m
        self.min_distance = model.per_tier("min_distance_m")[self.tier]
        self.shadow_std = model.per_tier("shadowing_std_db")[self.tier]
        self.wall_loss = model.per_tier("wall_loss_db")[self.tier]
        self.indoor_cell = np.isin(self.tier, [TIERS.index(t) for t in model.indoor_tiers])
        self.tier_columns = [(t, np.flatnonzero(self.tier == k)) for k, t in enumerate(TIERS)]
        missing = [t for t, cols in self.tier_columns if len(cols) and t not in model.pathloss]
        if missing:
            raise ValidationError(f"RadioModel.pathloss has no model for tiers {missing}; fix: "
                                  "add one (any callable of distance in metres)")

    def displacement_m(self, users: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """East and north offsets [m] from each cell to each user, shape (U, C).

        With wraparound, the offset to the nearest image of each cell.
        """
        dx = self.user_xy[users, 0][:, None] - self.cell_xy[None, :, 0]
        dy = self.user_xy[users, 1][:, None] - self.cell_xy[None, :, 1]
        if self.shifts is None:
            return dx, dy
        best = dx * dx + dy * dy
        bx, by = dx.copy(), dy.copy()
        for sx, sy in self.shifts[1:]:  # a handful of images, not a loop over cells
            ix, iy = dx - sx, dy - sy
            d2 = ix * ix + iy * iy
            closer = d2 < best
            np.copyto(best, d2, where=closer)
            np.copyto(bx, ix, where=closer)
            np.copyto(by, iy, where=closer)
        return bx, by

    def gain_db(self, users: np.ndarray) -> np.ndarray:
        """Coupling gain [dB] from every cell to the given users.

        Parameters
        ----------
        users : ndarray of int, shape (U,)
            Row positions of the users.

        Returns
        -------
        ndarray, shape (U, C)
            ``G_ant − PL(d) − S − L_wall`` [dB]; add the transmit power for received power.
        """
        users = np.asarray(users)
        dx, dy = self.displacement_m(users)
        distance = np.hypot(dx, dy)
        dist = np.maximum(distance, self.min_distance)
        gain = np.empty_like(dist)
        for tier, cols in self.tier_columns:
            if len(cols):
                gain[:, cols] = -self.model.pathloss[tier](dist[:, cols])
        gain += self.boresight_dbi
        if len(self.sectorised):
            s = self.sectorised
            gain[:, s] += self.sector_db(dx[:, s], dy[:, s], self.azimuth[s])
        if np.any(self.shadow_std > 0):
            z = self.shadowing(users[:, None], np.arange(self.n_sites)[None, :])
            gain -= z[:, self.site] * self.shadow_std
        if self.indoor[users].any() or self.indoor_cell.any():
            gain -= self.wall_loss * self.walls(self.indoor[users][:, None], self.indoor_cell[None, :],
                                                distance)
        return gain

    def pair_gain_db(self, users: np.ndarray, cells: np.ndarray, dx_m: np.ndarray,
                     dy_m: np.ndarray) -> np.ndarray:
        """Coupling gain [dB] of given user–cell pairs, elementwise (:meth:`gain_db`'s terms).

        Parameters
        ----------
        users, cells : ndarray of int, shape (P,)
            Row positions of the pairs' users and cells.
        dx_m, dy_m : ndarray, shape (P,)
            East and north offsets from the cell (or its wraparound image) to the user [m].

        Returns
        -------
        ndarray, shape (P,)
            The same values, bit for bit, as the matching entries of :meth:`gain_db`.
        """
        distance = np.hypot(dx_m, dy_m)
        dist = np.maximum(distance, self.min_distance[cells])
        tier = self.tier[cells]
        gain = np.empty_like(dist)
        for k, (name, cols) in enumerate(self.tier_columns):
            if len(cols):
                mask = tier == k
                gain[mask] = -self.model.pathloss[name](dist[mask])
        gain += self.boresight_dbi[cells]
        sector = ~np.isnan(self.azimuth[cells])
        if sector.any():
            gain[sector] += self.sector_db(dx_m[sector], dy_m[sector], self.azimuth[cells[sector]])
        if np.any(self.shadow_std > 0):
            gain -= self.shadowing(users, self.site[cells]) * self.shadow_std[cells]
        if self.indoor[users].any() or self.indoor_cell.any():
            gain -= self.wall_loss[cells] * self.walls(self.indoor[users], self.indoor_cell[cells],
                                                       distance)
        return gain

    def shadowing(self, users: np.ndarray, sites: np.ndarray) -> np.ndarray:
        """Unit-variance shadowing of user–site pairs, correlated between sites.

        ``√ρ a_u + √(1−ρ) b_us`` with ρ = ``site_correlation``: a_u is the user's own
        term (keyed by the site index :data:`USER_TERM`), b_us the pair's.

        Parameters
        ----------
        users, sites : ndarray of int
            Broadcast together (e.g. shapes (U, 1) and (1, S)).

        Returns
        -------
        ndarray
            N(0, 1) values of the broadcast shape; multiply by σ [dB].
        """
        rho = self.model.site_correlation
        pair = standard_normal_hash(self.seed, users, sites)
        if rho == 0.0:
            return pair
        own = standard_normal_hash(self.seed, users, USER_TERM)
        return np.sqrt(rho) * own + np.sqrt(1.0 - rho) * pair

    def sector_db(self, dx_m: np.ndarray, dy_m: np.ndarray, azimuth_deg: np.ndarray) -> np.ndarray:
        """Sector pattern gain [dB] toward offsets (dx_m, dy_m) of antennas facing `azimuth_deg`."""
        bearing = np.degrees(np.arctan2(dx_m, dy_m))
        return sector_gain_db(angle_off_boresight_deg(bearing, azimuth_deg),
                              self.model.theta_3db_deg, self.model.max_attenuation_db)

    def walls(self, user_indoor: np.ndarray, cell_indoor: np.ndarray,
              distance_m: np.ndarray) -> np.ndarray:
        """Exterior walls (0, 1 or 2) each link crosses.

        One for an indoor user, one for an indoor cell, none for an indoor user inside
        an indoor cell's building (within ``building_radius_m`` of it).

        Parameters
        ----------
        user_indoor, cell_indoor : ndarray of bool
            Broadcast together with `distance_m` (e.g. shapes (U, 1) and (1, C)).
        distance_m : ndarray
            User–cell distances before the minimum distance is applied [m].
        """
        walls = user_indoor.astype(np.int8) + cell_indoor
        if cell_indoor.any() and user_indoor.any():
            same = user_indoor & cell_indoor & (distance_m <= self.model.building_radius_m)
            walls -= 2 * same.astype(np.int8)
        return walls


def sinr_db(
    gain_db: np.ndarray, power_dbm: np.ndarray, noise_dbm: np.ndarray | float
) -> np.ndarray:
    """SINR of every user–cell pair on every resource, dense (for small networks and tests).

    ``γ_ijk = g_ij p_jk / (N_k + Σ_{l≠j} g_il p_lk)``; every cell interferes.

    Parameters
    ----------
    gain_db : ndarray, shape (U, C)
        Coupling gains [dB].
    power_dbm : ndarray, shape (C,) or (C, K)
        Transmit power per cell and resource [dBm]; −inf switches a cell off.
    noise_dbm : float or ndarray, shape (K,)
        Noise power per resource [dBm].

    Returns
    -------
    ndarray, shape (U, C, K)
        SINR [dB] (−inf where the serving cell is off).
    """
    for name, value in (("gain_db", gain_db), ("power_dbm", power_dbm), ("noise_dbm", noise_dbm)):
        v = np.asarray(value, float)
        # 10^(x/10) overflows above ~3000 dB; 200 dB is far beyond any radio quantity
        if np.isnan(v).any() or (v > 200.0).any():
            raise ValidationError(f"{name} has NaN entries or entries above 200 dB; fix: give "
                                  "dB values (−inf for a cell that is off)")
    g = 10.0 ** (np.asarray(gain_db, float) / 10.0)
    p = 10.0 ** (np.asarray(power_dbm, float).reshape(g.shape[1], -1) / 10.0)
    noise = 10.0 ** (np.broadcast_to(np.asarray(noise_dbm, float), (p.shape[1],)) / 10.0)
    signal = g[:, :, None] * p[None, :, :]
    interference = (g @ p)[:, None, :] - signal
    with np.errstate(divide="ignore"):
        return 10.0 * np.log10(signal / (noise + np.maximum(interference, 0.0)))
