"""Live leaderboard pushes over WebSockets (docs/websocket.md).

Mirror workers publish "season N changed" notices (notices.py) to the channel-layer group of the
season; each web process's ticker (ticker.py) is that group's one member for all of the
process's sockets. At most once per tick it reads what its sockets follow in one Redis round
trip (reading.py), compares it with what each season's sockets were told last
(season_sockets.py), and puts only what changed in each socket's outbox (outbox.py,
delivery.py), spending the fan-out budget (budget.py) on what other players' results changed.
The messages carry the REST reads' shapes (messages.py). Each client address may hold only so
many sockets open in a process (addresses.py).
"""

from .addresses import TooManySockets, address_sockets
from .messages import next_season_slug
from .notices import board_hidden, season_closed, season_group, standings_changed
from .outbox import CLOSE_SEASON_CLOSED, CLOSE_SLOW_CLIENT, Subscriber
from .ticker import (
    MAX_PLAYERS_PER_CONNECTION,
    REFRESH_SECONDS,
    TICK_SECONDS,
    follow,
    subscribe,
    unfollow,
    unsubscribe,
)

__all__ = [
    "CLOSE_SEASON_CLOSED",
    "CLOSE_SLOW_CLIENT",
    "MAX_PLAYERS_PER_CONNECTION",
    "REFRESH_SECONDS",
    "TICK_SECONDS",
    "Subscriber",
    "TooManySockets",
    "address_sockets",
    "board_hidden",
    "follow",
    "next_season_slug",
    "season_closed",
    "season_group",
    "standings_changed",
    "subscribe",
    "unfollow",
    "unsubscribe",
]
