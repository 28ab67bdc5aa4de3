"""Answers a process may reuse for a moment: bounded in count and in age, safe across threads.

Every in-process cache of the service is one of these, so none can grow with what clients ask
for (a crawler of `?page=N` only turns the oldest answers out).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from cachetools import TTLCache

Answer = TypeVar("Answer")

_MISSING = object()


class RecentAnswers(Generic[Answer]):
    """At most `maxsize()` answers, each reused for `seconds()` (0 or less: never cached).

    Both are read on every call, so a changed setting applies at once (the entries go with it).
    """

    def __init__(self, *, seconds: Callable[[], float], maxsize: Callable[[], int]) -> None:
        self._seconds = seconds
        self._maxsize = maxsize
        self._lock = threading.Lock()
        self._answers: TTLCache[Hashable, Answer] | None = None

    def _current(self) -> TTLCache[Hashable, Answer] | None:
        """The entries under the settings of now (None: caching is off). Call with the lock."""
        seconds, maxsize = self._seconds(), self._maxsize()
        if seconds <= 0:
            return None
        answers = self._answers
        if answers is None or answers.ttl != seconds or answers.maxsize != maxsize:
            answers = self._answers = TTLCache(maxsize=maxsize, ttl=seconds)
        return answers

    def get_or_build(self, key: Hashable, build: Callable[[], Answer]) -> Answer:
        """The answer cached under `key`, or `build()`'s, which is then kept. Two threads that
        miss together both build; callers that must build once hold their own lock."""
        with self._lock:
            answers = self._current()
            cached = _MISSING if answers is None else answers.get(key, _MISSING)
        if cached is not _MISSING:
            return cached  # type: ignore[return-value]
        answer = build()
        if answers is not None:
            with self._lock:
                if self._answers is answers:
                    answers[key] = answer
        return answer

    def peek(self, key: Hashable) -> Answer | None:
        """The answer cached under `key`, or None; never builds (for the event loop, which
        must not wait on a build)."""
        with self._lock:
            answers = self._current()
            cached = _MISSING if answers is None else answers.get(key, _MISSING)
        return None if cached is _MISSING else cached  # type: ignore[return-value]

    def put(self, key: Hashable, answer: Answer) -> None:
        with self._lock:
            answers = self._current()
            if answers is not None:
                answers[key] = answer

    def clear(self) -> None:
        with self._lock:
            self._answers = None

    def __len__(self) -> int:
        with self._lock:
            return 0 if self._answers is None else len(self._answers)
