"""Staff accounts with chosen permissions, and a snapshot of Redis, for the tests that forge
admin requests without the permission an action needs (tests/*/test_admin_permissions.py)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import Permission, User

from leaderboards import store


def staff(client: Any, username: str, *codenames: str, every_view: bool = False) -> Any:
    """A staff account (not a superuser) with these permissions, logged in."""
    user = User.objects.create_user(username, password="pw", is_staff=True)
    permissions = Permission.objects.filter(codename__in=codenames)
    if every_view:
        permissions = permissions | Permission.objects.filter(codename__startswith="view_")
    user.user_permissions.set(permissions)
    client.force_login(user)
    return client


def redis_now() -> dict[str, bytes]:
    """Every leaderboard key of this run with its value, to compare before and after; not the
    web processes' per-minute response counts (config/building_blocks/minute_counts.py), which
    count a refused request too and are flushed whenever FLUSH_SECONDS have passed, nor the rate
    limits' windows (config/building_blocks/throttles.py), which expire a second or so after the
    fixture's own requests: a test slowed past that saw them vanish."""
    r = store.client()
    passing = (f"{settings.LEADERBOARD_KEY_PREFIX}ops:", f"{settings.LEADERBOARD_KEY_PREFIX}rate:")
    keys = sorted(r.scan_iter(match=f"{settings.LEADERBOARD_KEY_PREFIX}*"))
    return {key: r.dump(key) for key in keys if not key.startswith(passing)}
