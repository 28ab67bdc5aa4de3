"""A Redis Cluster node lost while results arrive, and restarted empty: PostgreSQL's commit is
the confirmation, reads of the lost node's seasons answer right or 503 while it is down, the
other nodes' seasons keep answering, and the service's own periodic tasks bring every board
back to exactly PostgreSQL's standings. Between the restart and that healing the lost node's
boards answer 503, never short or empty (their whole markers went with the node)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import redis

from tests.redis_cluster import LocalRedisCluster

from . import checks
from .deployment import Deployment
from .load import GameServer, Ingest, Ledger, Results
from .procs import wait_until

pytestmark = pytest.mark.fault

# Eight boards, a running season each: the seasons' hash tags spread them over the three nodes.
BOARDS = ["global", "arena", "blitz", "coop", "duel", "league", "ranked", "solo"]
# And one board sharded by player over the three nodes: whichever node is lost holds a shard.
SHARDED = "mega"
SHARDS = 3
# The others mark a node failed once it has not answered for this long (2 s instead of 15 s,
# so the outage below outlasts it). Without full coverage required they keep serving their own
# slots meanwhile, as docs/scaling.md ("A lost node") asks of a production cluster.
CLUSTER_OPTIONS = [
    "--cluster-node-timeout",
    "2000",
    "--cluster-require-full-coverage",
    "no",
]
DOWN_SECONDS = 8.0
OUTAGE_CONFIRMATIONS = 30
# How long a game server waits for an answer; writing a result needs PostgreSQL only.
REQUEST_TIMEOUT = 4.0
# How long a reader waits: a read of the lost node's season answers 503 after about 3 s (the
# event loop's read gives up on the node, then Django's); no answer at all counts as wrong.
READ_TIMEOUT = 10.0
# Reconciliation runs every minute (leaderboards/schedules.py); beat's first run comes a minute
# after it started, and the run rebuilds what the node lost.
HEAL_TIMEOUT = 150.0
TOP = 20
# A top page is built once a second and shared (LEADERBOARD_TOP_CACHE_SECONDS): one built just
# before the boards healed may still be served this long after.
TOP_PAGE_AGE = 1.0
# Pause between one board's reads: six boards stay under the public rate limit (100/s).
READ_PAUSE = 0.2


@pytest.fixture
def leaderboard_cluster() -> Iterator[LocalRedisCluster]:
    cluster = LocalRedisCluster(node_options=CLUSTER_OPTIONS)
    try:
        yield cluster.start()
    finally:
        cluster.stop()


class WrongAnswers(AssertionError):
    """Reads answered a wrong rank or board, not 503."""


@dataclass(frozen=True, slots=True)
class Read:
    board: str
    started: float
    finished: float
    status: int | None
    wrong: str | None  # how the answer differs from PostgreSQL's standings (None: it does not)


class Readers:
    """A client per board reading ranks and the top page of boards whose standings no longer
    change, each answer checked against PostgreSQL's standings of the board: a 200 must equal
    them exactly, anything else must be `503 unavailable`."""

    def __init__(self, base_url: str, standings: dict[str, list[tuple[str, int]]]) -> None:
        self.base_url = base_url
        self.standings = standings
        self.reads: list[Read] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.errors: list[BaseException] = []
        self.threads = [
            threading.Thread(target=self._run, args=(board,), name=f"read-{board}", daemon=True)
            for board in standings
        ]

    def __enter__(self) -> Readers:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(READ_TIMEOUT * 3)
        assert not any(t.is_alive() for t in self.threads), "a reader still reading"
        assert not self.errors, f"a reader failed: {self.errors[0]!r}"

    def _run(self, board: str) -> None:
        picker = random.Random(board)
        try:
            with httpx.Client(base_url=self.base_url, timeout=READ_TIMEOUT) as http:
                while not self.stopping.is_set():
                    self._read_rank(http, board, picker.randrange(len(self.standings[board])))
                    self._read_top(http, board)
                    time.sleep(READ_PAUSE)
        except BaseException as exc:  # reported on exit: a thread must not fail silently
            self.errors.append(exc)

    def _read_rank(self, http: httpx.Client, board: str, index: int) -> None:
        standings = self.standings[board]
        player_id, points = standings[index]
        want = (player_id, index + 1, points, len(standings))
        self._read(
            http,
            board,
            f"/api/v1/leaderboard/players/{player_id}",
            {"board": board},
            lambda body: (body["player_id"], body["rank"], body["points"], body["total_players"]),
            want,
        )

    def _read_top(self, http: httpx.Client, board: str) -> None:
        standings = self.standings[board]
        want = ([(i + 1, *standing) for i, standing in enumerate(standings[:TOP])], len(standings))
        self._read(
            http,
            board,
            "/api/v1/leaderboard/top",
            {"board": board, "limit": str(TOP)},
            lambda body: (
                [(e["rank"], e["player_id"], e["points"]) for e in body["entries"]],
                body["total_players"],
            ),
            want,
        )

    def _read(
        self,
        http: httpx.Client,
        board: str,
        path: str,
        params: dict[str, str],
        have_of: Callable[[Any], object],
        want: object,
    ) -> None:
        started = time.monotonic()
        try:
            response = http.get(path, params=params)
        except httpx.HTTPError as exc:
            self._add(Read(board, started, time.monotonic(), None, f"no answer: {exc!r}"))
            return
        finished = time.monotonic()
        wrong = None
        if response.status_code == 200:
            have = have_of(response.json())
            if have != want:
                wrong = f"{have} instead of {want}"
        elif response.status_code != 503 or response.json()["error"]["code"] != "unavailable":
            wrong = f"{response.status_code} {response.text[:300]}"
        self._add(Read(board, started, finished, response.status_code, wrong))

    def _add(self, read: Read) -> None:
        with self.lock:
            self.reads.append(read)

    def answered(self, boards: set[str], start: float, end: float) -> list[Read]:
        """The reads of these boards answered between start and end."""
        with self.lock:
            return [r for r in self.reads if r.board in boards and start <= r.finished < end]


def summary(reads: list[Read]) -> str:
    counts: dict[str, int] = {}
    for read in reads:
        name = f"{read.status} {'wrong' if read.wrong else 'right'}"
        counts[name] = counts.get(name, 0) + 1
    slowest = max((r.finished - r.started for r in reads), default=0.0)
    return f"{dict(sorted(counts.items()))}, slowest {slowest:.2f} s"


def board_standings(deployment: Deployment, season_id: int) -> list[tuple[str, int]]:
    """(player, points) in rank order, from PostgreSQL: composite scores best first, equal ones
    in the ZSET's order (player ids descending)."""
    composites = checks.expected_standings(deployment.db())[season_id]
    points = dict(
        deployment.db().execute(
            "SELECT player_id, points FROM matches_playertotal WHERE season_id = %s", [season_id]
        )
    )
    ranked = sorted(composites, key=lambda p: (composites[p], p), reverse=True)
    return [(player_id, points[player_id]) for player_id in ranked]


def standings_equal(deployment: Deployment, season_ids: list[int]) -> bool:
    """Whether these seasons' ZSETs hold exactly PostgreSQL's players and composite scores."""
    expected = checks.expected_standings(deployment.db())
    shards = {season.id: season.shards for season in checks.seasons(deployment.db())}
    with deployment.data_redis() as r:
        for season_id in season_ids:
            have = checks.season_members(r, deployment.prefix, season_id, shards[season_id])
            if have != expected[season_id]:
                return False
    return True


@dataclass(frozen=True, slots=True)
class Spread:
    seasons: dict[str, int]  # board -> running season id
    boards_on: dict[int, list[str]]  # node port -> boards whose season it holds
    lost: int  # the node to lose: the one holding most seasons


def boards_spread(
    deployment: Deployment, cluster: LocalRedisCluster, results: Results, ledger: Ledger
) -> Spread:
    """Every board with players (mirrored), and which node holds which board's season (the
    sharded board's season is on every node, and in no list here)."""
    deployment.boards_add(BOARDS[1:])
    deployment.boards_add([SHARDED], shards=SHARDS)
    seasons = deployment.running_seasons()
    assert sorted(seasons) == sorted([*BOARDS, SHARDED])
    server = GameServer(deployment.base_urls[0], deployment.key, ledger, timeout=REQUEST_TIMEOUT)
    for board in [*BOARDS, SHARDED]:
        for _ in range(2):
            answer = server.post([{**result, "board": board} for result in results.batch(40)])
            assert answer.status == 200, answer
    deployment.settle(timeout=30, sweep=False)
    held = cluster.keys_by_port(f"{deployment.prefix}*")
    boards_on: dict[int, list[str]] = {port: [] for port in cluster.ports}
    for board in BOARDS:
        key = checks.standings_key(deployment.prefix, seasons[board])
        (port,) = [port for port, keys in held.items() if key in keys]
        boards_on[port].append(board)
    lost = max(cluster.ports, key=lambda port: len(boards_on[port]))
    return Spread(seasons=seasons, boards_on=boards_on, lost=lost)


def test_a_node_restarted_empty_heals_from_postgres_with_nothing_lost(
    leaderboard_cluster: LocalRedisCluster, deployment: Deployment
):
    # given: eight boards and one sharded over the three primaries of a cluster, with players,
    # and the periodic tasks running (beat, the mirror's worker, the jobs worker)
    deployment.start(leaderboard_cluster=leaderboard_cluster, scheduled=True)
    ledger = Ledger()
    results = Results(players=300, seed=5)
    spread = boards_spread(deployment, leaderboard_cluster, results, ledger)
    # and: on each node the first board keeps receiving results and the others stand still,
    # so their reads can be checked exactly; the node to lose holds both kinds
    hot = sorted(held[0] for held in spread.boards_on.values() if held)
    # (the sharded board stands still too, and loses the shard on that node)
    on_lost = set(spread.boards_on[spread.lost][1:]) | {SHARDED}
    elsewhere = set(BOARDS) - set(hot) - on_lost
    assert on_lost and elsewhere, spread.boards_on
    print(f"boards by node {spread.boards_on}, losing {spread.lost}, results for {hot}")
    standings = {
        board: board_standings(deployment, spread.seasons[board]) for board in on_lost | elsewhere
    }
    servers = [
        GameServer(deployment.base_urls[0], deployment.key, ledger, timeout=REQUEST_TIMEOUT)
        for _ in range(3)
    ]
    pick = random.Random(11)

    begun = time.monotonic()
    with (
        Readers(deployment.base_urls[0], standings) as readers,
        Ingest(
            servers=servers, next_body=lambda _: {**results.single(), "board": pick.choice(hot)}
        ) as ingest,
    ):
        ingest.wait_for_confirmed(ledger, ledger.confirmed_count() + 50, timeout=30)
        wait_until(
            lambda: (
                len(readers.answered(set(standings), begun, time.monotonic())) >= 4 * len(standings)
            ),
            timeout=30,
            what="reads of every board before the outage",
        )

        # when: the node is lost while results keep arriving
        leaderboard_cluster.kill_node(spread.lost)
        down = time.monotonic()

        def confirmed_while_down() -> int:
            ledger.fail_on_unexpected()
            with ledger.lock:
                return sum(1 for a in ledger.answers if a.started > down and a.status in (200, 201))

        wait_until(
            lambda: (
                confirmed_while_down() >= OUTAGE_CONFIRMATIONS
                and time.monotonic() - down > DOWN_SECONDS
            ),
            timeout=30,
            what=lambda: (
                f"{OUTAGE_CONFIRMATIONS} results confirmed while the node is down (got "
                f"{confirmed_while_down()}; answers {ledger.statuses()}; {ledger.unexpected[:2]})"
            ),
        )
        # and: it comes back empty, on its port and with its nodes.conf, so holding its slots
        restarting = time.monotonic()
        leaderboard_cluster.restart_empty(spread.lost)

        # then: the service's own periodic tasks put back what the node lost: its boards that
        # stand still equal PostgreSQL's standings again (the one receiving results is checked
        # with all the others once the results stop, below)
        def healed() -> bool:
            ledger.fail_on_unexpected()
            try:
                return standings_equal(deployment, [spread.seasons[board] for board in on_lost])
            except redis.RedisError:
                return False  # the node still coming back answers this check's reads too

        wait_until(
            healed,
            timeout=HEAL_TIMEOUT,
            interval=0.5,
            what=lambda: f"the lost node's boards healed ({deployment.standings_problems()})",
        )
        whole = time.monotonic()
        time.sleep(TOP_PAGE_AGE + 3)  # reads and results once healed
        ingest.stop()
        ended = time.monotonic()

    phases = {
        "before": (begun, down),
        "down": (down, restarting),
        "restarted": (restarting, whole + TOP_PAGE_AGE),
        "healed": (whole + TOP_PAGE_AGE, ended),
    }
    for name, (start, end) in phases.items():
        print(
            f"{name} ({end - start:.1f} s): lost node's boards "
            f"{summary(readers.answered(on_lost, start, end))}; other nodes' boards "
            f"{summary(readers.answered(elsewhere, start, end))}"
        )
    print(f"answers to game servers {ledger.statuses()}")
    print(
        "reconciliation runs that found drift (season, kind, checked, drift, fixed, started):",
        deployment.db()
        .execute(
            "SELECT season_id, kind, checked, drift, fixed, started_at"
            " FROM leaderboards_reconciliationrun WHERE drift > 0 ORDER BY started_at"
        )
        .fetchall(),
    )

    # then: the API confirmed every result, during the outage too
    assert ledger.unexpected == [], ledger.unexpected[:5]
    assert ledger.unconfirmed() == set()
    # and: reads of the lost node's boards answered right or 503 while it was down (a wrong
    # rank never), and the other nodes' boards kept answering right throughout
    wrong = [r for r in readers.answered(on_lost, down, restarting) if r.wrong]
    assert wrong == [], wrong[:3]
    assert any(r.status == 503 for r in readers.answered(on_lost, down, restarting))
    for name, (start, end) in phases.items():
        answers = readers.answered(elsewhere, start, end)
        assert answers and all(r.wrong is None and r.status == 200 for r in answers), (
            name,
            [r for r in answers if r.wrong or r.status != 200][:3],
        )
    # and: once healed, every board answers right again
    healed_reads = readers.answered(on_lost | elsewhere, *phases["healed"])
    assert healed_reads and all(r.status == 200 and not r.wrong for r in healed_reads)
    # and: PostgreSQL holds every confirmed result, and the cluster exactly its standings
    deployment.settle(timeout=30, sweep=False)
    deployment.assert_invariant(confirmed=ledger.confirmed, sent=ledger.sent)
    print(f"down {restarting - down:.1f} s; healed {whole - restarting:.1f} s after the restart")


def test_reads_of_a_node_restarted_empty_answer_right_or_503_until_it_is_healed(
    leaderboard_cluster: LocalRedisCluster, deployment: Deployment
):
    # given: boards spread over the cluster, with players, and nothing run to heal them
    deployment.start(leaderboard_cluster=leaderboard_cluster)
    ledger = Ledger()
    spread = boards_spread(deployment, leaderboard_cluster, Results(players=300, seed=5), ledger)
    on_lost = set(spread.boards_on[spread.lost])
    standings = {board: board_standings(deployment, spread.seasons[board]) for board in on_lost}

    # when: their node is lost and comes back empty
    leaderboard_cluster.kill_node(spread.lost)
    leaderboard_cluster.restart_empty(spread.lost)
    restarted = time.monotonic()

    # then: their reads answer right or 503, never a wrong rank or a short board
    with Readers(deployment.base_urls[0], standings) as readers:
        wait_until(
            lambda: len(readers.answered(on_lost, restarted, time.monotonic())) >= 20,
            timeout=30,
            what="reads of the lost node's boards",
        )
    wrong = [r for r in readers.answered(on_lost, restarted, time.monotonic()) if r.wrong]
    if wrong:
        raise WrongAnswers(f"{len(wrong)} wrong answers, the first: {wrong[:3]}")
