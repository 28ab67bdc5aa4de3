"""A simulated game server for `make demo`: posts match results for a few thousand players at a
steady rate through the REST API of a running `make run`, so the pages move at once.

It creates its own game-server key (revoked when it stops, by Ctrl-C, a SIGTERM or a closed
terminal; and expiring KEY_LIFETIME after its last renewal, so even a killed demo leaves no key
active for long), gives each player a display name
through `PUT /api/v1/players/{id}` the first time they play, then posts batches of results to
the default board's running season. A few players play far more often than the rest, so the top
of the board keeps changing hands. Ctrl-C stops it.

    python -m pages.demo [--players 3000] [--rate 10] [--batch 20] [--seconds 0]
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import random
import signal
import sys
import time
import uuid
from datetime import timedelta

import django
import httpx

ADJECTIVES = [
    "Swift",
    "Brave",
    "Silent",
    "Lucky",
    "Crimson",
    "Golden",
    "Iron",
    "Shadow",
    "Cosmic",
    "Frozen",
    "Mighty",
    "Clever",
    "Wild",
    "Rapid",
    "Noble",
    "Stormy",
    "Quiet",
    "Bold",
    "Electric",
    "Mystic",
]
NOUNS = [
    "Falcon",
    "Tiger",
    "Wizard",
    "Knight",
    "Otter",
    "Comet",
    "Ranger",
    "Phoenix",
    "Panda",
    "Viking",
    "Ninja",
    "Dragon",
    "Pilot",
    "Badger",
    "Lynx",
    "Golem",
    "Wolf",
    "Raven",
    "Fox",
    "Titan",
]


def display_name(index: int) -> str:
    adjective = ADJECTIVES[index % len(ADJECTIVES)]
    noun = NOUNS[(index * 7 + index // len(ADJECTIVES)) % len(NOUNS)]
    return f"{adjective} {noun} {index}"


# How long the demo's key stays valid after each renewal (every KEY_RENEWAL while it runs).
KEY_LIFETIME = timedelta(minutes=10)
KEY_RENEWAL = timedelta(minutes=1)


def create_key(name: str) -> tuple[object, str]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    django.setup()
    # Django's logging set-up would print every request of the HTTP client.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    # A model may be imported only once Django is set up, which this script does just above.
    from django.utils import timezone

    from matches.models import GameServer

    return GameServer.objects.create_key(name=name, expiry_date=timezone.now() + KEY_LIFETIME)


def renew_key(key_record: object) -> None:
    from django.utils import timezone

    key_record.expiry_date = timezone.now() + KEY_LIFETIME  # type: ignore[attr-defined]
    key_record.save(update_fields=["expiry_date"])  # type: ignore[attr-defined]


def _stop(signum: int, frame: object) -> None:
    """A SIGTERM or a closed terminal stops the demo as Ctrl-C does: its key is revoked."""
    raise KeyboardInterrupt


def wait_for_server(api: httpx.Client, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    told = False
    while True:
        try:
            if api.get("/healthz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        if not told:
            print(
                f"demo: waiting up to {seconds:.0f} s for a server at {api.base_url} "
                "(start `make run` in another terminal)",
                flush=True,
            )
            told = True
        if time.monotonic() >= deadline:
            sys.exit(f"No server answers at {api.base_url}: start `make run` in another terminal.")
        time.sleep(0.5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=None, help="the server (default http://HOST:PORT)")
    parser.add_argument("--players", type=int, default=3000)
    parser.add_argument("--rate", type=float, default=10.0, help="batches per second")
    parser.add_argument("--batch", type=int, default=20, help="results per batch (1-1000)")
    parser.add_argument("--seconds", type=float, default=0, help="stop after this long (0: never)")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    if not 1 <= args.batch <= 1000 or args.rate <= 0 or args.players < 1:
        parser.error("--batch must be 1-1000, --rate above 0 and --players at least 1")

    host, port = os.environ.get("HOST", "127.0.0.1"), os.environ.get("PORT", "8000")
    url = args.url or f"http://{host}:{port}"
    rng = random.Random(args.seed)
    run = uuid.uuid4().hex[:8]
    key_record, key = create_key(f"demo {run}")
    headers = {"Authorization": f"Api-Key {key}"}
    # Players with a low number play much more often: the top of the board stays busy.
    cum_weights = list(itertools.accumulate(1.0 / (i + 10) for i in range(args.players)))
    named: set[int] = set()
    posted = batches = 0
    started = time.monotonic()
    print(f"demo: {args.players} players, {args.rate:g} batches/s of {args.batch} to {url}")
    print(f"demo: open {url}/ and watch the board move; Ctrl-C stops")
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGHUP, _stop)
    # Ctrl-C stops it even when it was started with SIGINT ignored (a shell's background job),
    # where Python installs no handler of its own.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    renewed = time.monotonic()
    try:
        with httpx.Client(base_url=url, headers=headers, timeout=10) as api:
            wait_for_server(api, 60)
            next_at = time.monotonic()
            while not args.seconds or time.monotonic() - started < args.seconds:
                players = rng.choices(range(args.players), cum_weights=cum_weights, k=args.batch)
                for index in set(players) - named:
                    api.put(f"/api/v1/players/p{index}", json={"display_name": display_name(index)})
                    named.add(index)
                body = [
                    {
                        "player_id": f"p{index}",
                        "points": rng.randint(1, 100),
                        "match_id": f"demo-{run}-{batches}-{n}",
                    }
                    for n, index in enumerate(players)
                ]
                response = api.post("/api/v1/scores", json=body)
                if response.status_code >= 400:
                    print(f"demo: {response.status_code} {response.text[:200]}", file=sys.stderr)
                    time.sleep(1)
                else:
                    posted += len(body)
                batches += 1
                if batches % int(max(1, args.rate * 10)) == 0:
                    elapsed = time.monotonic() - started
                    print(f"demo: {posted:,} results in {elapsed:.0f} s ({posted / elapsed:.0f}/s)")
                if time.monotonic() - renewed >= KEY_RENEWAL.total_seconds():
                    renew_key(key_record)
                    renewed = time.monotonic()
                # A steady rate: no burst to catch up after a slow answer.
                next_at = max(next_at + 1 / args.rate, time.monotonic() - 1)
                time.sleep(max(0.0, next_at - time.monotonic()))
    except KeyboardInterrupt:
        pass
    finally:
        key_record.revoked = True
        key_record.save(update_fields=["revoked"])
    print(f"demo: stopped after {posted:,} results; its key is revoked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
