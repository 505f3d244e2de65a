"""The one result type every solver returns."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from cellopt.network import Fingerprint
from cellopt.problem import Problem
from cellopt.status import STATUSES, SUCCESSFUL

__all__ = ["STATUSES", "PowerResult", "Solution"]


@dataclasses.dataclass(frozen=True, eq=False)
class PowerResult:
    """The power part of a :func:`~cellopt.power.solve_power` answer (``Solution.power``).

    Attributes
    ----------
    patterns : ndarray, shape (n_patterns, n_cells)
        Transmit power of every cell in every pattern of the final master [dBm, −inf =
        off].
    pattern_share : ndarray, shape (n_patterns,)
        θ_s, the share of the band each pattern gets (Σ = 1).
    cell_power_dbm : ndarray, shape (n_cells,)
        Average transmit power ``10 log10 Σ_s θ_s p_js`` [dBm].
    energy_w : float
        Σ_j Σ_s θ_s p_js, the network's average transmit power [W].
    bound_kind : {"exact", "relaxed"} or None
        Which joint bound ``Solution.upper_bound`` is (None: none computed).
    bound_info : dict
        What the bound is (``kind``, for a relaxed bound ``relaxation``,
        ``cluster_cells``, ...; ``certifies``: ``"physical model"``; ``lumped``: cells
        beyond the gain tables were lumped) and the factors by which every user's rate
        would have to grow to reach it (``bound_factor``, 1 + gap) and the estimate
        (``estimate_factor``).
    estimate : float
        The Lagrangian estimate of the joint optimum [utility] (not a bound: it measures
        how far column generation is from converged).
    history : pandas.DataFrame
        One row per column-generation iteration: ``iteration, n_patterns, objective,
        estimate, bound, n_new, pricing, inner_iterations, inner_time_s, search_time_s,
        time_s``.
    master : Problem
        The association problem over the final patterns that ``Solution.x`` is over:
        resource k is pattern ``patterns[k]`` (its share of the band
        ``pattern_share[k]``); its links carry that pattern's rates and SINRs.
        :meth:`cellopt.Drop.frames` reads it.
    stop : str
        Why column generation stopped, in words (what ended it, after how many
        iterations), and what the bounds then said; :func:`cellopt.power.explain_stop`.
    network_fingerprint : Fingerprint or None
        The :attr:`PowerProblem.network_fingerprint <cellopt.power.PowerProblem>` of the
        problem solved (None for a problem made by hand): what a schedule built from this
        answer checks its problem against.
    """

    patterns: np.ndarray
    pattern_share: np.ndarray
    cell_power_dbm: np.ndarray
    energy_w: float
    bound_kind: str | None
    bound_info: dict[str, Any]
    estimate: float
    history: pd.DataFrame
    master: Problem
    stop: str = ""
    network_fingerprint: Fingerprint | None = None



@dataclasses.dataclass(eq=False)
class Solution:
    """A feasible answer to a :class:`~cellopt.Problem`, with its certificate.

    Every method fills every field; `upper_bound` and `gap` are None only when a method
    computed no bound.

    Attributes
    ----------
    status : str
        One of :data:`~cellopt.status.STATUSES` (constants in :mod:`cellopt.status`).
    message : str
    method : str
    utility : float
        Σ_i w_i U(r_i).
    cost : float
        Σ_j c_j T_j, the payment for third-party capacity.
    energy_cost : float
        Σ_s θ_s E_s, the price of the energy the pattern shares use (0 at fixed power).
    objective : float
        utility − cost − energy_cost.
    upper_bound : float or None
        ≥ the optimum: g(μ, ν) from the dual function at the reported prices; see
        `bound_kind` for which problem it bounds.
    gap : float or None
        The rate-equivalent gap c − 1: every user's rate × c (same payments) would reach
        `upper_bound` (:func:`~cellopt.solvers.certificate.certified_gap`); ≤ tol certifies that
        no allocation gives everyone more than (1 + tol) times these rates.
    n_iter : int
    wall_s : float
    history : pandas.DataFrame
        One row per iteration: ``iteration, objective, upper_bound, gap`` and the
        method's residuals.
    x : ndarray, shape (L,)
        Share of its resource given on each link of the problem.
    user_rate_mbps : ndarray, shape (n_users,)
    cell_airtime : ndarray, shape (n_cells, n_resources)
        Σ of shares per cell and resource (≤ 1).
    cell_traffic_mbps : ndarray, shape (n_cells,)
        T_j (≤ C_j).
    prices : dict of ndarray
        ``"airtime"`` μ, shape (n_cells, n_resources) [utility per unit airtime];
        ``"backhaul"`` ν, shape (n_cells,) [utility per Mbit/s].
    serving_cell : ndarray of int64, shape (n_users,)
        The cell carrying most of each user's rate (−1: none).
    exceeded_backhaul : ndarray of int64
        Cells whose backhaul cap the method's own choice exceeded before the rates were
        scaled down to fit (baselines only; empty for the optimizers).
    pattern_share : ndarray, shape (n_resources,), or None
        θ_s, the share of the band each power pattern gets (Σ = 1), where the problem's
        resources are patterns with free shares; None for fixed resources.
    cell_payment : ndarray, shape (n_cells,), or None
        c_j T_j: what each cell's owner is paid (a third-party femtocell's revenue)
        [utility]; Σ = `cost`.
    offload_share : float or None
        Share of all traffic carried by third-party cells, Σ_{j third party} T_j / Σ_j T_j
        (0 with no traffic); None when the problem does not say who owns the cells.
    bound_kind : str or None
        What `upper_bound` bounds: ``"problem"`` — the optimum of the problem as given
        (its links, powers or pattern set); ``"exact"`` — the joint power problem over
        every pattern (enumerated); ``"relaxed"`` — the joint power problem, through an
        optimistic relaxation (valid but loose); ``"fixed_loads"`` — the problem with
        the interference fixed at, and each cell's airtime capped by, the loads of
        ``load_coupling["solved_at"]`` (:func:`~cellopt.load_coupling.solve_load_coupled`);
        None — no bound.
    load_coupling : dict or None
        Set by load-coupled solves: ``load`` (n_cells,), each cell's load, equal to its
        airtime in this solution, at which ``rate_mbps`` and ``sinr_db`` (L,), the link
        rates and SINRs, are computed; ``solved_at`` (n_cells,), the loads of the last
        round's solve; ``rounds``; ``load_change`` (rounds,), the largest fall of a load
        in each round.
    power : PowerResult or None
        Power optimization only (:func:`~cellopt.power.solve_power`,
        :func:`~cellopt.power.solve_abs`, :func:`~cellopt.deploy.evaluate_schedule`): the
        one place of the power record (patterns [dBm], pattern shares, each cell's
        average power, energy [W], bound kind and info, estimate, column-generation
        history); None at fixed power.
    network_fingerprint : Fingerprint or None
        The :attr:`Problem.network_fingerprint <cellopt.Problem>` (or, for a power
        solution, the :class:`~cellopt.power.PowerProblem`'s) of the problem solved: which
        network's cells and users it is over. Functions that take a solution beside a
        drop (:meth:`cellopt.Drop.frames`, :func:`cellopt.coverage.coverage_map`,
        :func:`cellopt.deploy.evaluate` ``bound``, :func:`cellopt.deploy.cell_offsets`)
        refuse one of another network, even with the same counts. None for a problem
        made link by link.
    """

    status: str
    message: str
    method: str
    utility: float
    cost: float
    objective: float
    upper_bound: float | None
    gap: float | None
    n_iter: int
    wall_s: float
    history: pd.DataFrame
    x: np.ndarray
    user_rate_mbps: np.ndarray
    cell_airtime: np.ndarray
    cell_traffic_mbps: np.ndarray
    prices: dict[str, np.ndarray]
    serving_cell: np.ndarray
    exceeded_backhaul: np.ndarray
    energy_cost: float = 0.0
    pattern_share: np.ndarray | None = None
    bound_kind: str | None = None
    cell_payment: np.ndarray | None = None
    offload_share: float | None = None
    load_coupling: dict[str, Any] | None = None
    power: PowerResult | None = None
    network_fingerprint: Fingerprint | None = None

    @property
    def success(self) -> bool:
        """True when the method finished by its own rule (not a limit, a stop or a failure)."""
        return self.status in SUCCESSFUL

    def __repr__(self) -> str:
        ub = "None" if self.upper_bound is None else f"{self.upper_bound:.6g}"
        gap = "None" if self.gap is None else f"{self.gap:.2e}"
        return (f"Solution(method={self.method!r}, status={self.status!r}, "
                f"objective={self.objective:.6g}, upper_bound={ub}, gap={gap}, "
                f"n_iter={self.n_iter}, wall_s={self.wall_s:.3f})")
