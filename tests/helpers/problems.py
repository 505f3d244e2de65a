"""Seeded test instances of the association problem, shared by the solver tests.

Import as ``from problems import one_cell, random_problem`` (pytest puts ``tests/`` on
``sys.path``, as for ``gap_oracle`` and ``small_scenario``).

:func:`random_problem` is the one random generator. Its ``kind`` names one of four
families of instances; each kind draws from the generator in a fixed order, so a seed
always gives the same instance (the tests' thresholds and "covers the hard cases"
counts depend on that):

``"drawn"``
    Everything drawn from the seed: 5–200 users, 1–10 cells, 1–3 resources, α cycling
    through (0.5, 1, 2) with the seed; 1–4 candidate cells per user on every resource;
    rates 5 · lognormal(0, 0.7); caps, prices and demands drawn independently of the
    optimum. (The ``dual`` tests.)
``"grouped"``
    Given sizes; each user has ``per_user`` distinct (cell, resource) links, not every
    resource of a cell; rates lognormal around 5 Mbit/s (σ = 1); fixed caps of 6 and 10
    Mbit/s on cells 0 and 1 with small demands for ~30 % of the users, and a price on the
    last cell. (The ``reference`` tests.)
``"radio"``
    Given sizes; each user sees ``n_cand`` distinct cells on every resource; RSRP, SINR
    (hence Shannon rates) and tiers are drawn, so the baselines run; any other keyword
    goes to :meth:`Problem.from_links` (weights, caps, prices, demands, tiers). (The
    baseline tests.)
``"calibrated"``
    Given sizes; 1–6 candidate cells per user on every resource, rates as "grouped";
    caps, prices and demands are drawn relative to the *uncapped* optimum (solved by
    ``reference``) so that they matter; RSRP, SINR and tiers drawn so the baselines run.
    (The optimizer-vs-oracle tests.)
"""

from __future__ import annotations

import numpy as np

import cellopt
from cellopt import Problem, radio, solve, topology
from cellopt.network import Network, cells_frame, users_frame
from cellopt.topology.hexgrid import SYNTHETIC_CRS

ALPHAS = (0.5, 1.0, 2.0)
KINDS = ("drawn", "grouped", "radio", "calibrated")


def random_problem(seed: int | np.random.Generator, kind: str, **options) -> Problem:
    """A random instance of family `kind` (see the module docstring) from `seed`.

    `seed` is an int or a :class:`numpy.random.Generator` (drawn from, not copied);
    ``"drawn"`` needs an int (α is chosen by ``seed % 3``). `options` are the family's own
    keywords, with the defaults of the private builder below.
    """
    builders = {"drawn": _drawn, "grouped": _grouped, "radio": _radio,
                "calibrated": _calibrated}
    if kind not in builders:
        raise ValueError(f"unknown kind {kind!r}; expected one of {KINDS}")
    return builders[kind](seed, **options)


def one_cell(rates, **kwargs) -> Problem:
    """Users 0..n-1, each with one link to cell 0 (resource 0); `kwargs` to from_links."""
    rates = np.asarray(rates, float)
    n = len(rates)
    return Problem.from_links(np.arange(n), np.zeros(n, np.int64), rates,
                              n_users=n, n_cells=1, **kwargs)


# ----------------------------------------------------------------------------- families
def _candidate_links(rng: np.random.Generator, n_users: int, n_cells: int, n_resources: int,
                     max_cand: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """1..min(max_cand, n_cells) distinct cells per user, each on every resource."""
    n_cand = rng.integers(1, min(max_cand, n_cells) + 1, size=n_users)
    pair_user = np.repeat(np.arange(n_users), n_cand)
    pair_cell = np.concatenate([rng.choice(n_cells, k, replace=False) for k in n_cand])
    user, cell = np.repeat(pair_user, n_resources), np.repeat(pair_cell, n_resources)
    resource = np.tile(np.arange(n_resources), len(pair_user))
    return user, cell, resource


def _drawn(seed: int, *, alpha: float | None = None, caps: bool = True, prices: bool = True,
           demands: bool = True, n_users: int | None = None) -> Problem:
    rng = np.random.default_rng(seed)
    n_users = int(rng.integers(5, 201)) if n_users is None else n_users
    n_cells = int(rng.integers(1, 11))
    n_res = int(rng.integers(1, 4))
    alpha = ALPHAS[seed % 3] if alpha is None else alpha
    user, cell, resource = _candidate_links(rng, n_users, n_cells, n_res, max_cand=4)
    rate = 5.0 * rng.lognormal(0.0, 0.7, len(user))
    backhaul = (np.where(rng.random(n_cells) < 0.5, rng.uniform(1.0, 30.0, n_cells), np.inf)
                if caps else None)
    price = (np.where(rng.random(n_cells) < 0.4, rng.uniform(0.001, 0.2, n_cells), 0.0)
             if prices else None)
    demand = (np.where(rng.random(n_users) < 0.3, rng.uniform(0.1, 3.0, n_users), np.inf)
              if demands else None)
    return Problem.from_links(
        user, cell, rate, n_users=n_users, n_cells=n_cells, resource=resource,
        n_resources=n_res, alpha=alpha, demand_mbps=demand, backhaul_mbps=backhaul,
        price_per_mbps=price)


def _grouped(seed, *, n_users: int = 30, n_cells: int = 5, n_resources: int = 2,
             per_user: int = 4, alpha: float = 1.0, caps: bool = True,
             prices: bool = True) -> Problem:
    rng = np.random.default_rng(seed)
    n_groups = n_cells * n_resources
    groups = np.argpartition(rng.random((n_users, n_groups)), per_user, axis=1)[:, :per_user]
    user = np.repeat(np.arange(n_users), per_user)
    cell, resource = np.divmod(groups.ravel(), n_resources)
    rate = rng.lognormal(np.log(5.0), 1.0, len(user))
    backhaul = np.full(n_cells, np.inf)
    demand = np.full(n_users, np.inf)
    price = np.zeros(n_cells)
    if caps:
        backhaul[:2] = [6.0, 10.0]
        limited = rng.random(n_users) < 0.3
        demand[limited] = rng.uniform(0.05, 0.5, limited.sum())
    if prices:
        price[-1] = 0.05
    return Problem.from_links(user, cell, rate, resource=resource, n_users=n_users,
                              n_cells=n_cells, n_resources=n_resources, alpha=alpha,
                              backhaul_mbps=backhaul, demand_mbps=demand, price_per_mbps=price)


def _radio(seed, *, n_users: int = 40, n_cells: int = 6, n_cand: int = 3,
           n_resources: int = 1, **kwargs) -> Problem:
    rng = np.random.default_rng(seed)
    cells = np.argsort(rng.uniform(size=(n_users, n_cells)), axis=1)[:, :n_cand]
    user = np.repeat(np.arange(n_users), n_cand * n_resources)
    cell = np.repeat(cells.reshape(-1), n_resources)
    resource = np.tile(np.arange(n_resources), n_users * n_cand)
    rsrp = np.repeat(rng.uniform(-110, -70, n_users * n_cand), n_resources)
    sinr = rsrp + 90 + rng.normal(0, 3, len(user))
    rate = np.log2(1 + 10 ** (sinr / 10)) * rng.uniform(0.5, 1.5, len(user))
    tier = rng.integers(0, 2, n_cells)  # drawn even when overridden: same stream either way
    tier = kwargs.pop("cell_tier", tier)
    return Problem.from_links(user, cell, rate, n_users=n_users, n_cells=n_cells,
                              resource=resource, n_resources=n_resources, rsrp_dbm=rsrp,
                              sinr_db=sinr, cell_tier=tier, **kwargs)


def _calibrated(seed, *, n_users: int, n_cells: int, n_resources: int, alpha: float = 1.0,
                caps: bool = False, prices: bool = False, demands: bool = False) -> Problem:
    """Backhaul caps of 20–90 % of the uncapped traffic on about half of the cells (so some
    bind), third-party prices of 0.1–1.5 × the median marginal utility on about a third of
    the cells, demands of 0.3–1.5 × the uncapped rate for about 30 % of the users."""
    rng = np.random.default_rng(seed)
    user, cell, resource = _candidate_links(rng, n_users, n_cells, n_resources, max_cand=6)
    rate = rng.lognormal(np.log(5.0), 1.0, len(user))
    common = dict(resource=resource, n_users=n_users, n_cells=n_cells, n_resources=n_resources,
                  alpha=alpha)
    backhaul = np.full(n_cells, np.inf)
    demand = np.full(n_users, np.inf)
    price = np.zeros(n_cells)
    if caps or prices or demands:
        free = solve(Problem.from_links(user, cell, rate, **common), method="reference", tol=1e-8)
        assert free.status == "optimal", free.message
        traffic, r = free.cell_traffic_mbps, free.user_rate_mbps
        if caps:
            pick = (rng.random(n_cells) < 0.5) | (np.arange(n_cells) == rng.integers(n_cells))
            pick &= traffic > 0
            backhaul[pick] = traffic[pick] * rng.uniform(0.2, 0.9, pick.sum())
        if prices:
            pick = (rng.random(n_cells) < 0.3) | (np.arange(n_cells) == rng.integers(n_cells))
            price[pick] = np.median(r ** -alpha) * rng.uniform(0.1, 1.5, pick.sum())
        if demands:
            pick = rng.random(n_users) < 0.3
            base = np.where(r > 0, r, np.median(rate))  # r = 0 only happens for α < 1
            demand[pick] = base[pick] * rng.uniform(0.3, 1.5, pick.sum())
    rsrp = 10 * np.log10(rate) - 90 + rng.normal(0, 3, len(rate))
    sinr = 10 * np.log10(np.expm1(rate / 5.0 * np.log(2)))
    return Problem.from_links(user, cell, rate, **common, backhaul_mbps=backhaul,
                              demand_mbps=demand, price_per_mbps=price, rsrp_dbm=rsrp,
                              sinr_db=sinr, cell_tier=rng.integers(0, 3, n_cells))


def random_cells_network(seed: int, n_cells: int = 5, n_users: int = 20, size_m: float = 600.0) -> Network:
    """Macro cells (a third, at least one) and picos dropped at random in a `size_m` square,
    users uniform: a small network for the power tests."""
    rng = np.random.default_rng(seed)
    n_macro = max(1, n_cells // 3)
    tier = np.array(["macro"] * n_macro + ["pico"] * (n_cells - n_macro), dtype=object)
    xy = rng.uniform(0, size_m, (n_cells, 2))
    x0, y0 = 500_000.0, 5_000_000.0
    cells = cells_frame(x0 + xy[:, 0], y0 + xy[:, 1], crs=SYNTHETIC_CRS, tier=tier,
                        tx_power_dbm=np.where(tier == "macro", 46.0, 30.0),
                        antenna_gain_dbi=np.where(tier == "macro", 14.0, 5.0))
    uxy = rng.uniform(0, size_m, (n_users, 2))
    return Network(cells=cells, users=users_frame(x0 + uxy[:, 0], y0 + uxy[:, 1],
                                                  crs=SYNTHETIC_CRS)).validate()


def outage_drop() -> cellopt.Drop:
    """A 7-site grid (21 cells, no wrap-around) with 60 users, the last 3 of them 30 km
    away: those have no usable link. Links: 8 candidates, shadowing seed 2."""
    net = topology.drop_users(topology.hex_grid(n_rings=1, wraparound=False), 60, rng=1)
    cells, users = net.cells, net.users
    x = np.r_[users.geometry.x.to_numpy(), cells.geometry.x.iloc[0] + 30_000.0 + np.arange(3.0)]
    y = np.r_[users.geometry.y.to_numpy(), np.full(3, cells.geometry.y.iloc[0])]
    net = net.replace(users=users_frame(x, y, crs=net.crs))
    return cellopt.Drop.from_network(net, radio.link_table(net, rng=2))


#: Newton steps of `dual` on the near-degenerate problems (16, 48 and 31 now; 126, 320 and
#: 500 — the budget, uncertified — before the linear model below α = 1e-8 and the cap
#: price units): a run is a few dozen steps, as on ordinary problems.
DEGENERATE_STEPS = 60


def near_linear_or_starved(case: str) -> Problem:
    """8 users, 3 cells, two candidates each: α = 1e-12 (all but linear), or every backhaul
    cap at 1e-9 or 1e-6 Mbit/s (the caps, not the airtime, decide everything)."""
    rng = np.random.default_rng(0)
    user = np.repeat(np.arange(8), 2)
    cell = np.concatenate([rng.choice(3, 2, replace=False) for _ in range(8)])
    rate = 5.0 * rng.lognormal(0.0, 0.7, len(user))
    options = {"alpha-1e-12": dict(alpha=1e-12),
               "caps-1e-9": dict(backhaul_mbps=np.full(3, 1e-9)),
               "caps-1e-6": dict(backhaul_mbps=np.full(3, 1e-6))}[case]
    return Problem.from_links(user, cell, rate, n_users=8, n_cells=3, **options)
