"""What hiding a board sets off above this app: the live sockets open on its seasons are
closed. The leaderboards app, which holds the sockets, connects its handler here when Django
starts (as it connects the season jobs to seasons/jobs.py); hiding only names the board's
seasons once the change has committed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

logger = logging.getLogger(__name__)

BoardHiddenHandler = Callable[[list[int]], None]

_handlers: list[BoardHiddenHandler] = []


def connect(*, board_hidden: BoardHiddenHandler) -> None:
    """Called once per process: `board_hidden(season_ids)` closes the seasons' sockets."""
    _handlers[:] = [board_hidden]


def board_hidden_committed(season_ids: list[int]) -> None:
    """After a board was hidden: the hide has committed, so a failing handler is only logged
    (a socket left open shows the board until it reconnects, which the hidden board refuses)."""
    for handler in _handlers:
        try:
            handler(season_ids)
        except Exception:
            logger.warning("could not close the sockets of seasons %s", season_ids, exc_info=True)
