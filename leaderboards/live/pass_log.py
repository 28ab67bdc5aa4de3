"""The moves of a season's players kept for its rank events: each as the stretch of composites it
crossed, in arrays, so who passed one followed player is found by a vectorised scan when that
player is about to be told, not by a loop over every pass as it happens (live/rank_events.py).
"""

from __future__ import annotations

import numpy as np

from ..store import Move

# A move from no standing starts below every composite (composites are never negative).
BOTTOM = -1
# The moves kept at most (about eight seconds at 6,000 results a second); beyond them the oldest
# are let go, and the passes only they made go untold (the ranks they changed are still pushed).
MAX_KEPT_MOVES = 50_000
# Moves looked at first for one player's nearest passers (then four times as many, and so on).
_FIRST_WINDOW = 32


class PassLog:
    """The rising moves since the oldest pass not told yet, numbered from the season's first, in
    the order of where they ended: a player's nearest passers are the first moves ending above
    them that started below them, found by one binary search and a short walk."""

    def __init__(self) -> None:
        # Each move's end, start and number, sorted by end.
        self.afters = np.empty(0, dtype=np.int64)
        self.befores = np.empty(0, dtype=np.int64)
        self.numbers = np.empty(0, dtype=np.int64)
        # The movers by number, from `base` on.
        self.movers: list[str] = []
        self.base = 0

    @property
    def end(self) -> int:
        """The next move's number."""
        return self.base + len(self.movers)

    def append(self, moves: list[Move]) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """Keep the moves that rose (a fall passes no one); returns them as arrays, in order."""
        rising = [move for move in moves if move[1] is None or move[1] < move[2]]
        if not rising:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), []
        movers = [move[0] for move in rising]
        # Composites are below 2^53, exact in a double; no standing (None) reads as NaN.
        befores = np.array([move[1] for move in rising], dtype=np.float64)
        befores[np.isnan(befores)] = BOTTOM
        befores = befores.astype(np.int64)
        afters = np.array([move[2] for move in rising], dtype=np.int64)
        numbers = np.arange(self.end, self.end + len(rising), dtype=np.int64)
        order = np.argsort(afters, kind="stable")
        # One merge of a tick's few moves into the kept ones: O(kept), no sort of them all.
        places = np.searchsorted(self.afters, afters[order], side="right")
        self.afters = np.insert(self.afters, places, afters[order])
        self.befores = np.insert(self.befores, places, befores[order])
        self.numbers = np.insert(self.numbers, places, numbers[order])
        self.movers.extend(movers)
        return befores, afters, movers

    def trim(self, oldest_needed: int) -> None:
        """Let go of the moves before `oldest_needed`, and of the oldest beyond MAX_KEPT_MOVES."""
        start = max(oldest_needed, self.end - MAX_KEPT_MOVES) - self.base
        if start <= 0:
            return
        self.base += start
        del self.movers[:start]
        kept = self.numbers >= self.base
        self.afters, self.befores = self.afters[kept], self.befores[kept]
        self.numbers = self.numbers[kept]

    def passers(self, player_id: str, composite: int, since: int, size: int) -> dict[str, int]:
        """The nearest `size` players who passed (composite, player_id) in the moves numbered
        from `since`: passer -> the lowest composite a pass of theirs ended at.

        Passed is strictly inside the move's stretch, ties of composites broken by player id
        as Redis breaks them: (before, mover) < (composite, player_id) < (after, mover)."""
        key = (composite, player_id)
        nearest: dict[str, int] = {}
        position = int(np.searchsorted(self.afters, composite, side="left"))
        window, count = _FIRST_WINDOW, len(self.afters)
        while position < count and len(nearest) < size:
            stop = min(position + window, count)
            befores = self.befores[position:stop]
            numbers = self.numbers[position:stop]
            # Loose on ties: the exact rule is checked below on the few found.
            found = np.flatnonzero((befores <= composite) & (numbers >= since))
            for before, after, number in zip(
                befores[found].tolist(),
                self.afters[position:stop][found].tolist(),
                numbers[found].tolist(),
                strict=True,
            ):
                mover = self.movers[number - self.base]
                if (
                    mover != player_id
                    and mover not in nearest
                    and (before, mover) < key < (after, mover)
                ):
                    nearest[mover] = after
                    if len(nearest) >= size:
                        break
            position, window = stop, window * 4
        return nearest
