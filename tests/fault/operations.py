"""The campaign's operator: bans and unbans players, voids results and rebuilds seasons during the
run, each as an operator would (a process of its own: tests/fault/operations_cli.py, or
`manage.py rebuild_leaderboard`), trying again after a failure as an operator would. Afterwards
it checks that each action is in effect and in the audit log exactly once."""

from __future__ import annotations

import json
import random
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import httpx
import psycopg

from .deployment import Deployment
from .procs import PYTHON, ROOT

ATTEMPTS = 4
COMMAND_TIMEOUT = 120.0
KINDS = ("ban", "void", "rebuild", "unban")


@dataclass
class Action:
    number: int
    kind: str  # ban, unban, void, rebuild
    reason: str
    at: float  # seconds since the campaign began
    player: str = ""
    result_id: int = 0
    board: str = ""
    season: str = ""
    # done, unchanged (nothing to do), refused:<code> (the service said no, rightly), failed
    outcome: str = ""
    attempts: int = 0
    failed_attempts: int = 0
    error: str = ""


@dataclass
class OperatorLog:
    actions: list[Action] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def by_kind(self) -> dict[str, dict[str, int]]:
        with self.lock:
            kinds: dict[str, Counter[str]] = {}
            for action in self.actions:
                kinds.setdefault(action.kind, Counter())[action.outcome.split(":")[0]] += 1
            return {kind: dict(tally) for kind, tally in sorted(kinds.items())}


class Operator:
    """One operator at work: an action every `every` seconds (the kinds in `first` first, in
    order, then at random), each run to its end before the next."""

    def __init__(
        self,
        *,
        deployment: Deployment,
        boards: Sequence[str],
        seed: int,
        every: float,
        began: float,
        first: Sequence[str] = KINDS,
    ) -> None:
        self.deployment = deployment
        self.boards = list(boards)
        self.random = random.Random(seed)
        self.every = every
        self.began = began
        self.first = list(first)
        self.log = OperatorLog()
        self.banned: set[str] = set()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="operator", daemon=True)
        self.errors: list[BaseException] = []

    def start(self) -> Operator:
        self.thread.start()
        return self

    def _run(self) -> None:
        try:
            while not self.stopping.wait(self.random.uniform(0.5, 1.5) * self.every):
                planned = bool(self.first)
                weights = [3, 3, 1, 2] if self.banned else [3, 3, 1, 0]
                kind = self.first.pop(0) if planned else self.random.choices(KINDS, weights)[0]
                action = self._act(kind, len(self.log.actions) + 1)
                if action is not None:
                    with self.log.lock:
                        self.log.actions.append(action)
                elif planned:
                    self.first.insert(0, kind)  # nothing to act on yet: the next turn
        except BaseException as exc:  # reported by finish()
            self.errors.append(exc)

    def _db(self) -> psycopg.Connection:
        return self.deployment.cluster.connect(self.deployment.database)

    def _act(self, kind: str, number: int) -> Action | None:
        action = Action(number, kind, f"chaos action {number}", time.monotonic() - self.began)
        try:
            with self._db() as conn:
                if not self._choose(conn, action):
                    return None
        except psycopg.Error:
            return None  # PostgreSQL down: the operator looks again later
        for _ in range(ATTEMPTS):
            action.attempts += 1
            ok, output = self._command(action)
            if ok:
                action.outcome = output
                if action.outcome == "unchanged" and action.failed_attempts:
                    # An earlier attempt committed before it was cut off.
                    action.outcome = "done"
                break
            action.failed_attempts += 1
            action.error = output[-800:]
            if self.stopping.wait(3.0):
                break
        else:
            action.outcome = "failed"
        if not action.outcome:
            action.outcome = "failed"
        if action.kind == "ban" and action.outcome == "done":
            self.banned.add(action.player)
        if action.kind == "unban" and action.outcome == "done":
            self.banned.discard(action.player)
        return action

    def _choose(self, conn: psycopg.Connection, action: Action) -> bool:
        """Pick the action's target from what PostgreSQL holds now; False: nothing to act on."""
        if action.kind == "unban":
            if not self.banned:
                return False
            action.player = self.random.choice(sorted(self.banned))
            return True
        if action.kind == "ban":
            board = self.random.choice(self.boards)
            row = conn.execute(
                """
                SELECT t.player_id FROM matches_playertotal t
                JOIN seasons_season s ON s.id = t.season_id
                JOIN seasons_board b ON b.id = s.board_id
                JOIN matches_player p ON p.player_id = t.player_id
                WHERE b.slug = %s AND s.state = 'open' AND p.banned_at IS NULL
                ORDER BY t.updated_at DESC LIMIT 1 OFFSET %s
                """,
                [board, self.random.randrange(50)],
            ).fetchone()
            if row is None:
                return False
            action.player = row[0]
            return True
        if action.kind == "void":
            bounds = conn.execute("SELECT min(id), max(id) FROM matches_matchresult").fetchone()
            if bounds is None or bounds[0] is None:
                return False
            row = conn.execute(
                """
                SELECT r.id, r.player_id, b.slug, s.slug FROM matches_matchresult r
                JOIN seasons_season s ON s.id = r.season_id
                JOIN seasons_board b ON b.id = s.board_id
                WHERE r.id >= %s AND r.counted AND s.state = 'open'
                ORDER BY r.id LIMIT 1
                """,
                [self.random.randint(bounds[0], bounds[1])],
            ).fetchone()
            if row is None:
                return False
            action.result_id, action.player, action.board, action.season = row
            return True
        board = self.random.choice(self.boards)
        row = conn.execute(
            """
            SELECT s.slug FROM seasons_season s JOIN seasons_board b ON b.id = s.board_id
            WHERE b.slug = %s AND s.state = 'open' AND s.starts_at <= now() AND now() < s.ends_at
            """,
            [board],
        ).fetchone()
        if row is None:
            return False
        action.board, action.season = board, row[0]
        return True

    def _command(self, action: Action) -> tuple[bool, str]:
        """Run the action's command once: (True, outcome) or (False, what it printed)."""
        if action.kind == "rebuild":
            args = [
                "manage.py",
                "rebuild_leaderboard",
                "--board",
                action.board,
                "--season",
                action.season,
                "--no-progress",
            ]
        else:
            args = ["-m", "tests.fault.operations_cli", action.kind, "--reason", action.reason]
            args += ["--player", action.player] if action.player else []
            args += ["--result", str(action.result_id)] if action.kind == "void" else []
        try:
            done = subprocess.run(
                [str(PYTHON), *args],
                cwd=ROOT,
                env=self.deployment.env,
                capture_output=True,
                text=True,
                timeout=COMMAND_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return False, f"not done within {COMMAND_TIMEOUT:.0f} s"
        if done.returncode != 0:
            return False, f"exit {done.returncode}: {done.stdout[-300:]} {done.stderr[-1500:]}"
        if action.kind == "rebuild":
            return True, "done"
        answer = json.loads(done.stdout.strip().splitlines()[-1])
        if answer["outcome"] == "refused":
            return True, f"refused:{answer['code']}"
        return True, str(answer["outcome"])

    def finish(self, timeout: float = COMMAND_TIMEOUT * ATTEMPTS + 30) -> list[str]:
        self.stopping.set()
        self.thread.join(timeout)
        problems = [f"the operator failed: {exc!r}" for exc in self.errors]
        if self.thread.is_alive():
            problems.append(f"the operator still acting {timeout:.0f} s after the stop")
        return problems


def audit_problems(conn: psycopg.Connection, actions: Sequence[Action]) -> list[str]:
    """Each action that took effect is in the audit log exactly once, one that did nothing not
    at all, one whose every attempt failed at most once; and no row the operator did not do."""
    problems: list[str] = []
    rows = conn.execute(
        "SELECT action, board, season, player_id, reason FROM audit_operatoraction"
    ).fetchall()
    by_reason: dict[str, list[tuple[str, str, str, str]]] = {}
    rebuilds: Counter[tuple[str, str]] = Counter()
    for kind, board, season, player_id, reason in rows:
        if kind == "rebuild":
            rebuilds[(board, season)] += 1
        elif reason.startswith("chaos action "):
            by_reason.setdefault(reason, []).append((kind, board, season, player_id))
    kind_of = {"ban": "ban", "unban": "unban", "void": "void_result"}
    for action in actions:
        if action.kind == "rebuild":
            continue
        found = by_reason.pop(action.reason, [])
        wrong = [row for row in found if (row[0], row[3]) != (kind_of[action.kind], action.player)]
        allowed = {"done": {1}, "failed": {0, 1}}.get(action.outcome, {0})
        if wrong or len(found) not in allowed:
            problems.append(
                f"{action.kind} #{action.number} ({action.player}, {action.outcome}): "
                f"{len(found)} audit rows {found[:3]}, expected {sorted(allowed)}"
            )
    for reason, found in by_reason.items():
        problems.append(f"audit rows of no action of the operator's ({reason}): {found[:3]}")
    done: Counter[tuple[str, str]] = Counter()
    failed: Counter[tuple[str, str]] = Counter()
    for action in actions:
        if action.kind == "rebuild":
            done[(action.board, action.season)] += action.outcome == "done"
            failed[(action.board, action.season)] += action.failed_attempts
    for season in done.keys() | rebuilds.keys():
        if not done[season] <= rebuilds[season] <= done[season] + failed[season]:
            problems.append(
                f"rebuild of {season}: {rebuilds[season]} audit rows for {done[season]} done "
                f"and {failed[season]} failed attempts"
            )
    return problems


def effect_problems(
    conn: psycopg.Connection, actions: Sequence[Action], base_url: str
) -> list[str]:
    """Each ban and void in effect: PostgreSQL holds the last word of the operator on each player,
    a banned player's results since the ban are uncounted and the API answers them as banned,
    an unbanned one is ranked again; a voided result is uncounted."""
    problems: list[str] = []
    last: dict[str, Action] = {}
    for action in actions:
        if action.kind in ("ban", "unban"):
            if action.outcome == "failed":
                last.pop(action.player, None)  # unknown: it may have landed or not
            elif action.outcome == "done":
                last[action.player] = action
    states = dict(
        conn.execute(
            "SELECT player_id, banned_at IS NOT NULL FROM matches_player WHERE player_id = ANY(%s)",
            [list(last)],
        ).fetchall()
    )
    for player, action in last.items():
        if states.get(player) != (action.kind == "ban"):
            problems.append(f"{player}: {action.kind} #{action.number} not in effect")
    counted = conn.execute(
        """
        SELECT r.player_id, count(*) FROM matches_matchresult r
        JOIN matches_player p ON p.player_id = r.player_id
        WHERE p.banned_at IS NOT NULL AND r.received_at > p.banned_at AND r.counted
        GROUP BY r.player_id
        """
    ).fetchall()
    if counted:
        problems.append(f"results of banned players counted since their ban: {counted[:5]}")
    voided = [a.result_id for a in actions if a.kind == "void" and a.outcome == "done"]
    still = conn.execute(
        "SELECT id FROM matches_matchresult WHERE id = ANY(%s) AND (counted OR voided_at IS NULL)",
        [voided],
    ).fetchall()
    if still:
        problems.append(f"voided results still counted: {still[:5]}")
    problems += _api_problems(conn, last, base_url)
    return problems


def _api_problems(conn: psycopg.Connection, last: dict[str, Action], base_url: str) -> list[str]:
    """The public API on the players the operator banned or unbanned, on each open season they
    have a total in."""
    problems: list[str] = []
    rows = conn.execute(
        """
        SELECT t.player_id, b.slug, s.slug, t.points FROM matches_playertotal t
        JOIN seasons_season s ON s.id = t.season_id JOIN seasons_board b ON b.id = s.board_id
        WHERE t.player_id = ANY(%s) AND s.state = 'open'
        """,
        [list(last)],
    ).fetchall()
    with httpx.Client(base_url=base_url, timeout=10) as http:
        for player, board, season, points in rows[:40]:
            response = http.get(
                f"/api/v1/leaderboard/players/{player}", params={"board": board, "season": season}
            )
            body = response.json()
            if last[player].kind == "ban":
                code = body.get("error", {}).get("code") if response.status_code == 404 else None
                if code != "player_banned":
                    problems.append(f"banned {player} on {board}/{season}: {response.text[:200]}")
            elif response.status_code != 200 or body.get("points") != points:
                problems.append(
                    f"unbanned {player} on {board}/{season} (total {points}): "
                    f"{response.status_code} {response.text[:200]}"
                )
    return problems
