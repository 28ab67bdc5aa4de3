"""An operator's correction run as an operator runs one: a process of its own on the deployment's
settings, calling the service the admin's action calls (ban, unban, void a result). Prints one
JSON line, {"outcome": "done" | "unchanged"} or {"outcome": "refused", "code": ...}, and fails
(a traceback, a non-zero exit) on anything else.

    python -m tests.fault.operations_cli ban --player p7 --reason "aimbot"
"""

from __future__ import annotations

import argparse
import json
import os

import django


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("action", choices=["ban", "unban", "void"])
    parser.add_argument("--player", default="")
    parser.add_argument("--result", type=int, default=0)
    parser.add_argument("--reason", required=True)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    django.setup()
    # Only once Django is set up: the services import the models.
    from config.building_blocks.errors import DomainError
    from matches.corrections import result_void
    from matches.models import Player
    from matches.services import player_ban, player_unban

    try:
        if args.action == "ban":
            before = Player.objects.get(player_id=args.player).banned_at
            player_ban(player_id=args.player, reason=args.reason)
            outcome = "done" if before is None else "unchanged"
        elif args.action == "unban":
            before = Player.objects.get(player_id=args.player).banned_at
            player_unban(player_id=args.player, reason=args.reason)
            outcome = "done" if before is not None else "unchanged"
        else:
            changed = result_void(result_id=args.result, reason=args.reason, actor=None)
            outcome = "done" if changed else "unchanged"
    except DomainError as exc:
        print(json.dumps({"outcome": "refused", "code": exc.code}))
        return 0
    print(json.dumps({"outcome": outcome}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
