"""3GPP three-dimensional large-scale propagation for the links of one tier.

A :class:`ThreeGPP` model, given as a tier's :attr:`RadioModel.pathloss
<cellopt.radio.RadioModel.pathloss>`, makes that tier's links follow TR 38.901 (UMa, UMi
street canyon, RMa, InH office) or TR 36.873 (3D-UMa, 3D-UMi) instead of a 2-D distance
law. The formulas are in :mod:`cellopt.radio.tr38901`; this module draws the random
quantities they need, each keyed by a counter-based hash of ``(seed, user, site)``
(:func:`~cellopt.radio.shadowing.uniform_hash`) so that a link's value is the same
however the users are split into blocks:

- per user: its height (the indoor floor model: N_fl ~ U{4..8} floors, floor n_fl ~
  U{1..N_fl}, h = 3 (n_fl − 1) + 1.5 m; outdoor users at ``user_height_m``), its
  distance from the exterior wall d_2D-in, its building type (high-loss with
  probability ``high_loss_fraction``) and its O2I loss's normal term;
- per user and site, shared by the site's sectors: the LOS state (LOS with the
  scenario's probability at the 2-D distance outside the building), UMa's effective
  environment height h_E, and the shadowing, whose σ is that of the link's LOS or NLOS
  state (TR 38.901 Table 7.4.1-1, TR 36.873 Table 7.3-6), for indoor users too.

Indoor users' spread. TR 38.901: the O2I loss adds its own spread σ_P (4.4 dB low-loss,
6.5 dB high-loss, §7.4.3); Table 7.5-6's larger O2I σ_SF (7 dB) belongs to the
fast-fading model's large-scale parameters and is not used (with it the median serving
coupling loss of UMa and UMi falls 1.0–1.2 dB below 3GPP's calibration). TR 36.873: its
O2I loss (20 dB + 0.5 d_2D-in) has no σ_P, and Table 7.3-6 gives indoor users σ_SF =
7 dB in place of the LOS/NLOS σ (3D-UMa 4/6 dB, 3D-UMi 3/4 dB). This model does not
apply that 7 dB: 3D-UMa and 3D-UMi indoor users draw the σ of their link's LOS or NLOS
state and no O2I spread, as TR 38.901's treatment would give them. With the 7 dB,
3D-UMa's 5th percentile of coupling loss comes within 0.4 dB of 3GPP's calibration and
3D-UMi's median falls 1.0–1.5 dB below it (docs/calibration.md, "The O2I spread of TR
36.873").

The shadowing is correlated between sites as the radio model's ``site_correlation``
says, and in space over the scenario's decorrelation distance of each state
(``spatially_correlated``; the marginal distributions, and hence every CDF of a
calibration, do not depend on it).
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from scipy.spatial import cKDTree

from cellopt.checks import check_real
from cellopt.errors import ValidationError, describe_rows
from cellopt.parameters import register_choice
from cellopt.radio import tr38901
from cellopt.radio.interface import Links
from cellopt.radio.shadowing import standard_normal_hash, uniform_hash

if TYPE_CHECKING:
    from cellopt.network import Network
    from cellopt.radio.model import RadioModel

__all__ = ["LOS_STATES", "USUAL_BS_HEIGHT_M", "ThreeGPP", "UserDraws", "scenario_options",
           "warn_pair_distances"]

#: How a :class:`ThreeGPP` model sets each link's LOS state: drawn from the scenario's
#: LOS probability, forced (for tests and bounds), or averaged over (``"expected"``: the
#: mean received power over the state, for median coverage maps, :mod:`cellopt.coverage`).
LOS_STATES = ("random", "los", "nlos", "expected")
register_choice("los", LOS_STATES)

#: The antenna height of each scenario's calibration [m] (TR 38.901 Table 7.4.1-1, TR 36.873
#: Table 6-1), used only by :meth:`ThreeGPP.mean_loss_db`.
USUAL_BS_HEIGHT_M = {"uma": 25.0, "umi": 10.0, "rma": 35.0, "inh_mixed": 3.0, "inh_open": 3.0,
                     "3d_uma": 25.0, "3d_umi": 10.0}

# Hash streams of the random quantities (independent of each other and of stream 0, the
# shadowing's).
_FLOORS, _FLOOR, _WALL_1, _WALL_2, _BUILDING, _O2I, _LOS, _HE_CHOICE, _HE_HEIGHT = range(1, 10)
#: The site index that keys a user's own draws (far beyond any real site index).
_USER = 2**62 + 1

#: Scenarios whose users are outdoors or in buildings reached from outside (O2I applies
#: to their indoor users); the InH scenarios' users share the building with the cells.
_OUTDOOR = ("uma", "umi", "rma", "3d_uma", "3d_umi")
#: Scenarios whose indoor users follow the floor model (TR 38.901 Table 7.2-1, TR 36.873
#: Table 6-1).
_FLOOR_MODEL = ("uma", "umi", "3d_uma", "3d_umi")


#: Why a scenario does not use an option of :class:`ThreeGPP` that only some use.
_UNUSED_WHY = {
    "indoor_floors": "the floor model of indoor users is UMa's, UMi's, 3D-UMa's and 3D-UMi's",
    "high_loss_fraction": "the low- and high-loss buildings are TR 38.901's O2I model of UMa, "
                          "UMi and RMa; TR 36.873 has one O2I loss, InH none",
    "max_indoor_distance_m": "InH users share the building with the cells: no O2I loss",
}


def scenario_options(scenario: str, *, unused: bool = False) -> tuple[str, ...]:
    """The options of :class:`ThreeGPP` that `scenario` uses (besides ``scenario``), or,
    with `unused`, those it does not use (they must stay at their defaults).

    Parameters
    ----------
    scenario : str
        One of :data:`cellopt.radio.tr38901.SCENARIOS`.
    unused : bool
        List the options the scenario does not use instead.

    Returns
    -------
    tuple of str
        Field names of :class:`ThreeGPP`.
    """
    uses = {"indoor_floors": scenario in _FLOOR_MODEL,
            "high_loss_fraction": scenario in ("uma", "umi", "rma"),
            "max_indoor_distance_m": scenario in _OUTDOOR}
    names = [f.name for f in dataclasses.fields(ThreeGPP) if f.name != "scenario"]
    return tuple(n for n in names if uses.get(n, True) != unused)


@dataclasses.dataclass(frozen=True)
class ThreeGPP:
    """A 3GPP 3-D large-scale model for one tier's links (module docstring).

    Parameters
    ----------
    scenario : str
        One of :data:`cellopt.radio.tr38901.SCENARIOS`: ``"uma"``, ``"umi"``, ``"rma"``,
        ``"inh_mixed"``, ``"inh_open"`` (TR 38.901) or ``"3d_uma"``, ``"3d_umi"``
        (TR 36.873).
    frequency_ghz : float
        Carrier frequency [GHz], required (TR 38.901: 0.5–100 GHz, RMa to 30 GHz;
        TR 36.873: 2–6 GHz, :data:`~cellopt.radio.tr38901.VALIDITY`).
    user_height_m : float
        Height of outdoor users, and of indoor users where the floor model does not
        apply [m] (1.5 m; 1 m for InH in TR 38.901 Table 7.8-1).
    indoor_floors : bool
        Indoor users of UMa, UMi, 3D-UMa and 3D-UMi are on a random floor (module
        docstring); False puts them at `user_height_m`.
    high_loss_fraction : float
        Share, in [0, 1], of indoor users whose building follows TR 38.901's high-loss
        O2I model (IRR glass and concrete); the others follow the low-loss model. TR 36.873
        scenarios use their own 20 dB + 0.5 d_in and ignore this.
    max_indoor_distance_m : float
        d_2D-in is the smaller of two uniforms on [0, this] (25 m, TR 38.901 §7.4.3.1;
        TR 36.873 draws one uniform on [0, 25 m]).
    los : {"random", "los", "nlos", "expected"}
        Draw each link's state from the LOS probability (default), or force one.
        ``"expected"``: no state is drawn; the link's loss is that of its mean received
        power over the state, ``−10 log10(p 10^(−PL_LOS/10) + (1 − p) 10^(−PL_NLOS/10))``
        with p the LOS probability (at the distance outside the building for indoor
        users), and for UMa and 3D-UMa also the mean over the effective environment
        height h_E (:func:`~cellopt.radio.tr38901.uma_effective_height_pmf`; h_E = 1 m
        for users below 13 m, as outdoor users at 1.5 m are). A deterministic loss, for
        median coverage maps (:func:`cellopt.coverage.coverage_map`); it needs
        ``shadowing=False`` (the shadowing σ depends on the state it averages over).
        Indoor users keep their drawn O2I loss.
    shadowing : bool
        Add the log-normal shadowing of each link's state (default); False gives the
        median path loss (for hand checks and coverage of the mean).
    spatially_correlated : bool
        A site's shadowing is a field in the plane with the scenario's decorrelation
        distance for each state (TR 38.901 Table 7.5-6: UMa 37 / 50 m, UMi 10 / 13 m,
        InH 10 / 6 m, RMa 37 / 120 m LOS / NLOS; TR 36.873 Table 7.3-6), so that users
        a few metres apart see nearly the same value
        (:func:`~cellopt.radio.shadowing.spatial_normal_hash`); False draws every user
        independently.
    shadowing_std_db : float, optional
        σ of the shadowing [dB] for every link, in place of the standard's σ of each
        state (:func:`~cellopt.radio.tr38901.shadow_std_db`); 0 draws none (as
        ``shadowing=False``). None (default): the standard's σ. The draws, their
        correlation and decorrelation distances stay the scenario's.

    Raises
    ------
    ValidationError
        An unknown scenario or LOS mode; a value that is not a number, or out of range;
        an option the scenario does not use (``indoor_floors`` in RMa and InH,
        ``high_loss_fraction`` in InH, 3D-UMa and 3D-UMi, ``max_indoor_distance_m`` in
        InH) at other than its default; a UT height the scenario cannot evaluate
        (:func:`~cellopt.radio.tr38901.check_validity`: e.g. 1 m in UMa, where the LOS
        breakpoint distance is 0). A carrier or UT height outside the scenario's stated
        range warns (:data:`~cellopt.radio.tr38901.VALIDITY`); so do, when the model is
        bound to a network, cell heights and user–cell distances outside it.
    """

    scenario: str
    frequency_ghz: float = None  # type: ignore[assignment]  # required: refused if left out
    user_height_m: float = 1.5
    indoor_floors: bool = True
    high_loss_fraction: float = 0.5
    max_indoor_distance_m: float = 25.0
    los: str = "random"
    shadowing: bool = True
    spatially_correlated: bool = True
    shadowing_std_db: float | None = None

    #: Its loss holds its own shadowing and O2I loss (:class:`~cellopt.radio.Propagation`).
    includes_fading: ClassVar[bool] = True
    #: Its antenna is the radio model's.
    includes_antenna: ClassVar[bool] = False
    #: The cell enters only through its site, position and height.
    per_site: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.scenario not in tr38901.SCENARIOS:
            raise ValidationError(f"ThreeGPP.scenario={self.scenario!r} is not a 3GPP scenario; "
                                  f"fix: use one of {list(tr38901.SCENARIOS)}")
        if self.los not in LOS_STATES:
            raise ValidationError(f"ThreeGPP.los={self.los!r}; fix: use one of {list(LOS_STATES)}")
        if self.los == "expected" and self.shadowing is not False:
            raise ValidationError("ThreeGPP.los='expected' averages the received power over the "
                                  "LOS state, but the shadowing σ depends on that state; fix: "
                                  "give shadowing=False with it (a median map), or los='random'")
        if self.frequency_ghz is None:
            raise ValidationError(f"ThreeGPP.frequency_ghz is missing: scenario "
                                  f"{self.scenario!r} needs the carrier frequency; fix: give it "
                                  f"in GHz, e.g. ThreeGPP({self.scenario!r}, frequency_ghz=3.5) "
                                  "(scenario files: [radio] frequency_ghz = 3.5)")
        # the scenario's own ranges warn (check_validity below), not the catalogue's
        object.__setattr__(self, "frequency_ghz", check_real(
            self.frequency_ghz, "ThreeGPP.frequency_ghz", "frequency_ghz", warn=False))
        object.__setattr__(self, "user_height_m", check_real(
            self.user_height_m, "ThreeGPP.user_height_m", "user_height_m", warn=False))
        object.__setattr__(self, "high_loss_fraction", check_real(
            self.high_loss_fraction, "ThreeGPP.high_loss_fraction", "indoor_fraction"))
        object.__setattr__(self, "max_indoor_distance_m", check_real(
            self.max_indoor_distance_m, "ThreeGPP.max_indoor_distance_m", "max_indoor_distance_m"))
        for name in ("indoor_floors", "shadowing", "spatially_correlated"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValidationError(f"ThreeGPP.{name}={getattr(self, name)!r}; fix: give True "
                                      "or False")
        if self.shadowing_std_db is not None:
            object.__setattr__(self, "shadowing_std_db", check_real(
                self.shadowing_std_db, "ThreeGPP.shadowing_std_db", "shadowing_std_db"))
            if self.shadowing_std_db > 0 and not self.shadowing:
                raise ValidationError(
                    f"ThreeGPP.shadowing_std_db={self.shadowing_std_db:g} dB asks for shadowing "
                    "that shadowing=False turns off; fix: leave shadowing_std_db out (None), "
                    "give 0, or shadowing=True")
        unused = [name for name in scenario_options(self.scenario, unused=True)
                  if getattr(self, name) != _DEFAULTS[name]]
        if unused:
            raise ValidationError(
                f"ThreeGPP {unused} {'is' if len(unused) == 1 else 'are'} not used by scenario "
                f"{self.scenario!r} ({_UNUSED_WHY[unused[0]]}); fix: leave "
                f"{'it' if len(unused) == 1 else 'them'} at the default")
        tr38901.check_validity(self.scenario, frequency_ghz=self.frequency_ghz,
                               h_ut_m=self.user_height_m, what="users",
                               labels={"h_ut_m": "ThreeGPP.user_height_m"}, stacklevel=3)

    @property
    def outdoor_to_indoor(self) -> bool:
        """Whether indoor users pay an O2I loss (all scenarios but InH)."""
        return self.scenario in _OUTDOOR

    def mean_loss_db(self, distance_m: np.ndarray) -> np.ndarray:
        """The mean coupling loss [dB] at 2-D `distance_m` of an outdoor user at
        `user_height_m` and a cell at the scenario's usual height
        (:data:`USUAL_BS_HEIGHT_M`): ``−10 log10 E[10^(−(PL + S)/10)]`` over the LOS state
        and the log-normal shadowing S of each state.

        This is the 2-D view of the model that the far field integrates
        (:mod:`cellopt.radio.far_field`), the shadowing's mean included.
        """
        d2 = np.asarray(distance_m, dtype=float)
        h_bs, h_ut = USUAL_BS_HEIGHT_M[self.scenario], self.user_height_m
        d3 = np.sqrt(d2 * d2 + (h_bs - h_ut) ** 2)
        p_los = {"los": 1.0, "nlos": 0.0}.get(self.los)
        if p_los is None:
            p_los = tr38901.los_probability(self.scenario, d2, h_ut)
        mean = np.zeros_like(d2)
        for los, share in ((True, p_los), (False, 1.0 - p_los)):
            # the far field integrates beyond the links' distances: extrapolated, unwarned
            loss = tr38901.pathloss_db(self.scenario, d2, d3, h_bs, h_ut, self.frequency_ghz, los,
                                       warn=False)
            if self.shadowing:  # E[10^(−S/10)] = exp((σ ln 10 / 10)² / 2)
                sigma = self.shadow_std_db(los, d2, h_bs, h_ut)
                loss = loss - 0.5 * (sigma * np.log(10.0) / 10.0) ** 2 * 10.0 / np.log(10.0)
            mean = mean + share * 10.0 ** (-loss / 10.0)
        return -10.0 * np.log10(mean)

    def expected_loss_db(self, d2d_m: np.ndarray, d3d_m: np.ndarray, h_bs_m: np.ndarray,
                         h_ut_m: np.ndarray, d_out_m: np.ndarray | None = None) -> np.ndarray:
        """The path loss of the mean received power over the LOS state [dB] (``los="expected"``).

        ``−10 log10 Σ_h P(h_E = h) (p 10^(−PL_LOS(h)/10) + (1 − p) 10^(−PL_NLOS(h)/10))``,
        p the LOS probability at `d_out_m` (default `d2d_m`), PL_NLOS the NLOS loss
        (at least PL_LOS, :func:`~cellopt.radio.tr38901.pathloss_db`), h_E only for UMa
        and 3D-UMa (1 m elsewhere and for users below 13 m). No shadowing, no O2I loss.

        Parameters
        ----------
        d2d_m, d3d_m : ndarray
            2-D and 3-D distances [m] (the 2-D ones raised to the tier's minimum).
        h_bs_m, h_ut_m : ndarray
            Cell and user heights [m]; all four broadcast.
        d_out_m : ndarray, optional
            The 2-D distance outside the building, for the LOS probability [m].

        Returns
        -------
        ndarray
            Loss [dB], the broadcast shape.
        """
        d_out = d2d_m if d_out_m is None else d_out_m
        p = tr38901.los_probability(self.scenario, d_out, h_ut_m)
        shape = np.broadcast_shapes(np.shape(d2d_m), np.shape(d3d_m), np.shape(h_bs_m),
                                    np.shape(h_ut_m), np.shape(p))
        if self.scenario in ("uma", "3d_uma"):
            heights, weights = tr38901.uma_effective_height_pmf(d2d_m, h_ut_m)
        else:
            heights, weights = np.ones(1), np.ones((1,))
        mean = np.zeros(shape)
        for h_e, w in zip(heights, weights, strict=True):  # a handful of heights, 1 m mostly
            extra = {"h_e_m": np.full(shape, h_e)} if self.scenario in ("uma", "3d_uma") else {}
            received = 0.0
            for los, share in ((True, p), (False, 1.0 - p)):
                loss = tr38901.pathloss_db(self.scenario, d2d_m, d3d_m, h_bs_m, h_ut_m,
                                           self.frequency_ghz, los, warn=False, **extra)
                received = received + share * 10.0 ** (-loss / 10.0)
            mean = mean + np.where(w > 0, w * received, 0.0)
        return -10.0 * np.log10(mean)

    def shadow_std_db(self, los: np.ndarray | bool, d2d_m: np.ndarray, h_bs_m: np.ndarray,
                      h_ut_m: np.ndarray) -> np.ndarray:
        """σ of each link's shadowing [dB]: `shadowing_std_db` if given, else the standard's
        σ of its state (:func:`~cellopt.radio.tr38901.shadow_std_db`)."""
        if self.shadowing_std_db is not None:
            return np.full(np.shape(los), self.shadowing_std_db)
        return tr38901.shadow_std_db(self.scenario, los, self.frequency_ghz, d2d_m=d2d_m,
                                     h_bs_m=h_bs_m, h_ut_m=h_ut_m)

    def decorrelation_m(self, los: bool) -> float:
        """The shadowing's decorrelation distance of a LOS or NLOS link [m]."""
        return float(tr38901.decorrelation_distance_m(self.scenario, los))

    def loss_db(self, links: Links) -> np.ndarray:
        """``PL + σ_state · S + O2I`` [dB] of each link (:class:`~cellopt.radio.Propagation`).

        The cell enters only through its site, position and height (``per_site``): the
        radio model computes one sector per site and copies it to the others.

        Parameters
        ----------
        links : Links
            The links; ``links.draws`` holds the users' heights and O2I draws
            (:meth:`draw_users`), and ``links.shadowing`` is called once per LOS state
            if `spatially_correlated`.

        Returns
        -------
        ndarray
            Loss without the antenna [dB], the broadcast shape.
        """
        draws, users, sites = links.draws, links.users, links.sites
        d2d_m, h_bs_m = links.distance_m, links.cell_height_m
        h_ut = draws.height_m[users]
        d_in = draws.indoor_distance_m[users] if self.outdoor_to_indoor else 0.0
        indoor = draws.indoor[users] if self.outdoor_to_indoor else False
        d3d = np.sqrt(d2d_m * d2d_m + (h_bs_m - h_ut) ** 2)
        if self.los == "expected":
            d_out = np.maximum(d2d_m - np.where(indoor, d_in, 0.0), 0.0)
            loss = self.expected_loss_db(d2d_m, d3d, h_bs_m, h_ut, d_out)
            if self.outdoor_to_indoor and draws.any_indoor:
                loss = loss + draws.o2i_db(self)[users]
            return loss
        if self.los == "random":
            d_out = np.maximum(d2d_m - np.where(indoor, d_in, 0.0), 0.0)
            p = tr38901.los_probability(self.scenario, d_out, h_ut)
            los = uniform_hash(draws.seed, users, sites, _LOS) < p
        else:
            los = np.full(np.broadcast_shapes(np.shape(users), np.shape(sites)), self.los == "los")
        extra = {}
        if self.scenario in ("uma", "3d_uma"):
            extra["h_e_m"] = tr38901.uma_effective_height_m(
                d2d_m, h_ut, uniform_hash(draws.seed, users, sites, _HE_CHOICE),
                uniform_hash(draws.seed, users, sites, _HE_HEIGHT))
        # the ranges were checked once, when the model was made and bound (bind)
        loss = tr38901.pathloss_db(self.scenario, d2d_m, d3d, h_bs_m, h_ut, self.frequency_ghz,
                                   los, warn=False, **extra)
        if self.shadowing:
            if self.spatially_correlated:  # each state's field, where the links have it
                z = np.empty(los.shape)
                z[los] = links.shadowing(self.decorrelation_m(True), los)
                z[~los] = links.shadowing(self.decorrelation_m(False), ~los)
            else:
                z = links.shadowing(0.0, None)
            loss = loss + z * self.shadow_std_db(los, d2d_m, h_bs_m, h_ut)
        if self.outdoor_to_indoor and draws.any_indoor:
            loss = loss + draws.o2i_db(self)[users]
        return loss

    def bind(self, network: Network, cells: np.ndarray, radio: RadioModel) -> ThreeGPP:
        """The model itself, once the heights of its cells (rows `cells`) are checked:
        above 1 m, the environment height the breakpoint distance subtracts.

        Cell heights, and the 2-D distances of the network's user–cell pairs (raised to
        the tier's ``min_distance_m``, as the links are), outside the scenario's stated
        range warn once (:func:`~cellopt.radio.tr38901.check_validity`)."""
        height = network.cells["height_m"].to_numpy(float)[cells]
        low = np.asarray(cells)[height <= 1.0]
        if len(low):
            raise ValidationError(
                f"cells {describe_rows(low)} follow a 3GPP model but their height_m is 1 m or "
                "less, at or below the environment height the model's breakpoint subtracts; "
                "fix: give the antenna heights in metres (TR 38.901: 25 m UMa, 10 m UMi, 3 m "
                "InH)")
        if self.scenario in ("uma", "3d_uma"):  # h_E reaches h_UT − 1.5 m for users ≥ 13 m
            top_ut = self.user_height_m
            if self.indoor_floors and network.n_users and network.users["indoor"].any():
                top_ut = max(top_ut, _TOP_FLOOR_M)
            top_e = float(tr38901.uma_effective_height_pmf(100.0, top_ut)[0].max())
            low = np.asarray(cells)[height <= top_e]
            if len(low):
                raise ValidationError(
                    f"cells {describe_rows(low)} follow {self.scenario!r} at a height_m at or "
                    f"below {top_e:g} m, an effective environment height h_E it draws for users "
                    f"up to {top_ut:g} m high (TR 38.901 Table 7.4.1-1 note 1), where the LOS "
                    "breakpoint distance 4 (h_BS − h_E)(h_UT − h_E) f_c / c is 0 or negative; "
                    "fix: give them the scenario of their height (e.g. propagation = {macro = "
                    "\"uma\", pico = \"umi\"}), or UMa's antenna height, 25 m")
        tr38901.check_validity(self.scenario, h_bs_m=height, what="cells", stacklevel=4,
                               labels={"h_bs_m": "the cells' height_m"})
        self.warn_distances(network, cells, radio, stacklevel=4)
        return self

    def warn_distances(self, network: Network, cells: np.ndarray, radio: RadioModel,
                       user_xy: np.ndarray | None = None, what: str = "user–cell pairs",
                       stacklevel: int = 2) -> None:
        """Warn once if 2-D distances from the cells at rows `cells` (raised to their tier's
        ``min_distance_m``, as the links are) are outside the scenario's stated range
        (:data:`~cellopt.radio.tr38901.VALIDITY`; :func:`warn_pair_distances` gives the
        arguments)."""
        warn_pair_distances(tr38901.VALIDITY[self.scenario], network, cells, radio, user_xy,
                            what, stacklevel + 1)

    def draw_users(self, seed: int, indoor: np.ndarray) -> UserDraws:
        """The users' heights and O2I draws (:meth:`UserDraws.draw`), which every 3GPP
        tier of a network shares."""
        return UserDraws.draw(seed, indoor, self)

    def indoor_loss_db(self, draws: UserDraws) -> np.ndarray:
        """Each user's O2I loss under this model [dB] (0 outdoors and in InH), shape (n,)."""
        if not self.outdoor_to_indoor:
            return np.zeros(len(draws.indoor))
        return draws.o2i_db(self)

    def median(self) -> ThreeGPP:
        """The model of a median map: no shadowing and, where the LOS state is drawn,
        the loss of the mean received power over it (``los="expected"``); a state that
        is forced stays so. Its carrier and user height were warned about when this model
        was made: the copy does not warn again."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return dataclasses.replace(self, shadowing=False,
                                       los="expected" if self.los == "random" else self.los)


@dataclasses.dataclass(frozen=True)
class UserDraws:
    """The per-user random quantities of the 3GPP models (module docstring), shape (n,).

    Attributes
    ----------
    seed : int
        The shadowing seed that keys every draw.
    indoor : ndarray of bool
        The users' ``indoor`` column.
    height_m : ndarray
        User heights [m].
    indoor_distance_m : ndarray
        d_2D-in [m] (drawn for every user, used for indoor ones).
    high_loss : ndarray of bool
        Indoor users in high-loss buildings.
    o2i_normal : ndarray
        The N(0, 1) term of the O2I loss.
    any_indoor : bool
        Whether any user is indoors.
    """

    seed: int
    indoor: np.ndarray
    height_m: np.ndarray
    indoor_distance_m: np.ndarray
    high_loss: np.ndarray
    o2i_normal: np.ndarray
    any_indoor: bool = False
    _o2i: dict = dataclasses.field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def draw(cls, seed: int, indoor: np.ndarray, model: ThreeGPP) -> UserDraws:
        """The draws of every user of a network for `model` (its height and O2I settings).

        Parameters
        ----------
        seed : int
            Shadowing seed.
        indoor : ndarray of bool, shape (n,)
        model : ThreeGPP
        """
        n = len(indoor)
        users = np.arange(n)

        def u(stream: int) -> np.ndarray:
            return uniform_hash(seed, users, _USER, stream)

        height = np.full(n, model.user_height_m)
        if model.indoor_floors and model.scenario in _FLOOR_MODEL:
            floors = tr38901.indoor_floor_height_m(u(_FLOORS), u(_FLOOR))
            height = np.where(indoor, floors, height)
        if model.scenario in ("3d_uma", "3d_umi"):
            d_in = tr38901.indoor_distance_m(u(_WALL_1), None, model.max_indoor_distance_m)
        else:
            d_in = tr38901.indoor_distance_m(u(_WALL_1), u(_WALL_2), model.max_indoor_distance_m)
        indoor = np.asarray(indoor, bool)
        return cls(seed=int(seed), indoor=indoor, any_indoor=bool(indoor.any()), height_m=height,
                   indoor_distance_m=d_in, high_loss=u(_BUILDING) < model.high_loss_fraction,
                   o2i_normal=standard_normal_hash(seed, users, _USER, _O2I))

    def o2i_db(self, model: ThreeGPP) -> np.ndarray:
        """The O2I loss of every user under `model` [dB], shape (n,) (0 where outdoors);
        computed once per model, then kept."""
        if model not in self._o2i:
            self._o2i[model] = self._o2i_db(model)
        return self._o2i[model]

    def _o2i_db(self, model: ThreeGPP) -> np.ndarray:
        if model.scenario in ("3d_uma", "3d_umi"):
            loss = tr38901.o2i_loss_db("36873", model.frequency_ghz, self.indoor_distance_m,
                                       self.o2i_normal)
        else:
            low = tr38901.o2i_loss_db("low", model.frequency_ghz, self.indoor_distance_m,
                                      self.o2i_normal)
            high = tr38901.o2i_loss_db("high", model.frequency_ghz, self.indoor_distance_m,
                                       self.o2i_normal)
            loss = np.where(self.high_loss, high, low)
        return np.where(self.indoor, loss, 0.0)


def warn_pair_distances(validity: tr38901.Validity, network: Network, cells: np.ndarray,
                        radio: RadioModel, user_xy: np.ndarray | None = None,
                        what: str = "user–cell pairs", stacklevel: int = 2) -> None:
    """Warn once if 2-D distances from the cells at rows `cells` (raised to their tier's
    ``min_distance_m``, as the links are) are outside the distance range of `validity`,
    counting the pairs outside (:meth:`~cellopt.radio.tr38901.Validity.outside`).

    Parameters
    ----------
    validity : Validity
        The model's stated ranges (:data:`~cellopt.radio.tr38901.VALIDITY` of a scenario,
        or another model's).
    network : Network
        The cells (and their wraparound), and the users unless `user_xy` is given.
    cells : ndarray of int
        Row positions of the cells that follow the model.
    radio : RadioModel
        For the tiers' minimum distances.
    user_xy : ndarray, shape (n, 2), optional
        Positions [m] to count instead of the network's users (e.g. a coverage map's
        pixel centres).
    what : str
        What the pairs are, for the message.
    stacklevel : int
        Of the warning: 2 points at the caller.
    """
    if user_xy is None:
        users = network.user_arrays()
        user_xy = np.column_stack([users["x_m"], users["y_m"]])
    if not len(user_xy):
        return
    cells = np.asarray(cells)
    floor = radio.per_tier("min_distance_m")[network.cell_arrays()["tier"][cells]]
    lo, hi = validity.distance_range_m(None)
    n_out, n_all, seen = _pairs_outside(network, np.asarray(user_xy, float), cells, floor, lo, hi)
    if n_out:
        warnings.warn(validity.outside("distance", n_out, n_all, seen, what), UserWarning,
                      stacklevel=stacklevel + 1)


#: The highest floor of the indoor floor model [m] (:func:`~cellopt.radio.tr38901.indoor_floor_height_m`).
_TOP_FLOOR_M = 22.5
#: ThreeGPP's defaults, which the options a scenario does not use must keep.
_DEFAULTS = {f.name: f.default for f in dataclasses.fields(ThreeGPP)}
#: User–position pairs compared at once when counting the distances of a wrapped layout.
_PAIR_BLOCK = 1 << 20


def _pairs_outside(network: Network, user_xy: np.ndarray, cells: np.ndarray, floor_m: np.ndarray,
                   lo_m: float, hi_m: float) -> tuple[int, int, tuple[float, float]]:
    """How many pairs of the users at `user_xy` and the `cells` of `network` have a 2-D
    distance (raised to each cell's `floor_m`, the tier's minimum distance) outside
    [lo_m, hi_m], of how many, and the smallest and largest of those outside (NaN where a
    k-d tree counted them).

    Cells at one position count once per cell. A wrapped layout (its nearest images, as
    the links) is counted exactly in blocks; an open one through a k-d tree of the users.
    """
    c = network.cell_arrays()
    xy_floor = np.column_stack([c["x_m"][cells], c["y_m"][cells], floor_m])
    positions, count = np.unique(xy_floor, axis=0, return_counts=True)
    n_all = len(user_xy) * len(cells)
    shifts = network.wrap_shifts_m
    if shifts is None:
        tree = cKDTree(user_xy)
        within_hi = tree.query_ball_point(positions[:, :2], hi_m, return_length=True)
        # below lo_m only where the floor is below it (distances are raised to the floor)
        below = np.where(positions[:, 2] < lo_m, tree.query_ball_point(
            positions[:, :2], np.nextafter(lo_m, 0.0), return_length=True), 0)
        n_out = int(np.sum(count * (len(user_xy) - within_hi + below)))
        return n_out, n_all, (np.nan, np.nan)
    n_out, seen_lo, seen_hi = 0, np.inf, -np.inf
    step = max(1, _PAIR_BLOCK // (len(positions) * len(shifts)))
    for start in range(0, len(user_xy), step):  # blocks of users, a few in a wrapped layout
        part = user_xy[start:start + step]
        dx = part[:, None, None, 0] - positions[None, :, None, 0] - shifts[None, None, :, 0]
        dy = part[:, None, None, 1] - positions[None, :, None, 1] - shifts[None, None, :, 1]
        d = np.maximum(np.sqrt((dx * dx + dy * dy).min(axis=2)), positions[None, :, 2])
        bad = (d < lo_m) | (d > hi_m)
        if bad.any():
            n_out += int((bad * count[None, :]).sum())
            seen_lo, seen_hi = min(seen_lo, float(d[bad].min())), max(seen_hi, float(d[bad].max()))
    return n_out, n_all, ((seen_lo, seen_hi) if n_out else (np.nan, np.nan))
