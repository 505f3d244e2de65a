"""Settings a live network takes, fitted to the optimum and judged on users they were not
fitted to: per-cell offsets on the Q-OffsetRange value set, the best per-tier bias, and a
periodic subframe schedule of a power run's patterns with the cells to sleep
(docs/deploy.md)."""

from cellopt.deploy.judge import judgement, kept_share, summarize
from cellopt.deploy.offsets import (
    Q_OFFSET_RANGE,
    cell_offsets,
    evaluate,
    offsets_array,
    offsets_series,
    tier_offsets,
    tier_offsets_array,
)
from cellopt.deploy.schedule import (
    Schedule,
    evaluate_schedule,
    sleep_candidates,
    subframe_schedule,
)
from cellopt.deploy.settings import DeploySettings

__all__ = ["Q_OFFSET_RANGE", "DeploySettings", "Schedule", "cell_offsets", "evaluate",
           "evaluate_schedule", "judgement", "kept_share", "offsets_array", "offsets_series",
           "sleep_candidates", "subframe_schedule", "summarize", "tier_offsets", "tier_offsets_array"]
