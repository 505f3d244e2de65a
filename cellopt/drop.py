"""The one bridge from a network to a problem and back to tables: :class:`Drop`.

A drop is a network, the link table of its users and the association problem of the
users that have a usable link. Users without one (outage) are left out of the problem
and come back, at rate 0, in every table: :meth:`Drop.frames` is the only way from a
:class:`~cellopt.solution.Solution` to per-user and per-cell tables, whether the drop was
built by hand (:meth:`Drop.from_network`) or from a scenario file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import geopandas as gpd
import numpy as np
import pandas as pd

from cellopt.errors import ValidationError, describe_rows
from cellopt.linktable import LinkTable
from cellopt.network import Network, check_same_network
from cellopt.parameters import Quantity
from cellopt.problem import Problem
from cellopt.solution import Solution
from cellopt.solvers import solve
from cellopt.solvers.registry import default_method, method_info

__all__ = ["CELL_RESULT_COLUMNS", "USER_RESULT_COLUMNS", "Coupling", "Drop", "result_columns_markdown"]


class Coupling(Protocol):
    """Interference that depends on the solution: how a drop with one is solved.

    :class:`cellopt.load_coupling.LoadCoupling` is one (cells interfere in proportion to
    their load); :meth:`Drop.solve` hands it the problem.
    """

    def solve(self, problem: Problem, method: str | None, **options: Any) -> Solution:
        """Solve `problem` with `method` (None: :func:`cellopt.solve`'s default) under this
        coupling."""
        ...

    def check(self, problem: Problem) -> None:
        """Raise a :class:`~cellopt.ValidationError` if the coupling was not made for
        `problem` (its links and full-load rates)."""
        ...


#: The result columns of the per-user table, after the network's own user columns.
USER_RESULT_COLUMNS: tuple[Quantity, ...] = (
    Quantity("in_study_area", "bool", "counted in statistics (False in a guard band)"),
    Quantity("usable", "bool", "has a link with a positive rate; users without one are left out "
             "of the problem and reported at rate 0"),
    Quantity("serving_cell_id", "cell id", "the cell carrying most of the user's rate; missing "
             "(<NA>) when none"),
    Quantity("serving_tier", "tier", "tier of the serving cell; \"none\" when none"),
    Quantity("n_serving_cells", "count", "cells giving the user a share above 1e-9"),
    Quantity("airtime_share", "share", "the user's share of its cells' time-frequency "
             "resources, summed over them (so at most n_serving_cells)"),
    Quantity("sinr_db", "dB", "SINR of the link carrying most of the user's rate (at the "
             "solution's loads when load-coupled); NaN when none"),
    Quantity("rate_mbps", "Mbit/s", "the user's rate; 0 in outage"),
)
#: The result columns of the per-cell table, after the network's own cell columns.
CELL_RESULT_COLUMNS: tuple[Quantity, ...] = (
    Quantity("load", "share", "share of the cell's time-frequency resources in use, 0–1 "
             "(1 by construction for a cell whose users are all full buffer: it gives "
             "them every resource it has)"),
    Quantity("overload", "share", "time-frequency share its users' demands would need "
             "beyond the whole, at their serving links' rates: max(0, Σ d_i / r_i − 1); "
             "NaN (null) when one of its users is full buffer, 0 when it serves nobody"),
    Quantity("n_users", "count", "users whose serving cell it is"),
    Quantity("best_rsrp_share", "share", "share of the users with a link whose strongest "
             "cell (largest RSRP) it is"),
    Quantity("mean_sinr_db", "dB", "mean SINR of the users it serves, on their serving "
             "links; NaN (null) when it serves nobody"),
    Quantity("airtime_price", "utility per unit airtime", "the price of its "
             "time-frequency resources in the solution (the dual variable μ_j of its "
             "airtime constraint, mean over resources per unit of the whole band): what "
             "one more unit of its airtime would add to the utility"),
    Quantity("traffic_mbps", "Mbit/s", "traffic the cell carries"),
    Quantity("backhaul_use", "ratio", "traffic over backhaul capacity; 0 for unlimited backhaul"),
    Quantity("payment", "utility", "what the cell's owner is paid (price × traffic)"),
    Quantity("mean_power_dbm", "dBm", "average transmit power over the band, "
             "10 log10 Σ_s θ_s p_s over the power patterns s and their shares θ_s; "
             "tx_power_dbm at fixed power; -inf when always off"),
    Quantity("mean_power_w", "W", "the same in watts: the energy the cell radiates per "
             "second"),
    Quantity("share_off", "share", "share of the band in which the cell is off (0 at fixed "
             "power)"),
)


def _problem_of(drop: Drop, solution: Solution) -> Problem:
    """The problem whose links `solution.x` is over: the drop's, or a power solution's
    master (its resources are the power patterns; its users are the drop's)."""
    return drop.problem if solution.power is None else solution.power.master


#: Entries of :meth:`Drop.user_columns` that are not columns of the users table.
_INTERNAL_COLUMNS = ("serving_cell", "needed_load")


def _band_share(drop: Drop, solution: Solution) -> np.ndarray:
    """The share of the band each resource of the solution's problem is, shape (n_resources,).

    The drop's subbands by width; 1 for every power pattern, whose shares ``x`` are
    already shares of the whole band.
    """
    if solution.power is not None:
        return np.ones(solution.power.master.n_resources)
    return drop.links.resource_mhz / drop.links.resource_mhz.sum()


def result_columns_markdown(tables: Mapping[str, Sequence[Quantity]] | None = None) -> str:
    """Declared columns as a Markdown table, one row each (docs/conventions.md).

    Parameters
    ----------
    tables : mapping of str to sequence of Quantity, optional
        The columns of each table, by its name in the docs; default the result columns
        of :meth:`Drop.frames` (``users`` and ``cells``).
    """
    if tables is None:
        tables = {"users": USER_RESULT_COLUMNS, "cells": CELL_RESULT_COLUMNS}
    lines = ["| table | column | unit | meaning |", "|---|---|---|---|"]
    for table, columns in tables.items():
        lines += [f"| {table} | `{c.name}` | {c.unit} | {c.description} |" for c in columns]
    return "\n".join(lines)


#: How to give a drop parts that agree.
_LINKS_FIX = "build the drop with Drop.from_network(network, radio.link_table(network, ...))"


def _check_links(network: Network, links: LinkTable) -> None:
    """Refuse a link table of another network (counts, then the fingerprint)."""
    fix = _LINKS_FIX
    if (links.n_users, links.n_cells) != (network.n_users, network.n_cells):
        raise ValidationError(f"the drop's link table has {links.n_users} users and "
                              f"{links.n_cells} cells, its network {network.n_users} and "
                              f"{network.n_cells}; fix: {fix}")
    check_same_network(links.network_fingerprint, network.fingerprint,
                       ours_name="the drop's link table", theirs_name="its network", fix=fix)


@dataclasses.dataclass(frozen=True, eq=False)
class Drop:
    """A network, its links and its association problem, and the map from a solution back.

    Build one with :meth:`from_network` (a network and link table of your own) or
    :meth:`cellopt.study.Scenario.build` (one draw of a scenario file); both give the same
    thing. The problem holds the *solvable* users only (those with a usable link, in
    network order); users in outage are left out of it and count with rate 0.
    :meth:`per_user` and :meth:`frames` spread a solution's per-user values back over
    every user of the network.

    Attributes
    ----------
    network : Network
        All cells and all dropped users.
    links : LinkTable
        The links of every user of `network`.
    problem : Problem
        The association problem of the solvable users.
    solvable : ndarray of bool, shape (n_users,)
        Users with a usable link (``links.users_with_rate()``).
    in_study_area : ndarray of bool, shape (n_users,)
        Users counted in statistics (``network.in_study_area()``; False in a guard band).
    seed : int or None
        The build seed (None for a drop built by hand).
    coupling : Coupling or None
        With ``[problem] interference = "load_coupled"``: the link rates as functions of
        the cells' loads (:meth:`cellopt.load_coupling.LoadCoupling.from_drop`);
        :meth:`solve` then iterates the loads. None: every cell interferes at full power.

    Notes
    -----
    The parts must agree, and a drop checks that they do when it is made (also by
    ``dataclasses.replace``), raising a :class:`~cellopt.ValidationError` that names
    both and the fix: the link table has the network's rows (users and cells);
    `solvable` is the table's users with a usable link; the problem has those users,
    the network's cells and the table's resources, and each of its links is the table
    link its ``link_index`` names (same user, cell, resource and rate); the coupling,
    if any, was made for this problem (``coupling.check(problem)``). The link table and
    the coupling record the network they were computed for (its
    :attr:`~cellopt.network.Network.fingerprint`: cell and user ids and positions), and
    a drop refuses them when that is another network, even with the same counts. That the table's
    rates are those of the network (same radio model and shadowing seed) is checked
    where the gains are recomputed: :meth:`cellopt.power.GainTable.from_drop` and
    :meth:`cellopt.load_coupling.LoadCoupling.from_drop`.
    """

    network: Network
    links: LinkTable
    problem: Problem
    solvable: np.ndarray
    in_study_area: np.ndarray
    seed: int | None = None
    coupling: Coupling | None = None

    def __post_init__(self) -> None:
        self._check_parts()

    def _check_parts(self) -> None:
        """Refuse parts that do not describe one drop (see the class notes)."""
        net, links, p = self.network, self.links, self.problem
        _check_links(net, links)
        fix = _LINKS_FIX
        solvable = np.asarray(self.solvable)
        if solvable.dtype != bool or solvable.shape != (net.n_users,):
            raise ValidationError(f"solvable has dtype {solvable.dtype} and shape "
                                  f"{solvable.shape}; fix: a boolean mask of shape "
                                  f"({net.n_users},), links.users_with_rate()")
        if np.shape(self.in_study_area) != (net.n_users,):
            raise ValidationError(f"in_study_area has shape {np.shape(self.in_study_area)}; fix: "
                                  f"one value per network user, network.in_study_area()")
        wrong = np.flatnonzero(solvable != links.users_with_rate())
        if len(wrong):
            raise ValidationError(f"solvable disagrees with the link table on users "
                                  f"{describe_rows(wrong)} (a usable link or not); fix: {fix}")
        if (p.n_users, p.n_cells, p.n_resources) != (int(solvable.sum()), net.n_cells,
                                                      links.n_resources):
            raise ValidationError(
                f"the drop's problem has {p.n_users} users, {p.n_cells} cells and "
                f"{p.n_resources} resource(s); its link table {int(solvable.sum())} users with "
                f"a usable link, {net.n_cells} cells and {links.n_resources} resource(s); "
                f"fix: {fix}")
        check_same_network(p.network_fingerprint, net.fingerprint_of_users(solvable),
                           ours_name="the drop's problem",
                           theirs_name="its network (the users with a usable link)", fix=fix)
        rows = np.flatnonzero(solvable[links.user])  # the solvable users' table links, in order
        index = p.link_index
        if len(index) and (index.min() < 0 or index.max() >= len(rows)):
            raise ValidationError(f"the drop's problem points at links beyond its link table "
                                  f"(link_index up to {index.max()}, {len(rows)} links); fix: {fix}")
        src = rows[index]
        renumbered = np.cumsum(solvable) - 1
        same = ((links.cell[src] == p.cell) & (links.resource[src] == p.resource)
                & (renumbered[links.user[src]] == p.user)
                & np.isclose(links.rate_mbps[src], p.rate_mbps, rtol=1e-12, atol=0.0))
        bad = np.flatnonzero(~same)
        if len(bad):
            raise ValidationError(f"the drop's problem and its link table disagree on problem links "
                                  f"{describe_rows(bad)} (user, cell, resource or rate); fix: {fix}")
        if self.coupling is not None:
            check_same_network(
                getattr(self.coupling, "network_fingerprint", None),
                net.fingerprint_of_users(solvable), ours_name="the drop's coupling",
                theirs_name="its network (the users with a usable link)",
                fix="build the coupling from this drop: LoadCoupling.from_drop(drop)")
            self.coupling.check(p)

    def solve(self, method: str | None = None, **options: Any) -> Solution:
        """Solve :attr:`problem` with `method`, load-coupled if the drop has a coupling.

        Without :attr:`coupling` (full-buffer interference, the default) this is exactly
        ``cellopt.solve(drop.problem, method, **options)``; with one it is
        :func:`~cellopt.load_coupling.solve_load_coupled`. None (default): the fastest
        certified method for the problem (:func:`~cellopt.solvers.registry.default_method`).
        A method that runs on a cluster (``dual_dask``) gets the users' positions, to split
        them by region.
        """
        if method is None:
            method, _ = default_method(self.problem)
        if method_info(method).distributed and not {"part", "user_xy_m"} & set(options):
            users = self.network.users[self.solvable]  # a cluster method splits them by region
            options = {**options, "user_xy_m": np.column_stack([users.geometry.x, users.geometry.y])}
        if self.coupling is None:
            return solve(self.problem, method=method, **options)
        return self.coupling.solve(self.problem, method, **options)

    @classmethod
    def from_network(cls, network: Network, links: LinkTable, *, seed: int | None = None,
                     **problem_options: Any) -> Drop:
        """The drop of a network and its link table: the problem leaves out users in outage.

        Parameters
        ----------
        network : Network
        links : LinkTable
            Of every user of `network` (:func:`cellopt.radio.link_table`).
        seed : int, optional
            Recorded only.
        **problem_options
            Passed to :meth:`cellopt.Problem.from_network` (``alpha``, overrides such as
            ``backhaul_mbps``).

        Returns
        -------
        Drop
            Solve it with :meth:`solve` (or ``cellopt.solve(drop.problem, ...)``) and turn
            the solution into tables with :meth:`frames`.
        """
        _check_links(network, links)  # before anything is computed from the two
        solvable = links.users_with_rate()
        served = network.replace(users=network.users[solvable].reset_index(drop=True))
        problem = Problem.from_network(served, links.select_users(solvable), **problem_options)
        return cls(network=network, links=links, problem=problem, solvable=solvable,
                   in_study_area=network.in_study_area(), seed=seed)

    def per_user(self, values: np.ndarray, fill: float = 0.0) -> np.ndarray:
        """Values of the solvable users spread over all users, `fill` for the others.

        Parameters
        ----------
        values : ndarray, shape (problem.n_users,)
            E.g. ``solution.user_rate_mbps`` or ``solution.serving_cell`` (fill −1).

        Returns
        -------
        ndarray, shape (network.n_users,)
        """
        values = np.asarray(values)
        if values.shape != (self.problem.n_users,):
            raise ValidationError(f"per_user got {values.shape[0] if values.ndim else 0} values, the "
                                  f"drop has {self.problem.n_users} solvable users; fix: pass a "
                                  "per-user array of a solution of this drop's problem")
        out = np.full(self.network.n_users, fill, dtype=np.result_type(values, fill))
        out[self.solvable] = values
        return out

    def check_solution(self, solution: Any, name: str = "solution") -> None:
        """Refuse anything but a solution of this drop's network.

        A solution records the network of the problem it solved
        (``Solution.network_fingerprint``: cell and user ids and positions); one of
        another network — other cells, or the users of another drop — is refused even
        when its counts match. A solution that records none (made by hand, or by
        ``cellopt.solve`` of a problem made link by link) is matched by counts only, where
        it is used. A solution of other counts (users, cells) is refused as such first.

        Parameters
        ----------
        solution : Solution
        name : str
            How the message names it (the caller's argument).

        Raises
        ------
        ValidationError
            For an object that is not a Solution, or a solution of another network,
            naming both and the fix.
        """
        if not isinstance(solution, Solution):
            raise ValidationError(f"{name} is a {type(solution).__name__}; fix: give a Solution of "
                                  "this drop (drop.solve(...))")
        fix = (f"pass {name} = a solution of this drop (drop.solve(...)), not of a drop of "
               "another seed or network")
        p = self.problem
        counts = (len(np.ravel(solution.user_rate_mbps)), len(np.atleast_1d(solution.cell_traffic_mbps)))
        if counts != (p.n_users, p.n_cells):
            raise ValidationError(f"{name} ({solution.method}) is not a solution of drop.problem "
                                  f"but of another problem: {counts[0]} users and {counts[1]} "
                                  f"cells, the drop's problem {p.n_users} and {p.n_cells}; fix: {fix}")
        check_same_network(solution.network_fingerprint, p.network_fingerprint,
                           ours_name=f"{name} ({solution.method})",
                           theirs_name="the drop's problem (its users with a usable link)",
                           fix=fix)

    def frames(self, solution: Solution) -> tuple[gpd.GeoDataFrame, gpd.GeoDataFrame]:
        """Per-user and per-cell tables of `solution`, one row per network user and cell.

        Parameters
        ----------
        solution : Solution
            A solution of :attr:`problem`.

        Returns
        -------
        users : geopandas.GeoDataFrame
            One row per network user: the network's user columns, then
            :data:`USER_RESULT_COLUMNS`.
        cells : geopandas.GeoDataFrame
            One row per network cell: the network's cell columns, then
            :data:`CELL_RESULT_COLUMNS`.
        """
        columns = self.user_columns(solution)
        return self.user_frame(columns), self.cell_frame(solution, columns)

    def user_columns(self, solution: Solution) -> dict[str, np.ndarray]:
        """The per-user result columns of :meth:`frames` as arrays over every network user.

        Returns
        -------
        dict of str to ndarray, each of shape (network.n_users,)
            :data:`USER_RESULT_COLUMNS` in order (``serving_cell_id`` a pandas array with
            <NA> for none when the ids are integers), and ``serving_cell`` (the serving
            cell's row, −1 for none; not a column of the tables).
        """
        self.check_solution(solution)
        p, net = _problem_of(self, solution), self.network
        if len(solution.x) != p.n_links or len(solution.user_rate_mbps) != p.n_users:
            raise ValidationError(f"the solution has {len(solution.x)} links and "
                                  f"{len(solution.user_rate_mbps)} users, this drop's problem "
                                  f"{p.n_links} and {p.n_users}; fix: pass a solution of drop.problem")
        if solution.load_coupling is not None:  # the rates and SINRs at the solution's loads
            p = p.replace(rate_mbps=solution.load_coupling["rate_mbps"],
                          sinr_db=solution.load_coupling["sinr_db"])
        band_share = _band_share(self, solution)  # (n_resources,)
        carried = solution.x * p.rate_mbps
        # the link carrying most of each user's rate: sort by user, then by carried rate
        order = np.lexsort((-carried, p.user))
        first = order[np.r_[True, p.user[order][1:] != p.user[order][:-1]]] if p.n_links else order
        top = np.full(p.n_users, -1)
        top[p.user[first]] = np.where(carried[first] > 0, first, -1)
        sinr = np.full(p.n_users, np.nan)
        if p.sinr_db is not None:
            sinr[top >= 0] = p.sinr_db[top[top >= 0]]
        used = solution.x > 1e-9
        pairs = np.unique(p.user[used].astype(np.int64) * p.n_cells + p.cell[used])
        n_cells_used = np.bincount(pairs // p.n_cells, minlength=p.n_users)
        airtime = np.bincount(p.user, weights=solution.x * band_share[p.resource], minlength=p.n_users)

        serving = self.per_user(solution.serving_cell, fill=-1)
        cell_ids = net.cells["cell_id"].to_numpy()
        tiers = net.cells["tier"].to_numpy()
        serving_id = pd.Series(cell_ids[np.maximum(serving, 0)])
        if serving_id.dtype.kind in "iu":  # integer ids stay integers, with <NA> for none
            serving_id = serving_id.astype("Int64")
        columns = {
            "in_study_area": self.in_study_area,
            "usable": self.solvable,
            "serving_cell_id": serving_id.where(serving >= 0).array,
            "serving_tier": np.where(serving >= 0, tiers[np.maximum(serving, 0)], "none"),
            "n_serving_cells": self.per_user(n_cells_used, fill=0),
            "airtime_share": self.per_user(airtime),
            "sinr_db": self.per_user(sinr, fill=np.nan),
            "rate_mbps": self.per_user(solution.user_rate_mbps),
        }
        assert list(columns) == [c.name for c in USER_RESULT_COLUMNS]
        # the share of its serving cell's band each user's demand needs (inf: full buffer)
        need = np.full(p.n_users, np.nan)
        served = top >= 0
        need[served] = (p.demand_mbps[served] / p.rate_mbps[top[served]]
                        * band_share[p.resource[top[served]]])
        return {**columns, "serving_cell": serving, "needed_load": self.per_user(need, np.nan)}

    def user_frame(self, columns: dict[str, np.ndarray], rows: np.ndarray | slice | None = None
                   ) -> gpd.GeoDataFrame:
        """The per-user table of :meth:`frames` from :meth:`user_columns`, for some rows.

        Parameters
        ----------
        columns : dict
            :meth:`user_columns` of a solution.
        rows : slice or ndarray of int, optional
            Network user rows (default all): large runs write their tables a slice at a
            time, so that no table of every user is held twice.
        """
        rows = slice(None) if rows is None else rows
        users = self.network.users.iloc[rows].reset_index(drop=True).copy()
        for name, values in columns.items():
            if name not in _INTERNAL_COLUMNS:
                users[name] = values[rows]
        return users

    def cell_frame(self, solution: Solution, columns: dict[str, np.ndarray]) -> gpd.GeoDataFrame:
        """The per-cell table of :meth:`frames`."""
        net = self.network
        band_share = _band_share(self, solution)
        serving = columns["serving_cell"]
        cells = net.cells.reset_index(drop=True).copy()
        cells["load"] = solution.cell_airtime @ band_share
        has = serving >= 0
        need = np.bincount(serving[has], weights=columns["needed_load"][has],
                           minlength=net.n_cells)  # inf where a user is full buffer
        with np.errstate(invalid="ignore"):
            cells["overload"] = np.where(np.isfinite(need), np.maximum(need - 1.0, 0.0), np.nan)
        n_users = np.bincount(serving[has], minlength=net.n_cells)
        cells["n_users"] = n_users
        best = self.links.best_by()
        linked = best >= 0
        cells["best_rsrp_share"] = (np.bincount(best[linked], minlength=net.n_cells)
                                    / max(int(linked.sum()), 1))
        sinr = columns["sinr_db"]
        counted = has & np.isfinite(sinr)
        total = np.bincount(serving[counted], weights=sinr[counted], minlength=net.n_cells)
        count = np.bincount(serving[counted], minlength=net.n_cells)
        with np.errstate(invalid="ignore", divide="ignore"):
            cells["mean_sinr_db"] = np.where(count > 0, total / count, np.nan)
        mu = solution.prices["airtime"]
        cells["airtime_price"] = (mu / band_share[None, :]).mean(axis=1) if mu.size else 0.0
        cells["traffic_mbps"] = solution.cell_traffic_mbps
        cap = cells["backhaul_mbps"].to_numpy(float)
        cells["backhaul_use"] = np.where(np.isfinite(cap), solution.cell_traffic_mbps
                                         / np.where(cap > 0, cap, np.inf), 0.0)
        cells["payment"] = (np.zeros(net.n_cells) if solution.cell_payment is None
                            else solution.cell_payment)
        full_dbm = cells["tx_power_dbm"].to_numpy(float)
        if solution.power is None:  # fixed power: every cell at full power all the time
            cells["mean_power_dbm"], share_off = full_dbm, np.zeros(net.n_cells)
        else:
            power = solution.power
            cells["mean_power_dbm"] = power.cell_power_dbm
            share_off = power.pattern_share @ np.isneginf(power.patterns)
        cells["mean_power_w"] = 10.0 ** (cells["mean_power_dbm"].to_numpy(float) / 10.0) * 1e-3
        cells["share_off"] = share_off
        assert list(cells.columns[-len(CELL_RESULT_COLUMNS):]) == [c.name for c in CELL_RESULT_COLUMNS]
        return cells
