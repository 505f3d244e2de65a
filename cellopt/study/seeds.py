"""Drop seeds: the build seed of each drop of a scenario, one spawned stream per drop."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from cellopt.checks import check_count
from cellopt.errors import check_memory

__all__ = ["DROP_SEED_BYTES", "MAX_DROPS", "DropSeeds", "drop_seed", "drop_seeds"]

#: Most drops a scenario may ask for: far beyond any sweep that can finish.
MAX_DROPS = 1_000_000
#: Memory per seed of a materialized seed list [bytes] (a Python int and its list slot,
#: with room for its JSON copy).
DROP_SEED_BYTES = 100


def drop_seed(base: int, drop: int) -> int:
    """The build seed of drop `drop`: the state of the `drop`-th child of ``SeedSequence(base)``.

    ``SeedSequence(base).spawn(n)[k]`` is ``SeedSequence(base, spawn_key=(k,))``, so any
    drop's seed is computed alone, without spawning the ones before it.
    """
    base = check_count(base, "base", fix="give a seed ≥ 0")
    drop = check_count(drop, "drop", fix="give a drop index ≥ 0")
    return int(np.random.SeedSequence(base, spawn_key=(drop,)).generate_state(1)[0])


def drop_seeds(base: int, drops: int) -> list[int]:
    """The build seed of each drop: one spawned ``SeedSequence(base)`` child per drop.

    Raises
    ------
    ValidationError
        A base or count that is not a whole number ≥ 0.
    ResourceLimitError
        When the list would not fit in memory (use :class:`DropSeeds` for one seed).
    """
    base = check_count(base, "base", fix="give a seed ≥ 0")
    drops = check_count(drops, "drops", fix="give a number of drops ≥ 0")
    check_memory(float(drops) * DROP_SEED_BYTES, f"drop_seeds: {drops:,} drops",
                 "use fewer drops")
    return [drop_seed(base, k) for k in range(drops)]


class DropSeeds(Sequence[int]):
    """The build seeds of drops ``0 .. drops − 1``, each computed when it is read.

    Equal, item by item, to ``drop_seeds(base, drops)``, and compares equal to any
    sequence with the same seeds; nothing of size `drops` is ever built.

    Parameters
    ----------
    base : int
        The scenario's base seed (≥ 0).
    drops : int
        Number of drops (≥ 0).
    """

    def __init__(self, base: int, drops: int):
        self.base = check_count(base, "base", fix="give a seed ≥ 0")
        self.drops = check_count(drops, "drops", fix="give a number of drops ≥ 0")

    def __len__(self) -> int:
        return self.drops

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [drop_seed(self.base, k) for k in range(*index.indices(self.drops))]
        k = index + self.drops if index < 0 else index
        if not 0 <= k < self.drops:
            raise IndexError(f"drop {index} out of range for {self.drops} drops")
        return drop_seed(self.base, k)

    def __iter__(self) -> Iterator[int]:
        return (drop_seed(self.base, k) for k in range(self.drops))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DropSeeds):
            return (self.base, self.drops) == (other.base, other.drops)
        if not isinstance(other, Sequence) or isinstance(other, str) or len(other) != len(self):
            return NotImplemented if not isinstance(other, Sequence) else False
        return all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"DropSeeds(base={self.base}, drops={self.drops:,})"
