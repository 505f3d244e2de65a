"""The radio model: coupling gains between users and cells, noise, SINR.

Everything here works on a block of users against all cells at once; the link table
(:mod:`cellopt.radio.links`) walks over the users block by block so that no array of
size users × cells is ever allocated for a large network.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Mapping

import numpy as np

from cellopt.checks import check_real
from cellopt.errors import ValidationError
from cellopt.network import ANTENNA_COLUMNS, TIERS, Network
from cellopt.parameters import LIMITS, register_choice
from cellopt.radio import numerology
from cellopt.radio.antenna import angle_off_boresight_deg, sector_gain_db
from cellopt.radio.antenna3d import ElementPattern, antenna_gain_db
from cellopt.radio.interface import Links, Propagation, as_propagation, bind
from cellopt.radio.numerology import NR_SUBCARRIER_SPACINGS_KHZ
from cellopt.radio.pathloss import tr36814_macro, tr36814_pico
from cellopt.radio.propagation import UserDraws
from cellopt.radio.shadowing import spatial_normal_hash, standard_normal_hash
from cellopt.radio.spectral import SPECTRAL_EFFICIENCY, get_efficiency

__all__ = ["ANTENNAS", "CouplingGains", "RadioModel", "sinr_db", "thermal_noise_dbm"]

#: The TR 38.901 element relative to its maximum gain: the cells' ``antenna_gain_dbi`` is
#: that maximum.
RELATIVE_ELEMENT = ElementPattern(max_gain_dbi=0.0)
#: Top of NR's frequency range 1 [GHz] (TS 38.101-1).
FR1_MAX_GHZ = 7.125
#: Antenna models of :attr:`RadioModel.antenna`.
ANTENNAS = ("tr36814", "tr38901")
register_choice("antenna", ANTENNAS)

THERMAL_NOISE_DBM_PER_HZ = -174.0
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
        A bandwidth that is not finite and in (0, 10⁵] MHz (1e7 is a bandwidth in Hz), or
        a noise figure outside [0, 100] dB.
    """
    try:
        raw = np.asarray(bandwidth_mhz)
    except (TypeError, ValueError):
        raw = np.full(1, np.nan)
    # numbers only: a string ("10"), a boolean or an integer beyond float64 (an object
    # array) is refused, not converted
    width = raw.astype(float) if raw.dtype.kind in "iuf" else np.full(1, np.nan)
    limit = LIMITS["bandwidth_mhz"]
    if not (np.isfinite(width) & (width > 0) & (width <= limit.high)).all():
        shown = repr(bandwidth_mhz) if len(repr(bandwidth_mhz)) <= 60 else \
            f"{repr(bandwidth_mhz)[:40]}..."
        raise ValidationError(f"bandwidth_mhz={shown}; fix: give bandwidths > 0 in MHz, at "
                              f"most {limit.high:g} MHz (10 MHz = 1e7 Hz)")
    check_real(noise_figure_db, "noise_figure_db", warn=False)
    return THERMAL_NOISE_DBM_PER_HZ + 10.0 * np.log10(width * 1e6) + noise_figure_db



@dataclasses.dataclass(frozen=True)
class RadioModel:
    """Parameters of the radio model; every default is TR 36.814 unless noted.

    Parameters
    ----------
    pathloss : mapping tier -> model
        Propagation model per tier: a callable of the 2-D distance [m] returning the
        path loss [dB] (macro ``128.1 + 37.6 log10 R``; pico and femto
        ``140.7 + 36.7 log10 R``, R in km), or any :class:`~cellopt.radio.Propagation`.
        A :class:`~cellopt.radio.ThreeGPP` model makes the tier's links
        three-dimensional (TR 38.901 / TR 36.873: heights, LOS state, O2I loss for
        indoor users in place of `wall_loss_db`, and shadowing σ by state in place of
        `shadowing_std_db`); a :class:`~cellopt.radio.RasterPathLoss` reads a planner's
        per-cell predictions.
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
    decorrelation_m : float
        Distance [m] over which the shadowing toward one site decorrelates between users
        (``spatial_normal_hash``: e^−1 at this distance, 0 beyond twice it); 0 (default,
        TR 36.814 gives none) draws every user independently. 50 m is the usual
        macro value (TR 36.942). The 3GPP models use their scenario's own distances.
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
    rat : {"lte", "nr"}
        The carrier's radio access technology, for the number of subcarriers that RSRP
        is measured per (:meth:`rsrp_offset_db`).
    subcarrier_spacing_khz : float
        Subcarrier spacing [kHz]: 15 for LTE; 15, 30, 60 or 120 for NR.
    antenna : {"tr36814", "tr38901"}
        Pattern of the sectorised cells. ``"tr36814"``: the horizontal 3-sector pattern
        (`theta_3db_deg`, `max_attenuation_db`). ``"tr38901"``: three dimensions, the
        TR 38.901 Table 7.3-1 element (65°, 30 dB) in a panel of ``panel_rows`` ×
        ``panel_columns`` elements steered to ``electrical_tilt_deg``, the panel turned
        down by ``tilt_deg`` (the cells' :data:`~cellopt.network.ANTENNA_COLUMNS`);
        the cells' ``antenna_gain_dbi`` is the element's maximum gain (8 dBi in
        TR 38.901). Omni cells (NaN azimuth) radiate ``antenna_gain_dbi`` every way in
        both.
    theta_3db_deg, max_attenuation_db : float
        3-sector pattern beamwidth (70°) and floor (25 dB) of the ``"tr36814"`` antenna.
    spectral_efficiency : str or callable
        ``"tr36942"`` (default), ``"shannon"``, ``"shannon_gap"``, ``"nr_64qam"``,
        ``"nr_256qam"``, ``"nr_low_se"`` (the TS 38.214 MCS tables,
        :func:`~cellopt.radio.spectral.nr_mcs`), or a callable of the linear SINR
        returning bit/s/Hz.
    """

    pathloss: Mapping[str, Callable[[np.ndarray], np.ndarray] | Propagation] = dataclasses.field(
        default_factory=lambda: {"macro": tr36814_macro, "pico": tr36814_pico,
                                 "femto": tr36814_pico})
    min_distance_m: Mapping[str, float] = dataclasses.field(
        default_factory=lambda: {"macro": 35.0, "pico": 10.0, "femto": 10.0})
    shadowing_std_db: Mapping[str, float] = dataclasses.field(
        default_factory=lambda: {"macro": 8.0, "pico": 10.0, "femto": 10.0})
    site_correlation: float = 0.5
    decorrelation_m: float = 0.0
    wall_loss_db: float | Mapping[str, float] = 20.0
    indoor_tiers: tuple[str, ...] = ("femto",)
    building_radius_m: float = 15.0
    noise_figure_db: float = 9.0
    rat: str = "lte"
    subcarrier_spacing_khz: float = 15.0
    antenna: str = "tr36814"
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
                                    "mapping tier -> model (a callable of the distance in metres "
                                    "or a cellopt.radio.Propagation)")
                else:
                    check(value, f"RadioModel.{name}", name)
                continue
            unknown = [t for t in value if t not in TIERS]
            if unknown:
                problems.append(f"RadioModel.{name} has unknown tiers {unknown}; fix: use tiers "
                                f"from {list(TIERS)}")
            for tier, v in value.items():
                if name == "pathloss":
                    try:
                        as_propagation(v, f"RadioModel.pathloss[{tier!r}]")
                    except ValidationError as err:
                        problems.extend(err.problems)
                elif tier in TIERS:
                    check(v, f"RadioModel.{name}[{tier!r}]", name)
        for name in ("site_correlation", "decorrelation_m", "building_radius_m",
                     "noise_figure_db", "theta_3db_deg", "max_attenuation_db"):
            check(getattr(self, name), f"RadioModel.{name}", name)
        if self.rat not in ("lte", "nr"):
            problems.append(f"RadioModel.rat={self.rat!r}; fix: use 'lte' or 'nr'")
        elif self.subcarrier_spacing_khz not in (NR_SUBCARRIER_SPACINGS_KHZ if self.rat == "nr"
                                                 else (15,)):
            valid = NR_SUBCARRIER_SPACINGS_KHZ if self.rat == "nr" else (15,)
            problems.append(f"RadioModel.subcarrier_spacing_khz={self.subcarrier_spacing_khz!r} "
                            f"is not a {self.rat.upper()} numerology; fix: use one of "
                            f"{', '.join(map(str, valid))} kHz")
        if self.antenna not in ANTENNAS:
            problems.append(f"RadioModel.antenna={self.antenna!r}; fix: use one of "
                            f"{list(ANTENNAS)}")
        if isinstance(self.pathloss, Mapping) and isinstance(self.indoor_tiers, (tuple, list)):
            own = [t for t in self.indoor_tiers
                   if getattr(self.pathloss.get(t), "includes_fading", False)]
            if own:
                problems.append(f"RadioModel.indoor_tiers {own} use a model with its own "
                                "penetration loss (includes_fading), which already places "
                                "cells and users; fix: leave them out of indoor_tiers (an InH "
                                "scenario for cells indoors)")
        se = self.spectral_efficiency
        if not (callable(se) or (isinstance(se, str) and se in SPECTRAL_EFFICIENCY)):
            problems.append(f"RadioModel.spectral_efficiency={se!r}; fix: use one of "
                            f"{sorted(SPECTRAL_EFFICIENCY)} or a callable of the linear SINR")
        if problems:
            raise ValidationError(problems)

    def rsrp_offset_db(self, bandwidth_mhz: float) -> float:
        """From a cell's total power to its power per resource element [dB].

        ``10 log10(12 N_RB)``, N_RB from the transmission bandwidth configuration of
        `rat` at ``subcarrier_spacing_khz`` (:func:`cellopt.radio.numerology.prb_count`;
        NR's FR2 table where a tier model's ``frequency_ghz`` is above
        7.125 GHz or the spacing is 120 kHz, FR1 otherwise):
        RSRP is a power per resource element (TS 36.214 / TS 38.215 §5.1.1), 27.78 dB
        below the total for LTE at 10 MHz (600 subcarriers). A bandwidth that is not a
        standard channel of the numerology (e.g. 12 MHz, or 100 MHz for NR at 15 kHz) has
        no table entry; it counts every subcarrier, ``10 log10(W / Δf)``, and warns with
        the table's channels (often a bandwidth in the wrong unit, or the wrong
        ``subcarrier_spacing_khz``).

        Parameters
        ----------
        bandwidth_mhz : float
            The carrier's bandwidth [MHz].

        Raises
        ------
        ValidationError
            A bandwidth that is not a number > 0 MHz, or beyond 100 GHz (a bandwidth
            in Hz or kHz).
        """
        bandwidth_mhz = check_real(bandwidth_mhz, "bandwidth_mhz", warn=False)
        fr = None
        if self.rat == "nr":  # 60 kHz has both ranges: the 3GPP models' carrier decides
            carriers = [f for m in self.pathloss.values()
                        if (f := getattr(m, "frequency_ghz", None)) is not None]
            fr = "fr2" if carriers and max(carriers) > FR1_MAX_GHZ else "fr1"
            if self.subcarrier_spacing_khz == 120:
                fr = "fr2"
        try:
            return numerology.rsrp_offset_db(bandwidth_mhz, self.subcarrier_spacing_khz,
                                             rat=self.rat, fr=fr)
        except ValidationError as err:
            offset = 10.0 * math.log10(bandwidth_mhz * 1e3 / self.subcarrier_spacing_khz)
            warnings.warn(f"{err.problems[0]}; RSRP is measured over every subcarrier of "
                          f"the band instead, 10·log10(W / Δf) = {offset:.2f} dB below the "
                          "total power (legal, but check the bandwidth, rat and "
                          "subcarrier_spacing_khz)", UserWarning, stacklevel=2)
            return offset

    def efficiency(self) -> Callable[[np.ndarray], np.ndarray]:
        return get_efficiency(self.spectral_efficiency)


class CouplingGains:
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
        self.crs = network.cells.crs
        self.cell_xy = np.column_stack([c["x_m"], c["y_m"]])
        self.user_xy = np.column_stack([u["x_m"], u["y_m"]])
        self.indoor = u["indoor"]
        self.tier = c["tier"]
        self.site = c["site"]
        self.n_sites = int(self.site.max()) + 1 if len(self.site) else 0
        self.azimuth = c["azimuth_deg"]
        self.shifts = network.wrap_shifts_m
        self.min_distance = model.per_tier("min_distance_m")[self.tier]
        self.shadow_std = model.per_tier("shadowing_std_db")[self.tier]
        self.wall_loss = model.per_tier("wall_loss_db")[self.tier]
        self.indoor_cell = np.isin(self.tier, [TIERS.index(t) for t in model.indoor_tiers])
        self.tier_columns = [(t, cols) for k, t in enumerate(TIERS)
                             if len(cols := np.flatnonzero(self.tier == k))]
        missing = [t for t, _ in self.tier_columns if t not in model.pathloss]
        if missing:
            raise ValidationError(f"RadioModel.pathloss has no model for tiers {missing}; fix: "
                                  "add one (any callable of distance in metres)")
        self.height = c["height_m"]
        #: The model of each tier that has cells, bound to this network.
        self.propagation = _bind(network, model, self.tier_columns)
        own_fading = np.zeros(len(self.tier), bool)
        #: The cells whose antenna gain and pattern the radio model applies.
        self.antenna_applied = np.ones(len(self.tier), bool)
        for tier, cols in self.tier_columns:
            prop = self.propagation[tier]
            own_fading[cols] = getattr(prop, "includes_fading", False)
            self.antenna_applied[cols] = not getattr(prop, "includes_antenna", False)
        self.boresight_dbi = np.where(self.antenna_applied, c["antenna_gain_dbi"], 0.0)
        self.sectorised = np.flatnonzero(~np.isnan(self.azimuth) & self.antenna_applied)
        # columns of the tiers whose models take the per-tier shadowing and walls
        self.plain = np.flatnonzero(~own_fading)
        self.wall_loss[own_fading] = 0.0  # their own penetration loss replaces the walls
        self.shadow_std[own_fading] = 0.0  # their own shadowing
        # a model whose links depend on the cell only through its site, position and
        # height (``per_site``) is computed once per site (its first cell) where a site's
        # cells share position and height, and copied to the site's other sectors
        self.site_columns = {
            t: _site_representatives(cols, self.site, self.cell_xy, self.height)
            for t, cols in self.tier_columns if getattr(self.propagation[t], "per_site", False)}
        self.draws = _user_draws(self.seed, self.indoor, self.propagation)
        self.user_height = (np.full(len(self.indoor), 1.5) if self.draws is None
                            else self.draws.height_m)
        given = [col for col, column in ANTENNA_COLUMNS.items()
                 if col in network.cells and (c[col] != column.default).any()]
        if given and model.antenna == "tr36814":
            warnings.warn(f"the cells' {given} are not used by the 2-D TR 36.814 sector pattern; "
                          "fix: RadioModel(antenna='tr38901') (scenario: [radio] antenna = "
                          "\"tr38901\") to use them, or leave the columns out", UserWarning,
                          stacklevel=3)
        self.antenna = {"tilt_deg": c["tilt_deg"], "electrical_tilt_deg": c["electrical_tilt_deg"],
                        "panel_rows": c["panel_rows"].astype(np.int64),
                        "panel_columns": c["panel_columns"].astype(np.int64)}

    def links(self, users: np.ndarray, cells: np.ndarray, distance_m: np.ndarray) -> Links:
        """The :class:`~cellopt.radio.Links` of `users` and `cells` (broadcast together,
        e.g. shapes (U, 1) and (1, C), or (P,) each) at 2-D distances `distance_m` [m]."""
        sites = self.site[cells]
        return Links(
            users=users, cells=cells, sites=sites, distance_m=distance_m,
            user_x_m=self.user_xy[users, 0], user_y_m=self.user_xy[users, 1],
            user_height_m=self.user_height[users], cell_height_m=self.height[cells],
            indoor=self.indoor[users], crs=self.crs, seed=self.seed, draws=self.draws,
            shadowing=lambda decorrelation_m=0.0, where=None: self.shadowing(
                users, sites, decorrelation_m, where))

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
            if tier in self.site_columns:
                rep, copy = self.site_columns[tier]
                links = self.links(users[:, None], rep[None, :], dist[:, rep])
                gain[:, cols] = -self.propagation[tier].loss_db(links)[:, copy]
            else:
                links = self.links(users[:, None], cols[None, :], dist[:, cols])
                gain[:, cols] = -self.propagation[tier].loss_db(links)
        gain += self.boresight_dbi
        if len(self.sectorised):
            s = self.sectorised
            gain[:, s] += self.pattern_db(users[:, None], s[None, :], dx[:, s], dy[:, s])
        plain = self.plain
        if np.any(self.shadow_std[plain] > 0):
            z = self.shadowing(users[:, None], np.arange(self.n_sites)[None, :],
                               self.model.decorrelation_m)
            if len(plain) == len(self.tier):
                gain -= z[:, self.site] * self.shadow_std
            else:
                gain[:, plain] -= z[:, self.site[plain]] * self.shadow_std[plain]
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
        shadow = (self.shadowing(users, self.site[cells], self.model.decorrelation_m)
                  if np.any(self.shadow_std > 0) else 0.0)
        for name, _ in self.tier_columns:
            mask = tier == TIERS.index(name)
            u, c = users[mask], cells[mask]
            gain[mask] = -self.propagation[name].loss_db(self.links(u, c, dist[mask]))
        gain += self.boresight_dbi[cells]
        sector = ~np.isnan(self.azimuth[cells]) & self.antenna_applied[cells]
        if sector.any():
            gain[sector] += self.pattern_db(users[sector], cells[sector], dx_m[sector],
                                            dy_m[sector])
        if np.any(self.shadow_std > 0):  # the distance-law tiers' (3GPP tiers' σ is 0 here)
            gain -= shadow * self.shadow_std[cells]
        if self.indoor[users].any() or self.indoor_cell.any():
            gain -= self.wall_loss[cells] * self.walls(self.indoor[users], self.indoor_cell[cells],
                                                       distance)
        return gain

    def indoor_loss_db(self) -> np.ndarray:
        """The loss [dB] of each cell's signal into a building, for the far field, shape (C,).

        The exterior wall ``wall_loss_db`` of tiers whose model the radio model adds walls
        to; for a model with its own penetration loss (``indoor_loss_db``, the 3GPP O2I
        loss), its mean over the network's indoor users, ``−10 log10 mean 10^(−L/10)``
        (0 if none is indoors, or the model has none).
        """
        loss = self.wall_loss.copy()
        indoor = self.indoor
        for tier, cols in self.tier_columns:
            own = getattr(self.propagation[tier], "indoor_loss_db", None)
            if own is not None and indoor.any():
                per_user = np.asarray(own(self.draws), float)[indoor]
                loss[cols] = -10.0 * np.log10(np.mean(10.0 ** (-per_user / 10.0)))
        return loss

    def shadowing(self, users: np.ndarray, sites: np.ndarray, decorrelation_m: float = 0.0,
                  where: np.ndarray | None = None) -> np.ndarray:
        """Unit-variance shadowing of user–site pairs, correlated between sites.

        ``√ρ a_u + √(1−ρ) b_us`` with ρ = ``site_correlation``: a_u is the user's own
        term (keyed by the site index :data:`USER_TERM`), b_us the pair's; with a
        decorrelation distance, both are fields in the plane read at the user's position
        (:func:`~cellopt.radio.shadowing.spatial_normal_hash`).

        Parameters
        ----------
        users, sites : ndarray of int
            Broadcast together (e.g. shapes (U, 1) and (1, S)).
        decorrelation_m : float
            0: every user independent; > 0: correlated in space over this distance [m].
        where : ndarray of bool, optional
            Of the broadcast shape: only these pairs are wanted (a 1-D array of their
            values is returned; the others are not computed).

        Returns
        -------
        ndarray
            N(0, 1) values of the broadcast shape (or of the pairs `where` picks);
            multiply by σ [dB].
        """
        rho = self.model.site_correlation
        own = None
        if rho > 0:
            own = self.own_shadowing(users, decorrelation_m)
        if where is not None:
            shape = np.broadcast_shapes(np.shape(users), np.shape(sites))
            users = np.broadcast_to(users, shape)[where]
            sites = np.broadcast_to(sites, shape)[where]
            own = None if own is None else np.broadcast_to(own, shape)[where]
        if decorrelation_m > 0:
            x, y = self.user_xy[users, 0], self.user_xy[users, 1]
            pair = spatial_normal_hash(self.seed, x, y, sites, decorrelation_m)
        else:
            pair = standard_normal_hash(self.seed, users, sites)
        if own is None:
            return pair
        return np.sqrt(rho) * own + np.sqrt(1.0 - rho) * pair

    def own_shadowing(self, users: np.ndarray, decorrelation_m: float = 0.0) -> np.ndarray:
        """Each user's own N(0, 1) shadowing term a_u, shared by all its sites."""
        if decorrelation_m > 0:
            x, y = self.user_xy[users, 0], self.user_xy[users, 1]
            return spatial_normal_hash(self.seed, x, y, USER_TERM, decorrelation_m)
        return standard_normal_hash(self.seed, users, USER_TERM)

    def pattern_db(self, users: np.ndarray, cells: np.ndarray, dx_m: np.ndarray,
                   dy_m: np.ndarray, dz_m: np.ndarray | float | None = None) -> np.ndarray:
        """Antenna pattern gain [dB] of sectorised `cells` toward `users`, relative to
        the boresight gain (the model's ``antenna``).

        Parameters
        ----------
        users, cells : ndarray of int
            Row positions, broadcast with the offsets (e.g. shapes (U, 1) and (1, C)).
        dx_m, dy_m : ndarray
            East and north offsets from each cell (or its image) to each user [m].
        dz_m : ndarray or float, optional
            Height of the users above the cells [m]; default from the users' and the
            cells' heights.
        """
        if self.model.antenna == "tr36814":
            bearing = np.degrees(np.arctan2(dx_m, dy_m))
            return sector_gain_db(angle_off_boresight_deg(bearing, self.azimuth[cells]),
                                  self.model.theta_3db_deg, self.model.max_attenuation_db)
        a = self.antenna
        if dz_m is None:
            dz_m = self.user_height[users] - self.height[cells]
        return antenna_gain_db(dx_m, dy_m, dz_m,
                               self.azimuth[cells], a["tilt_deg"][cells],
                               a["electrical_tilt_deg"][cells], a["panel_rows"][cells],
                               a["panel_columns"][cells], element=RELATIVE_ELEMENT)

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


def _site_representatives(cols: np.ndarray, site: np.ndarray, xy: np.ndarray,
                          height: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first cell of each site among `cols`, and the position of each of `cols`'
    representative among them: ``gain[:, cols] = per_site[:, copy]``.

    Where some site's cells differ in position or height, every cell is its own
    representative.
    """
    _, first, copy = np.unique(site[cols], return_index=True, return_inverse=True)
    rep = cols[first]
    same = (np.all(xy[cols] == xy[rep][copy], axis=1) & (height[cols] == height[rep][copy]))
    if not same.all():
        return cols, np.arange(len(cols))
    return rep, copy


def _bind(network: Network, model: RadioModel,
          tier_columns: list[tuple[str, np.ndarray]]) -> dict[str, Propagation]:
    """Each tier's model as a :class:`~cellopt.radio.Propagation` bound to `network`: a
    model given for several tiers is bound once, to all their cells."""
    by_model: dict[int, tuple[object, list[str]]] = {}
    for tier, _ in tier_columns:
        value = model.pathloss[tier]
        by_model.setdefault(id(value), (value, []))[1].append(tier)
    bound: dict[str, Propagation] = {}
    columns = dict(tier_columns)
    for value, tiers in by_model.values():
        cells = np.sort(np.concatenate([columns[t] for t in tiers]))
        prop = bind(value, network, cells, model, f"RadioModel.pathloss[{tiers[0]!r}]")
        bound.update(dict.fromkeys(tiers, prop))
    return bound


def _user_draws(seed: int, indoor: np.ndarray,
                models: Mapping[str, Propagation]) -> UserDraws | None:
    """The users' heights and O2I draws (``draw_users``), which every tier of a network
    shares; None if no model draws them."""
    draws = {t: m.draw_users(seed, indoor) for t, m in models.items()
             if getattr(m, "draw_users", None) is not None}
    if not draws:
        return None
    tiers = list(draws)
    first = draws[tiers[0]]
    differ = [t for t in tiers[1:] if not all(
        np.array_equal(getattr(draws[t], k), getattr(first, k))
        for k in ("height_m", "indoor_distance_m", "high_loss"))]
    if differ:
        raise ValidationError(f"the models of tiers {[tiers[0], *differ]} draw different user "
                              "heights or buildings, but a user has one height and one building; "
                              "fix: give their models the same user_height_m, indoor_floors, "
                              "high_loss_fraction and max_indoor_distance_m")
    return first


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
