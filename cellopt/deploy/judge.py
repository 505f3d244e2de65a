"""Judging a deployable rule on a drop: its gap to the drop's bound and the share it keeps.

A rule (offsets, a schedule) is judged on a drop against two solutions of that drop: the
optimizer's (the optimum and its certified upper bound) and max-RSRP (what the network
does without the rule). The **kept share** is the part of the optimizer's gain over
max-RSRP that the rule keeps, ``(U_rule − U_max-RSRP) / (U_optimum − U_max-RSRP)``, on the
objective (utility − payments − energy cost); with power, max-RSRP serves at full power
and pays full power's energy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from cellopt.problem import Problem
from cellopt.solution import Solution
from cellopt.solvers.certificate import certified_gap

__all__ = ["JUDGEMENT_COLUMNS", "judgement", "kept_share", "summarize"]

#: The columns of a judgement row (:func:`judgement`), after ``rule``, ``split`` and ``drop``.
JUDGEMENT_COLUMNS = ("objective", "upper_bound", "gap", "optimum", "optimum_gap", "max_rsrp",
                     "kept_share")


def kept_share(objective: float, reference: float, optimum: float) -> float:
    """``(objective − reference) / (optimum − reference)``; NaN when the optimum gains
    nothing over the reference (no gain to keep)."""
    gain = optimum - reference
    if not np.isfinite(gain) or gain <= 1e-12 * max(1.0, abs(optimum)):
        return float("nan")
    return float((objective - reference) / gain)


def judgement(problem: Problem, rule: Solution, optimum: Solution, reference: float) -> dict[str, Any]:
    """One row of a rule's judgement on a drop.

    Parameters
    ----------
    problem : Problem
        The problem `rule` answers (its weights and α turn the objective difference into a
        rate-equivalent gap).
    rule : Solution
        The rule's solution on the drop.
    optimum : Solution
        The optimizer's solution of the same drop (its objective, and its ``upper_bound``
        as the drop's bound).
    reference : float
        max-RSRP's objective on the drop [utility] (with power: less full power's energy
        cost).

    Returns
    -------
    dict
        ``objective`` [utility], ``upper_bound`` (the optimizer's) [utility], ``gap`` (the
        rule's certified rate-equivalent gap to it), ``optimum`` (the optimizer's
        objective), ``optimum_gap`` (the rule's rate-equivalent gap to it: every user's
        rate × (1 + gap) would reach it), ``max_rsrp`` and ``kept_share``.
    """
    bound = optimum.upper_bound

    def rate_gap(target: float | None) -> float:
        gap = certified_gap(problem, target, rule.objective, rule.utility)
        return np.nan if gap is None else float(gap)

    return {"objective": float(rule.objective),
            "upper_bound": np.nan if bound is None else float(bound), "gap": rate_gap(bound),
            "optimum": float(optimum.objective), "optimum_gap": rate_gap(optimum.objective),
            "max_rsrp": float(reference),
            "kept_share": kept_share(rule.objective, reference, optimum.objective)}


def summarize(rows: pd.DataFrame, order: Sequence[str] | None = None) -> pd.DataFrame:
    """Per rule and split: drops, mean and worst kept share, mean and worst gap.

    Parameters
    ----------
    rows : pandas.DataFrame
        Judgement rows with ``rule``, ``split`` (``"training"``, ``"held_out"``) and
        ``drop`` (:func:`judgement`'s columns).
    order : sequence of str, optional
        The rules in the order wanted (default: as they first appear).

    Returns
    -------
    pandas.DataFrame
        Indexed by rule; columns ``<split>_drops``, ``<split>_objective`` (mean),
        ``<split>_gap`` (mean), ``<split>_gap_max``, ``<split>_kept_share`` (mean) and
        ``<split>_kept_share_min`` for each split present.
    """
    order = list(dict.fromkeys(rows["rule"])) if order is None else list(order)
    parts = []
    for split in dict.fromkeys(rows["split"]):  # at most two splits
        grouped = rows[rows["split"] == split].groupby("rule", sort=False)
        part = pd.DataFrame({
            f"{split}_drops": grouped["drop"].count(),
            f"{split}_objective": grouped["objective"].mean(),
            f"{split}_gap": grouped["gap"].mean(),
            f"{split}_gap_max": grouped["gap"].max(),
            f"{split}_optimum_gap": grouped["optimum_gap"].mean(),
            f"{split}_kept_share": grouped["kept_share"].mean(),
            f"{split}_kept_share_min": grouped["kept_share"].min(),
        })
        parts.append(part)
    table = pd.concat(parts, axis=1)
    return table.reindex([r for r in order if r in table.index])
