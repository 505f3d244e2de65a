"""The association problem as flat arrays.

Decision ``x_e ∈ [0, 1]`` per link e = (user i, cell j, resource k): the share of
resource k of cell j given to user i. With ``r_i = Σ_{e∋i} R_e x_e`` and
``T_j = Σ_{e∋j} R_e x_e``::

    maximize    Σ_i w_i U_α(r_i) − Σ_j c_j T_j
    subject to  Σ_{e ∈ (j,k)} x_e ≤ 1      airtime of every cell and resource
                T_j ≤ C_j                   backhaul of every cell
                r_i ≤ d_i                   demand of every user
                x ≥ 0
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
from typing import Any

import numpy as np

from cellopt.checks import (
    INT64_MAX,
    as_float,
    as_float_array,
    check_array,
    check_names,
    is_integer,
    is_real,
    shown,
)
from cellopt.errors import ValidationError, check_memory, describe_rows
from cellopt.linktable import LinkTable
from cellopt.network import TIERS, Fingerprint, Network, check_same_network

__all__ = ["Problem", "utility", "utility_derivative"]


class _Required:
    """The default of an argument that must be given: a call without it is refused with the
    fix (where to get the value), not Python's bare "missing argument"."""

    def __repr__(self) -> str:
        return "<required>"


_REQUIRED: Any = _Required()


class _MissingArgument(ValidationError, TypeError):
    """A required argument left out: a :class:`~cellopt.errors.ValidationError` with the fix,
    and a ``TypeError`` as Python's own "missing argument" is."""


def utility(rate_mbps: np.ndarray, alpha: float) -> np.ndarray:
    """α-fair utility U_α(r): ``log r`` for α = 1, ``(r^(1−α) − 1) / (1−α)`` otherwise.

    This form is continuous in α (it tends to ``log r`` as α → 1), so α = 1 ± 1e-9
    behaves like α = 1; it is evaluated as ``expm1((1−α) log r) / (1−α)``, without the
    cancellation of ``r^(1−α) − 1`` near α = 1. U_α(1) = 0 for every α.

    Parameters
    ----------
    rate_mbps : ndarray
        Rates r ≥ 0 [Mbit/s].
    alpha : float
        Fairness α ≥ 0 (0: sum rate, 1: proportional fair, → ∞: max-min).

    Returns
    -------
    ndarray
        Same shape; −inf at r = 0 when α ≥ 1, −1/(1−α) at r = 0 when α < 1.
    """
    r = np.asarray(rate_mbps, dtype=float)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if alpha == 1:
            return np.log(r)
        if alpha == 0:
            return r - 1.0
        return np.expm1((1.0 - alpha) * np.log(r)) / (1.0 - alpha)


def utility_derivative(rate_mbps: np.ndarray, alpha: float) -> np.ndarray:
    """U_α'(r) = r^(−α) [utility per Mbit/s] (inf at r = 0 for α > 0)."""
    r = np.asarray(rate_mbps, dtype=float)
    with np.errstate(divide="ignore"):
        return r ** (-alpha) if alpha else np.ones_like(r)


@dataclasses.dataclass(frozen=True, eq=False)
class Problem:
    """One instance of the association problem, validated, as flat arrays.

    Build it with :meth:`from_network` or :meth:`from_links`. Links with zero rate are
    dropped (they can carry nothing); ``link_index`` maps the problem's links back to the
    rows that were given. Links are sorted by user.

    Attributes
    ----------
    user, cell, resource : ndarray of int64, shape (L,)
    rate_mbps : ndarray, shape (L,)
        Peak rate R_e > 0 [Mbit/s].
    link_index : ndarray of int64, shape (L,)
        Row of each link in the input (e.g. in the :class:`~cellopt.LinkTable`).
    n_users, n_cells, n_resources : int
    weight : ndarray, shape (n_users,)
        w_i > 0.
    alpha : float
        α ≥ 0 of the α-fair utility.
    demand_mbps : ndarray, shape (n_users,)
        d_i > 0 [Mbit/s], inf = elastic.
    backhaul_mbps : ndarray, shape (n_cells,)
        C_j ≥ 0 [Mbit/s], inf = unlimited.
    price_per_mbps : ndarray, shape (n_cells,)
        c_j ≥ 0 [utility per Mbit/s].
    rsrp_dbm, sinr_db : ndarray, shape (L,), optional
        Link attributes the baselines choose by (from a LinkTable).
    cell_tier : ndarray of int8, shape (n_cells,), optional
        Codes into :data:`cellopt.network.TIERS` (for per-tier range-expansion bias).
    third_party : ndarray of bool, shape (n_cells,), optional
        Cells owned by third parties (open-access femtocells selling capacity at
        ``price_per_mbps``): the traffic they carry is the *offloaded* traffic.
    pattern_cost : ndarray, shape (n_resources,) or (n_blocks, n_resources), optional
        Set for power patterns: the resources are patterns whose shares θ_k of the band
        are variables too (θ ≥ 0, Σ θ_k = 1), the airtime rows read
        ``Σ_{e ∈ (j,k)} x_e ≤ θ_k`` (x is a share of the whole band) and the objective
        pays ``Σ_k θ_k E_k`` with ``E_k = pattern_cost[k]`` [utility per unit share], the
        energy cost of pattern k. None (default): fixed resources, each of capacity 1.
        With `share_block`, one row per block: the cells of block b share the shares
        θ_bk (Σ_k θ_bk = 1 in every block), and ``inf`` marks a pattern that block b
        does not have (θ_bk = 0).
    share_block : ndarray of int64, shape (n_cells,), optional
        With free shares: the block of each cell; blocks choose their pattern shares
        independently (e.g. clusters of cells in a relaxation). None: one block.
    network_fingerprint : Fingerprint or None
        Which network's cells and users it holds (:attr:`Network.fingerprint
        <cellopt.network.Network.fingerprint>`; a drop's problem: its users with a usable
        link), set by :meth:`from_network`; its solutions record it
        (``Solution.network_fingerprint``) and every function that takes a solution
        together with a drop refuses one of another network. None for a problem made
        link by link (:meth:`from_links`).
    """

    user: np.ndarray
    cell: np.ndarray
    resource: np.ndarray
    rate_mbps: np.ndarray
    link_index: np.ndarray
    n_users: int
    n_cells: int
    n_resources: int
    weight: np.ndarray
    alpha: float
    demand_mbps: np.ndarray
    backhaul_mbps: np.ndarray
    price_per_mbps: np.ndarray
    rsrp_dbm: np.ndarray | None = None
    sinr_db: np.ndarray | None = None
    cell_tier: np.ndarray | None = None
    pattern_cost: np.ndarray | None = None
    third_party: np.ndarray | None = None
    share_block: np.ndarray | None = None
    network_fingerprint: Fingerprint | None = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_links(
        cls,
        user: np.ndarray,
        cell: np.ndarray,
        rate_mbps: np.ndarray,
        *,
        n_users: int,
        n_cells: int,
        resource: np.ndarray | None = None,
        n_resources: int = 1,
        weight: np.ndarray | float | None = None,
        alpha: float = 1.0,
        demand_mbps: np.ndarray | float | None = None,
        backhaul_mbps: np.ndarray | float | None = None,
        price_per_mbps: np.ndarray | float | None = None,
        rsrp_dbm: np.ndarray | None = None,
        sinr_db: np.ndarray | None = None,
        cell_tier: np.ndarray | None = None,
        pattern_cost: np.ndarray | None = None,
        third_party: np.ndarray | None = None,
        share_block: np.ndarray | None = None,
    ) -> Problem:
        """A problem from raw link arrays.

        Parameters
        ----------
        user, cell : array_like of int, shape (L,)
            User and cell index of each link, in ``[0, n_users)`` and ``[0, n_cells)``.
        rate_mbps : array_like, shape (L,)
            Peak rate R_e ≥ 0 [Mbit/s]; links with rate 0 are dropped.
        n_users, n_cells : int
        resource : array_like of int, shape (L,), optional
            Resource index in ``[0, n_resources)``; default 0.
        n_resources : int
        weight : float or array_like, shape (n_users,), optional
            Default 1.
        alpha : float
            α-fair utility (1: proportional fair).
        demand_mbps : float or array_like, shape (n_users,), optional
            Default inf (elastic).
        backhaul_mbps, price_per_mbps : float or array_like, shape (n_cells,), optional
            Default inf and 0.
        rsrp_dbm, sinr_db : array_like, shape (L,), optional
        cell_tier : array_like of int, shape (n_cells,), optional
        pattern_cost : array_like, shape (n_resources,) or (n_blocks, n_resources), optional
            Energy cost E_k ≥ 0 of each power pattern [utility per unit share]; makes the
            pattern shares free variables (see the class docstring). Per block with
            `share_block` (inf: the block has no such pattern).
        share_block : array_like of int, shape (n_cells,), optional
            Block of each cell for the pattern shares, in ``[0, n_blocks)``; needs a 2-D
            `pattern_cost`.
        third_party : array_like of bool, shape (n_cells,), optional
            Third-party cells, whose traffic counts as offloaded.

        Raises
        ------
        ValidationError
            Naming the offending entries: NaN or negative rates, indices out of range,
            duplicate links, bad weights, demands, capacities or prices, and (for α ≥ 1)
            users with no link of positive rate.
        """
        _check_scalars(n_users=n_users, n_cells=n_cells, n_resources=n_resources, alpha=alpha)
        user = _as_indices(user, "user")
        n_links = len(user)
        # Per-user and per-cell arrays: about 6 float64 values each.
        check_memory(48.0 * (n_users + n_cells * n_resources) + 64.0 * n_links,
                     f"the arrays of a problem with {n_users} users, {n_cells} cells and {n_links} links",
                     "solve a smaller region or fewer users")
        arrays = {
            "user": user, "cell": _as_indices(cell, "cell"),
            "resource": np.zeros(n_links, np.int64) if resource is None
            else _as_indices(resource, "resource"),
            "rate_mbps": _as_floats(rate_mbps, "rate_mbps"),
        }
        extra = {"rsrp_dbm": None if rsrp_dbm is None else _as_floats(rsrp_dbm, "rsrp_dbm"),
                 "sinr_db": None if sinr_db is None else _as_floats(sinr_db, "sinr_db")}
        rsrp_dbm, sinr_db = extra["rsrp_dbm"], extra["sinr_db"]
        problems = _check_links(arrays, extra, n_users, n_cells, n_resources)
        per_user = {"weight": _broadcast(weight, 1.0, n_users, "weight", problems),
                    "demand_mbps": _broadcast(demand_mbps, np.inf, n_users, "demand_mbps", problems)}
        per_cell = {"backhaul_mbps": _broadcast(backhaul_mbps, np.inf, n_cells, "backhaul_mbps",
                                                problems),
                    "price_per_mbps": _broadcast(price_per_mbps, 0.0, n_cells, "price_per_mbps",
                                                 problems)}
        problems += _check_parameters(per_user, per_cell, alpha)
        if problems:
            raise ValidationError(problems)

        keep = np.flatnonzero(arrays["rate_mbps"] > 0)
        keep = keep[np.argsort(arrays["user"][keep], kind="stable")]
        has_link = np.zeros(n_users, bool)
        has_link[arrays["user"][keep]] = True
        if alpha >= 1 and not has_link.all():
            bad = np.flatnonzero(~has_link)
            raise ValidationError(
                f"users {describe_rows(bad)} have no link with a positive rate, so their "
                f"utility is −inf for alpha={alpha}; fix: more candidates (n_candidates), a "
                "wider window_db, other powers, or drop these users")
        tier = None if cell_tier is None else np.asarray(cell_tier)
        if tier is not None:
            if tier.shape != (n_cells,):
                raise ValidationError(f"cell_tier has shape {tier.shape}; fix: give ({n_cells},)")
            if tier.size and tier.dtype.kind not in "iu":
                raise ValidationError(f"cell_tier holds {tier.dtype} values; fix: give integer "
                                      f"codes, indices into {list(TIERS)}")
            bad = np.flatnonzero((tier < 0) | (tier >= len(TIERS)))
            if len(bad):
                raise ValidationError(f"cells {describe_rows(bad)}: cell_tier is not a code in "
                                      f"[0, {len(TIERS)}); fix: use indices into {list(TIERS)}")
            tier = tier.astype(np.int8)
        if pattern_cost is not None or share_block is not None:
            pattern_cost, share_block = _check_shares(pattern_cost, share_block, n_cells,
                                                      n_resources)
            if share_block is not None:
                absent = ~np.isfinite(pattern_cost[share_block[arrays["cell"][keep]],
                                                   arrays["resource"][keep]])
                if absent.any():
                    raise ValidationError(
                        f"links {describe_rows(keep[absent])} are on patterns their cell's "
                        "share block does not have (pattern_cost inf); fix: drop those links "
                        "or give the patterns a finite cost")
        if third_party is not None:
            third_party = check_array(third_party, "third_party", shape=(n_cells,), kind="bool",
                                      fix=f"one flag (True or False) per cell, shape ({n_cells},)")
        return cls(
            user=arrays["user"][keep].astype(np.int64), cell=arrays["cell"][keep].astype(np.int64),
            resource=arrays["resource"][keep].astype(np.int64),
            rate_mbps=arrays["rate_mbps"][keep], link_index=keep.astype(np.int64),
            n_users=int(n_users), n_cells=int(n_cells), n_resources=int(n_resources),
            alpha=float(alpha), **per_user, **per_cell,
            rsrp_dbm=None if rsrp_dbm is None else np.asarray(rsrp_dbm, float)[keep],
            sinr_db=None if sinr_db is None else np.asarray(sinr_db, float)[keep],
            cell_tier=tier, pattern_cost=pattern_cost, third_party=third_party,
            share_block=share_block,
        )

    @classmethod
    def from_network(
        cls, network: Network = _REQUIRED, links: LinkTable = _REQUIRED, alpha: float = 1.0,
        **overrides: Any
    ) -> Problem:
        """A problem from a network and its link table, every user kept.

        Weights and demands come from the users table, backhaul capacities, prices and
        owners from the cells table, RSRP and SINR from the links (for the baselines),
        tiers from the cells. :meth:`cellopt.Drop.from_network` is the usual way in: it
        builds this problem from the users with a usable link and maps the solution back
        to tables of every user.

        Parameters
        ----------
        network : Network
        links : LinkTable
            Built from `network` (same users and cells).
        alpha : float
        **overrides
            Any keyword of :meth:`from_links` (e.g. ``backhaul_mbps=50.0``).
        """
        if missing := [n for n, v in (("network", network), ("links", links)) if v is _REQUIRED]:
            fixes = {"network": "give the cellopt.Network (cells and users) first",
                     "links": "make the links with cellopt.radio.link_table(network) and pass "
                              "them: Problem.from_network(network, cellopt.radio.link_table("
                              "network)), or build cellopt.Drop.from_network(network, links), "
                              "which also leaves out the users without a usable link"}
            raise _MissingArgument(f"Problem.from_network(network, links) is missing "
                                   f"{' and '.join(missing)}; fix: "
                                   + "; ".join(fixes[m] for m in missing))
        if not isinstance(network, Network):
            raise ValidationError(f"network is a {type(network).__name__}; fix: give a cellopt "
                                  "Network")
        if not isinstance(links, LinkTable):
            raise ValidationError(f"links is a {type(links).__name__}; fix: give the LinkTable "
                                  "of radio.link_table(network)")
        valid = [k for k in inspect.signature(cls.from_links).parameters
                 if k not in ("user", "cell", "rate_mbps", "n_users", "n_cells", "alpha")]
        check_names(overrides, valid, what="override(s) {} for Problem.from_network",
                    fix=f"use keywords of Problem.from_links: {valid}")
        if (links.n_users, links.n_cells) != (network.n_users, network.n_cells):
            raise ValidationError(
                f"links were built for {links.n_users} users and {links.n_cells} cells, the "
                f"network has {network.n_users} and {network.n_cells}; fix: rebuild the links "
                "with radio.link_table(network)")
        check_same_network(links.network_fingerprint, network.fingerprint,
                           ours_name="the link table (links)", theirs_name="the network",
                           fix="rebuild the links with radio.link_table(network)")
        u, c = network.user_arrays(), network.cell_arrays()
        kwargs = dict(
            resource=links.resource, n_resources=links.n_resources, weight=u["weight"],
            alpha=alpha, demand_mbps=u["demand_mbps"], backhaul_mbps=c["backhaul_mbps"],
            price_per_mbps=c["price_per_mbps"], rsrp_dbm=links.rsrp_dbm, sinr_db=links.sinr_db,
            cell_tier=c["tier"], third_party=c["third_party"],
        )
        kwargs.update(overrides)
        outage = ~links.users_with_rate()
        if is_real(kwargs["alpha"]) and kwargs["alpha"] >= 1 and outage.any():
            raise ValidationError(
                f"users {describe_rows(np.flatnonzero(outage))} have no link with a positive rate, "
                f"so their utility is −inf for alpha={kwargs['alpha']}; fix: build the drop with "
                "cellopt.Drop.from_network(network, links), which leaves them out of the problem "
                "and reports them at rate 0, or give them more candidates (n_candidates)")
        problem = cls.from_links(links.user, links.cell, links.rate_mbps, n_users=network.n_users,
                                 n_cells=network.n_cells, **kwargs)
        return dataclasses.replace(problem, network_fingerprint=network.fingerprint)

    def restrict(self, keep: np.ndarray) -> Problem:
        """The same problem on a subset of the links (mask or indices into the links).

        ``link_index`` keeps pointing at the original input rows.
        """
        fix = (f"give a boolean mask of shape ({self.n_links},) or integer link positions in "
               f"[0, {self.n_links})")
        arr = np.asarray(keep) if not isinstance(keep, (str, bytes)) else np.asarray([keep])
        if arr.ndim != 1:
            raise ValidationError(f"keep has shape {arr.shape}; fix: {fix}")
        if arr.dtype == bool:
            idx = np.flatnonzero(check_array(arr, "keep", shape=(self.n_links,), kind="bool",
                                             fix=fix))
        else:
            idx = check_array(arr, "keep", shape=arr.shape, kind="int", low=0,
                              high=self.n_links - 1, fix=fix)
            if len(np.unique(idx)) != len(idx):
                raise ValidationError(f"keep repeats link positions; fix: {fix}, each once")
        idx = np.sort(idx)

        def take(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[idx]

        return dataclasses.replace(
            self, user=self.user[idx], cell=self.cell[idx], resource=self.resource[idx],
            rate_mbps=self.rate_mbps[idx], link_index=self.link_index[idx],
            rsrp_dbm=take(self.rsrp_dbm), sinr_db=take(self.sinr_db))

    def replace(self, **changes: Any) -> Problem:
        """A copy with some fields replaced.

        Only the replaced per-user, per-cell and per-link values and α are checked (shape
        and range, as :meth:`from_links` does); the rest is not revalidated.

        Raises
        ------
        ValidationError
            For a name that is not a field, or a replaced value of the wrong shape or
            out of range.
        """
        fields = [f.name for f in dataclasses.fields(self)]
        check_names(changes, fields, what="field(s) {} for Problem.replace",
                    fix=f"use fields of Problem: {fields}")
        problems: list[str] = []
        sizes = {"weight": self.n_users, "demand_mbps": self.n_users,
                 "backhaul_mbps": self.n_cells, "price_per_mbps": self.n_cells,
                 "rate_mbps": self.n_links}
        for name, n in sizes.items():
            if name in changes:
                value = _as_floats(changes[name], name)
                if value.shape != (n,):
                    problems.append(f"{name} has shape {value.shape}; fix: give shape ({n},)")
                changes[name] = value
        if "rate_mbps" in changes and not problems:
            rate = changes["rate_mbps"]
            bad = np.flatnonzero(~(rate >= 0) | np.isinf(rate))
            if len(bad):
                problems.append(f"links {describe_rows(bad)}: rate_mbps is NaN, negative or "
                                "infinite; fix: give finite peak rates ≥ 0")
        if "alpha" in changes:
            _check_scalars(n_users=self.n_users, n_cells=self.n_cells,
                           n_resources=self.n_resources, alpha=changes["alpha"])
            changes["alpha"] = float(changes["alpha"])
        if not problems and set(changes) & {"weight", "demand_mbps", "backhaul_mbps",
                                            "price_per_mbps", "alpha"}:
            per_user = {k: changes.get(k, getattr(self, k)) for k in ("weight", "demand_mbps")}
            per_cell = {k: changes.get(k, getattr(self, k))
                        for k in ("backhaul_mbps", "price_per_mbps")}
            problems += _check_parameters(per_user, per_cell, changes.get("alpha", self.alpha))
        if problems:
            raise ValidationError(problems)
        return dataclasses.replace(self, **changes)

    # ------------------------------------------------------------------ derived
    @property
    def n_links(self) -> int:
        return len(self.user)

    @property
    def n_groups(self) -> int:
        """Number of airtime constraints, one per (cell, resource)."""
        return self.n_cells * self.n_resources

    @functools.cached_property
    def group(self) -> np.ndarray:
        """Airtime constraint of each link: ``cell * n_resources + resource``, shape (L,)."""
        return self.cell * self.n_resources + self.resource

    @property
    def free_shares(self) -> bool:
        """True when the resources are power patterns with variable shares θ."""
        return self.pattern_cost is not None

    @property
    def n_blocks(self) -> int:
        """Number of pattern-share blocks (1 without `share_block`, 0 for fixed resources)."""
        if not self.free_shares:
            return 0
        return 1 if self.share_block is None else self.pattern_cost.shape[0]

    @functools.cached_property
    def cell_block(self) -> np.ndarray:
        """Pattern-share block of every cell, shape (n_cells,) (all 0 for one block)."""
        if self.share_block is None:
            return np.zeros(self.n_cells, np.int64)
        return self.share_block

    @functools.cached_property
    def block_cost(self) -> np.ndarray:
        """Energy cost of every (block, pattern), shape (n_blocks, n_resources); inf: absent."""
        return np.atleast_2d(self.pattern_cost)

    @functools.cached_property
    def rate_cap_mbps(self) -> np.ndarray:
        """r̄_i, the most user i can get, shape (n_users,).

        ``min(d_i, Σ_{e∋i} R_e)``; with free pattern shares the sum runs, in every
        share block, over one pattern at a time, the largest is taken (Σ_k θ_bk = 1) and
        the blocks add up.
        """
        if not self.free_shares:
            return np.minimum(self.demand_mbps,
                              np.bincount(self.user, self.rate_mbps, minlength=self.n_users))
        n_k, n_b = self.n_resources, self.n_blocks
        key = (self.user * n_b + self.cell_block[self.cell]) * n_k + self.resource
        per_pattern = np.bincount(key, self.rate_mbps, minlength=self.n_users * n_b * n_k)
        best = per_pattern.reshape(self.n_users, n_b, n_k).max(axis=2, initial=0.0)
        return np.minimum(self.demand_mbps, best.sum(axis=1))

    def tier_names(self) -> np.ndarray | None:
        return None if self.cell_tier is None else np.asarray(TIERS)[self.cell_tier]

    def __repr__(self) -> str:
        caps = int(np.isfinite(self.backhaul_mbps).sum())
        kind = "power pattern(s)" if self.free_shares else "resource(s)"
        return (f"Problem({self.n_links} links, {self.n_users} users, {self.n_cells} cells, "
                f"{self.n_resources} {kind}, alpha={self.alpha:g}, {caps} backhaul caps)")


# ---------------------------------------------------------------------- validation
def _check_scalars(*, n_users: Any, n_cells: Any, n_resources: Any, alpha: Any) -> None:
    """Counts are integers (≥ 0; ≥ 1 resource), α a real number: else one error for all."""
    problems = []
    for name, value, least in (("n_users", n_users, 0), ("n_cells", n_cells, 0),
                               ("n_resources", n_resources, 1)):
        if not is_integer(value) or not least <= value <= INT64_MAX:
            problems.append(f"{name}={shown(value)}; fix: give a whole number (an int) ≥ {least}")
    if not is_real(alpha) or not math.isfinite(as_float(alpha)):
        # (a finite real α out of range is reported with the other parameters)
        problems.append(f"alpha={shown(alpha)}; fix: give a fairness exponent, a finite number "
                        "≥ 0 (0: sum rate, 1: proportional fair)")
    if problems:
        raise ValidationError(problems)


def _as_floats(value: Any, name: str) -> np.ndarray:
    """Numbers only: booleans and strings ("1") are refused, not converted."""
    fix = "give numbers (e.g. a float array)"
    try:
        return as_float_array(value, name, fix=fix)
    except ValidationError as err:
        why = str(err).split("cannot be read as numbers: ", 1)[-1].split("; fix:", 1)[0]
        raise ValidationError(f"{name} holds values that are not numbers ({why}); fix: {fix}"
                              ) from None


def _as_indices(value: Any, name: str) -> np.ndarray:
    """A 1-d array of link indices (dtype checked later, with the other link arrays)."""
    if isinstance(value, (str, bytes)) or value is None:
        raise ValidationError(f"{name}={value!r} is a {type(value).__name__}; fix: give a 1-d "
                              "array of integer row positions, one per link")
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise ValidationError(f"{name} has shape {arr.shape}; fix: give a 1-d array of row "
                              "positions, one per link")
    return arr


def _broadcast(value: Any, default: float, n: int, name: str, problems: list[str]) -> np.ndarray:
    arr = _as_floats(default if value is None else value, name)
    if arr.ndim == 0:
        return np.full(n, arr.item())
    if arr.shape != (n,):
        problems.append(f"{name} has shape {arr.shape}; fix: give a scalar or shape ({n},)")
        return np.full(n, default)
    return arr.copy()


def _check_links(arrays: dict, extra: dict, n_users: int, n_cells: int,
                 n_resources: int) -> list[str]:
    problems = []
    n = len(arrays["user"])
    for name, a in {**arrays, **{k: v for k, v in extra.items() if v is not None}}.items():
        if np.shape(a) != (n,):
            problems.append(f"{name} has shape {np.shape(a)}; fix: one value per link ({n},)")
    if problems:
        return problems
    for name, a in extra.items():
        if a is not None and np.isnan(np.asarray(a, float)).any():
            bad = np.flatnonzero(np.isnan(np.asarray(a, float)))
            problems.append(f"links {describe_rows(bad)}: {name} is NaN; fix: give finite values")
    for name, size in (("user", n_users), ("cell", n_cells), ("resource", n_resources)):
        a = arrays[name]
        if not np.issubdtype(a.dtype, np.integer):
            problems.append(f"{name} indices are {a.dtype}, not integers; fix: pass row positions")
            continue
        bad = np.flatnonzero((a < 0) | (a >= size))
        if len(bad):
            problems.append(f"links {describe_rows(bad)}: {name} index outside [0, {size}); fix: "
                            f"use row positions of the {name} table")
    rate = arrays["rate_mbps"]
    bad = np.flatnonzero(~(rate >= 0) | np.isinf(rate))
    if len(bad):
        problems.append(f"links {describe_rows(bad)}: rate_mbps is NaN, negative or infinite "
                        f"(values {rate[bad][:10].tolist()}); fix: give finite peak rates ≥ 0")
    if not problems:
        key = (arrays["user"].astype(np.int64) * n_cells + arrays["cell"]) * n_resources \
            + arrays["resource"]
        _, first, counts = np.unique(key, return_index=True, return_counts=True)
        dup = np.flatnonzero(np.isin(key, key[first[counts > 1]]))
        if len(dup):
            problems.append(f"links {describe_rows(dup)} repeat the same (user, cell, resource); "
                            "fix: give each link once")
    return problems


def _check_shares(pattern_cost: Any, share_block: Any, n_cells: int, n_resources: int
                  ) -> tuple[np.ndarray, np.ndarray | None]:
    """Validated pattern costs (and blocks) of a problem with free pattern shares."""
    if pattern_cost is None:
        raise ValidationError("share_block needs pattern_cost; fix: give the energy cost of "
                              "every (block, pattern), shape (n_blocks, n_resources)")
    cost = np.asarray(pattern_cost, dtype=float)
    if share_block is None:
        if cost.shape != (n_resources,):
            raise ValidationError(f"pattern_cost has shape {cost.shape}; fix: one energy cost "
                                  f"per pattern, shape ({n_resources},)")
        bad = np.flatnonzero(~(np.isfinite(cost) & (cost >= 0)))
        if len(bad):
            raise ValidationError(f"patterns {describe_rows(bad)}: pattern_cost invalid (values "
                                  f"{cost[bad][:10].tolist()}); fix: give finite energy costs ≥ 0")
        return cost, None
    block = np.asarray(share_block)
    if block.shape != (n_cells,) or not np.issubdtype(block.dtype, np.integer):
        raise ValidationError(f"share_block has shape {block.shape} and dtype {block.dtype}; "
                              f"fix: one integer block per cell, shape ({n_cells},)")
    if cost.ndim != 2 or cost.shape[1] != n_resources:
        raise ValidationError(f"pattern_cost has shape {cost.shape}; fix: with share_block, "
                              f"one row per block, shape (n_blocks, {n_resources})")
    bad = np.flatnonzero((block < 0) | (block >= cost.shape[0]))
    if len(bad):
        raise ValidationError(f"cells {describe_rows(bad)}: share_block outside [0, "
                              f"{cost.shape[0]}); fix: number the blocks from 0")
    bad = np.flatnonzero((np.isnan(cost) | (cost < 0)).any(axis=1)
                         | ~np.isfinite(cost).any(axis=1))
    if len(bad):
        raise ValidationError(f"blocks {describe_rows(bad)}: pattern_cost invalid; fix: costs "
                              "≥ 0, inf for a pattern the block does not have, and at least "
                              "one finite cost per block")
    return cost, block.astype(np.int64)


def _check_parameters(per_user: dict, per_cell: dict, alpha: float) -> list[str]:
    problems = []
    rules = [
        (per_user["weight"], "weight", "users", lambda v: ~(np.isfinite(v) & (v > 0)),
         "give finite weights > 0"),
        (per_user["demand_mbps"], "demand_mbps", "users", lambda v: ~(v > 0),
         "give demands > 0 in Mbit/s (inf for elastic)"),
        (per_cell["backhaul_mbps"], "backhaul_mbps", "cells", lambda v: ~(v >= 0),
         "give capacities ≥ 0 in Mbit/s (inf for unlimited)"),
        (per_cell["price_per_mbps"], "price_per_mbps", "cells",
         lambda v: ~(np.isfinite(v) & (v >= 0)), "give prices ≥ 0 per Mbit/s"),
    ]
    for values, name, table, bad_fn, fix in rules:
        bad = np.flatnonzero(bad_fn(values))
        if len(bad):
            problems.append(f"{table} {describe_rows(bad)}: {name} invalid (values "
                            f"{values[bad][:10].tolist()}); fix: {fix}")
    if not (np.isfinite(alpha) and alpha >= 0):
        problems.append(f"alpha={alpha}; fix: give a fairness exponent ≥ 0 (1: proportional fair)")
    return problems
