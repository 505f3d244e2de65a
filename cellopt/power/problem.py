"""The joint power and association problem, built once.

:class:`PowerProblem` holds everything :func:`~cellopt.power.solve_power` reads: the
users' weights and demands, the cells' backhaul caps, prices, tiers and owners (read from
the network once, when the problem is built), the :class:`~cellopt.power.GainTable`, the
:class:`~cellopt.power.PatternSpace` (levels and energy prices) and the fairness α. Its
constructors validate at the boundary; the solver never reads the network again. The
power part of the answer is a :class:`~cellopt.solution.PowerResult` (``solution.power``).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from cellopt.checks import check_count, check_number
from cellopt.drop import Drop
from cellopt.errors import ValidationError, describe_rows
from cellopt.network import TIERS, Fingerprint, Network, check_same_network
from cellopt.power.gains import GainTable
from cellopt.power.patterns import Levels, PatternSpace, check_patterns
from cellopt.problem import Problem
from cellopt.radio.model import RadioModel

__all__ = ["ENERGY_RATIO_MAX", "ENERGY_RATIO_USUAL", "PowerProblem"]

#: Largest full-power energy cost per unit of the users' total weight that a
#: PowerProblem accepts: beyond it utilities vanish in rounding next to the energy terms.
ENERGY_RATIO_MAX = 1e9
#: Largest full-power energy cost per unit of the users' total weight that is usual: a
#: user's log-rate changes by about 0.7 per doubling of its rate, so at 10 × the total
#: weight energy outweighs any rate the cells give and the answer keeps them at their
#: lowest levels. Legal, but it warns (a price per mW given per W is 1000 × too large).
ENERGY_RATIO_USUAL = 10.0


@dataclasses.dataclass(frozen=True, eq=False)
class PowerProblem:
    """Joint power patterns, association and bandwidth: the data, read once.

    Build it with :meth:`from_drop` (a drop's network, with the gains its link table's
    model and seed give) or :meth:`from_network`; solve it with
    :func:`~cellopt.power.solve_power`.

    Attributes
    ----------
    gains : GainTable
        Each user's gains to its strongest cells, the rest lumped.
    space : PatternSpace
        The allowed levels of every cell [dBm] and the energy prices [utility per W].
    alpha : float
        α-fair utility (1: proportional fair).
    weight : ndarray, shape (n_users,)
        w_i, each user's utility weight.
    demand_mbps : ndarray, shape (n_users,)
        r̂_i, each user's rate cap [Mbit/s] (inf: none).
    backhaul_mbps : ndarray, shape (n_cells,)
        C_j, each cell's backhaul cap [Mbit/s] (inf: none).
    price_per_mbps : ndarray, shape (n_cells,)
        c_j, the price of each cell's traffic [utility per Mbit/s].
    cell_tier : ndarray of int8, shape (n_cells,)
        Each cell's tier as a code into :data:`cellopt.network.TIERS`.
    third_party : ndarray of bool, shape (n_cells,)
        Cells of a third-party owner.
    network_fingerprint : Fingerprint or None
        Which network's cells and users it holds (:attr:`Network.fingerprint
        <cellopt.network.Network.fingerprint>`, with a drop's usable users only); a
        :class:`~cellopt.deploy.Schedule` made from it records the cells' part. None for
        a problem made field by field.
    """

    gains: GainTable
    space: PatternSpace
    alpha: float
    weight: np.ndarray
    demand_mbps: np.ndarray
    backhaul_mbps: np.ndarray
    price_per_mbps: np.ndarray
    cell_tier: np.ndarray
    third_party: np.ndarray
    network_fingerprint: Fingerprint | None = None

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_drop(cls, drop: Drop, *, levels_db: Levels = (0.0, -10.0, None),
                  energy_price_per_w: float | np.ndarray = 0.0, n_interferers: int = 32,
                  alpha: float | None = None) -> PowerProblem:
        """The power problem of a drop's network, with the gains its link table implies.

        The gains come from :meth:`GainTable.from_drop` (the radio model, shadowing seed
        and candidate count of ``drop.links``), so the full-power rates are the link
        table's. The users, their weights and demands, and the cells' backhaul caps and
        prices are those of ``drop.problem``: the users with a usable link at full
        power (the others are reported at rate 0, as in every table of the drop; see
        docs/model.md, "Power patterns"), and the cells after any override of the
        drop's problem. A power solution's per-user arrays are then over the same users
        as every other solution of the drop (``drop.per_user``, ``drop.frames``).

        Parameters
        ----------
        drop : Drop
            Its link table made by :func:`cellopt.radio.link_table`.
        levels_db : sequence of float or None, or mapping tier -> sequence
            Allowed levels relative to each cell's ``tx_power_dbm`` [dB] (≤ 0), None =
            off; one list for every cell or one per tier of the network
            (``{"macro": [0, None], "pico": [0, -10]}``).
        energy_price_per_w : float or ndarray, shape (n_cells,)
            e_j [utility per W of transmit power, per unit share of the band], ≥ 0.
        n_interferers : int
            Cells whose power a pattern changes, per user; the others are lumped.
        alpha : float, optional
            α-fair utility; default ``drop.problem.alpha``.

        Raises
        ------
        ValidationError
            Naming the bad key and the fix: a level above 0 dB, an empty level list, a
            level list for a tier the network lacks (or none for one it has), a negative
            or non-finite energy price, a bad α, energy prices that dwarf the utilities,
            or a link table made by hand.
        """
        if not isinstance(drop, Drop):
            raise ValidationError(f"drop is a {type(drop).__name__}; fix: give a cellopt Drop "
                                  "(Scenario.build or Drop.from_network)")
        alpha = drop.problem.alpha if alpha is None else alpha
        network = drop.network
        _check_alpha(alpha)
        n_interferers = check_count(n_interferers, "n_interferers", minimum=1,
                                    fix="give a whole number of cells ≥ n_candidates")
        space = _space(network, levels_db, energy_price_per_w)
        if drop.problem.n_users == 0:
            raise ValidationError("the drop has no user with a usable link; fix: drop users "
                                  "within reach of the cells")
        gains = GainTable.from_drop(drop, n_interferers=n_interferers).take_users(drop.solvable)
        p = drop.problem
        n_cells = network.n_cells
        return cls(gains=gains, space=space, alpha=alpha, weight=p.weight, demand_mbps=p.demand_mbps,
                   backhaul_mbps=p.backhaul_mbps, price_per_mbps=p.price_per_mbps,
                   cell_tier=network.cell_arrays()["tier"] if p.cell_tier is None else p.cell_tier,
                   third_party=np.zeros(n_cells, bool) if p.third_party is None else p.third_party,
                   network_fingerprint=network.fingerprint_of_users(drop.solvable))._checked()

    @classmethod
    def from_network(
        cls,
        network: Network,
        *,
        levels_db: Levels = (0.0, -10.0, None),
        energy_price_per_w: float | np.ndarray = 0.0,
        n_candidates: int = 8,
        n_interferers: int = 32,
        model: RadioModel | None = None,
        rng: np.random.Generator | int | None = None,
        gains: GainTable | None = None,
        alpha: float = 1.0,
    ) -> PowerProblem:
        """The power problem of a network, its gains computed here or given.

        Parameters
        ----------
        network : Network
        levels_db, energy_price_per_w
            As for :meth:`from_drop`.
        n_candidates, n_interferers : int
            Candidate servers and power-controllable cells per user; see
            :meth:`GainTable.from_network`.
        model : RadioModel, optional
        rng : int or numpy.random.Generator, optional
            Shadowing seed (the same as :func:`~cellopt.radio.link_table` gives the same
            full-power rates).
        gains : GainTable, optional
            Precomputed gains of `network` (then `n_candidates`, `n_interferers`, `model`
            and `rng` are unused).
        alpha : float
            α-fair utility.

        Raises
        ------
        ValidationError
            As :meth:`from_drop`, and for `gains` of another network.
        """
        if not isinstance(network, Network):
            raise ValidationError(f"network is a {type(network).__name__}; fix: give a cellopt "
                                  "Network")
        network.validate()
        _check_alpha(alpha)
        n_candidates = check_count(n_candidates, "n_candidates", minimum=1,
                                   fix="give a whole number ≥ 1")
        n_interferers = check_count(n_interferers, "n_interferers", minimum=n_candidates,
                                    fix=f"give a whole number of cells ≥ n_candidates "
                                        f"({n_candidates})")
        if model is not None and not isinstance(model, RadioModel):
            raise ValidationError(f"model is a {type(model).__name__}; fix: give a RadioModel, "
                                  "or None")
        if gains is not None and not isinstance(gains, GainTable):
            raise ValidationError(f"gains is a {type(gains).__name__}; fix: give the GainTable of "
                                  "this network (GainTable.from_network), or None")
        space = _space(network, levels_db, energy_price_per_w)
        if gains is None:
            gains = GainTable.from_network(network, n_candidates=n_candidates,
                                           n_interferers=n_interferers, model=model, rng=rng)
        return cls.from_parts(network, gains, space, alpha)._checked()

    @classmethod
    def from_parts(cls, network: Network, gains: GainTable, space: PatternSpace,
                   alpha: float = 1.0) -> PowerProblem:
        """The problem of `network` with a gain table and pattern space made elsewhere.

        Reads the network's user and cell arrays once; checks only that the parts fit
        the network (:meth:`from_drop` and :meth:`from_network` check the rest): the
        same counts, and for a gain table that records its network
        (:attr:`GainTable.network_fingerprint`), the same cells and users (ids and
        positions).

        Raises
        ------
        ValidationError
            For parts of the wrong type, a bad α, a pattern space of other cells (counts,
            or cell ids and positions), or gains of another network (counts, or cell and
            user ids and positions), naming both.
        """
        for name, value, kind in (("network", network, Network), ("gains", gains, GainTable),
                                  ("space", space, PatternSpace)):
            if not isinstance(value, kind):
                raise ValidationError(f"{name} is a {type(value).__name__}; fix: give a "
                                      f"{kind.__name__}")
        _check_alpha(alpha)
        fix = "rebuild them with GainTable.from_network(network), or pass gains=None"
        if (gains.n_users, gains.n_cells) != (network.n_users, network.n_cells):
            raise ValidationError(f"gains were built for another network: the gain table has "
                                  f"{gains.n_users} users and {gains.n_cells} cells, the network "
                                  f"{network.n_users} and {network.n_cells}; fix: {fix}")
        check_same_network(gains.network_fingerprint, network.fingerprint,
                           ours_name="the gain table (gains)", theirs_name="the network",
                           fix=fix)
        if space.n_cells != network.n_cells:
            raise ValidationError(f"the pattern space has {space.n_cells} cells, the network "
                                  f"{network.n_cells}; fix: PatternSpace.from_network(network, ...)")
        check_same_network(space.network_fingerprint, network.fingerprint,
                           ours_name="the pattern space (space)", theirs_name="the network",
                           fix="PatternSpace.from_network(network, ...): its levels are offsets "
                               "from this network's cells' tx_power_dbm", cells_only=True)
        u, c = network.user_arrays(), network.cell_arrays()
        return cls(gains=gains, space=space, alpha=alpha, weight=u["weight"],
                   demand_mbps=u["demand_mbps"], backhaul_mbps=c["backhaul_mbps"],
                   price_per_mbps=c["price_per_mbps"], cell_tier=c["tier"],
                   third_party=c["third_party"], network_fingerprint=network.fingerprint)

    def _checked(self) -> PowerProblem:
        if self.alpha >= 1:  # a user no pattern gives a rate would have utility −inf
            g = self.gains
            n_c = g.n_candidates
            top_mw = 10.0 ** (self.space.level_dbm.max(axis=1) / 10.0)  # each cell's highest level
            # the best a pattern can do for a link: its cell at its highest level, every other
            # cell of the table off (the cells beyond it always count at full power)
            best = g.efficiency(g.gain_mw_per_mw[:, :n_c] * top_mw[g.cell[:, :n_c]]
                                / (g.noise_mw + g.background_mw[:, None]))
            stranded = np.flatnonzero(~(best > 0).any(axis=1))
            if len(stranded):
                raise ValidationError(
                    f"users {describe_rows(stranded)} of {self.n_users} have no candidate link "
                    "with a positive rate in any pattern (their cell at its highest level, every "
                    f"other cell off), so their utility would be −inf at alpha={self.alpha:g}; fix: "
                    "build the problem with PowerProblem.from_drop (a drop leaves users out of "
                    "reach out and reports them at rate 0), drop these users, or give more "
                    "n_candidates")
        full_cost = float(self.space.energy_cost(self.space.full_power())[0])
        total_weight = float(self.weight.sum())
        if full_cost > ENERGY_RATIO_MAX * max(total_weight, 1.0):
            raise ValidationError(
                f"energy_price_per_w makes full power cost {full_cost:.3g} utility per unit share, "
                f"more than {ENERGY_RATIO_MAX:.0e} × the users' total weight ({total_weight:.3g}): "
                "rounding, not the users, would decide the answer; fix: give the price in "
                "utility per W on the scale of the utilities (a user's log-rate changes by about "
                "0.7 per doubling of its rate)")
        if full_cost > ENERGY_RATIO_USUAL * max(total_weight, 1.0):
            warnings.warn(
                f"energy_price_per_w makes full power cost {full_cost:.3g} utility per unit share, "
                f"{full_cost / max(total_weight, 1.0):.3g} × the users' total weight "
                f"({total_weight:.3g}), above the usual {ENERGY_RATIO_USUAL:g} ×: energy outweighs "
                "every rate, so the answer keeps the cells at their lowest levels; legal, but "
                "check the unit (a price per mW given as per W is 1000 × too large); fix: give the price "
                "in utility per W of transmit power, e.g. 0.01 to 0.1", UserWarning, stacklevel=3)
        return self

    # ------------------------------------------------------------------ derived
    @property
    def n_users(self) -> int:
        return int(self.weight.shape[0])

    @property
    def n_cells(self) -> int:
        return int(self.backhaul_mbps.shape[0])

    @property
    def tier_names(self) -> np.ndarray:
        """Each cell's tier name, shape (n_cells,)."""
        return np.asarray(TIERS, dtype=object)[self.cell_tier]

    def master(self, patterns: np.ndarray, links_per_pattern: int | None = None) -> Problem:
        """The association problem over a fixed pattern set, with free pattern shares.

        Resource k of the problem is pattern ``patterns[k]``; link rates are the rates
        under that pattern over the whole band; ``pattern_cost`` is each pattern's energy
        cost. The input row of link (pattern k, user i, candidate c) is ``(k · n_users +
        i) · n_candidates + c``. With `links_per_pattern`, each user keeps only its
        fastest links in each pattern.

        Parameters
        ----------
        patterns : ndarray of int, shape (n_patterns, n_cells)
            Level indices into ``space.level_dbm``.
        links_per_pattern : int, optional
        """
        gains, space = self.gains, self.space
        patterns = check_patterns(space, patterns)
        if links_per_pattern is not None:
            links_per_pattern = check_count(links_per_pattern, "links_per_pattern", minimum=1,
                                            fix="give the fastest links kept per user and "
                                                "pattern, a whole number ≥ 1, or None (all)")
        n_s, n_u, n_c = len(patterns), gains.n_users, gains.n_candidates
        sinr = gains.sinr(space.power_mw(patterns))  # (S, U, n)
        rate = gains.bandwidth_mhz * gains.efficiency(sinr)
        if links_per_pattern is not None and links_per_pattern < n_c:
            rank = np.argsort(np.argsort(-rate, axis=2, kind="stable"), axis=2, kind="stable")
            rate = np.where(rank < links_per_pattern, rate, 0.0)
        return Problem.from_links(
            np.broadcast_to(np.arange(n_u)[None, :, None], rate.shape).ravel(),
            np.broadcast_to(gains.cell[None, :, :n_c], rate.shape).ravel(),
            rate.ravel(), n_users=n_u, n_cells=gains.n_cells,
            sinr_db=10.0 * np.log10(np.maximum(sinr, 1e-30)).ravel(),
            resource=np.broadcast_to(np.arange(n_s)[:, None, None], rate.shape).ravel(),
            n_resources=n_s, weight=self.weight, alpha=self.alpha, demand_mbps=self.demand_mbps,
            backhaul_mbps=self.backhaul_mbps, price_per_mbps=self.price_per_mbps,
            cell_tier=self.cell_tier, pattern_cost=space.energy_cost(patterns),
            third_party=self.third_party,
        )


def _check_alpha(alpha: Any) -> None:
    check_number(alpha, "alpha", low=0.0, fix="a fairness exponent ≥ 0 (1: proportional fair)")


def _space(network: Network, levels_db: Levels, energy_price_per_w: float | np.ndarray) -> PatternSpace:
    """The pattern space, with a level list for a tier the network lacks refused too."""
    if isinstance(levels_db, Mapping):
        present = set(network.cells["tier"])
        extra = sorted(t for t in levels_db if t in TIERS and t not in present)
        if extra:
            raise ValidationError(
                f"levels_db has level lists for tiers {extra}, which the network lacks; fix: "
                f"give lists only for the network's tiers {sorted(present)}")
    return PatternSpace.from_network(network, levels_db, energy_price_per_w)
