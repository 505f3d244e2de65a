"""The ``[deploy]`` section of a scenario file: what a run fits and how it judges it."""

from __future__ import annotations

import dataclasses

from cellopt.checks import check_bool, check_count, check_real
from cellopt.deploy.offsets import DEFAULT_MAX_ROUNDS, DEFAULT_PENALTY_PER_DB, Q_OFFSET_RANGE, check_values
from cellopt.deploy.schedule import DEFAULT_SUBFRAMES

__all__ = ["DEFAULT_HELD_OUT_DROPS", "DEFAULT_SLEEP_SHARE_OFF", "DEFAULT_TRAINING_DROPS",
           "DeploySettings"]

#: Drops the offsets are fitted on: the run's drop and fifteen more of the same cells.
DEFAULT_TRAINING_DROPS = 16
#: Drops of the same cells, with users and shadowing never seen in the fit, that judge it.
DEFAULT_HELD_OUT_DROPS = 5
#: A cell off in at least this share of the subframes is listed as a sleep candidate.
DEFAULT_SLEEP_SHARE_OFF = 0.9


@dataclasses.dataclass(frozen=True)
class DeploySettings:
    """The ``[deploy]`` section (its defaults when absent).

    Attributes
    ----------
    enabled : bool
        Fit and judge the deployable settings in ``cellopt run`` when the scenario has an
        optimizer among its methods (True).
    training_drops : int
        Drops the offsets and the per-tier bias are fitted on (≥ 1): the run's drop, then
        drops of the same cells with new users and shadowing.
    held_out_drops : int
        Drops of the same cells with users and shadowing the fit never saw, on which every
        fitted setting is judged (≥ 0).
    values_db : tuple of float
        The offsets a cell may take [dB] (TS 36.331 Q-OffsetRange).
    penalty_per_db : float
        :func:`cellopt.deploy.cell_offsets`'s penalty on a cell's distance from its tier's
        bias.
    max_rounds : int
        The offset search's work budget [rounds].
    subframes : int
        P, the schedule's period [subframes] (with a ``[power]`` section).
    sleep_share_off : float
        Share of the subframes off from which a cell is listed as a sleep candidate.
    """

    enabled: bool = True
    training_drops: int = DEFAULT_TRAINING_DROPS
    held_out_drops: int = DEFAULT_HELD_OUT_DROPS
    values_db: tuple[float, ...] = Q_OFFSET_RANGE
    penalty_per_db: float = DEFAULT_PENALTY_PER_DB
    max_rounds: int = DEFAULT_MAX_ROUNDS
    subframes: int = DEFAULT_SUBFRAMES
    sleep_share_off: float = DEFAULT_SLEEP_SHARE_OFF

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "enabled", check_bool(self.enabled, "enabled"))
        for name in ("training_drops", "held_out_drops", "max_rounds", "subframes"):
            set_(self, name, check_count(getattr(self, name), name))
        for name in ("penalty_per_db", "sleep_share_off"):
            set_(self, name, check_real(getattr(self, name), name))
        set_(self, "values_db", tuple(check_values(self.values_db).tolist()))
