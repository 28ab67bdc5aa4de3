"""A player's clan and segment values, set with the profile write: checked against the clans
that exist and the dimensions boards declare, then stored in the profile's transaction."""

from __future__ import annotations

from collections.abc import Mapping

from config.building_blocks.errors import InvalidInput
from seasons.models import Board

from ..models import Clan, Player, PlayerSegment
from .refreshes import player_refresh_owe

# "No change" for the clan, as distinct from None (leave the clan).
UNCHANGED = object()


def memberships_check(
    *,
    clan: object = UNCHANGED,
    segments: Mapping[str, str | None] | None = None,
    allowed_boards: frozenset[str] | None = None,
) -> None:
    """`400 clan_not_found` for a clan that does not exist; `400 unknown_segment_dimension`
    for a dimension no board (of the key's scope) declares."""
    if isinstance(clan, str) and not Clan.objects.filter(clan_id=clan).exists():
        raise InvalidInput(
            f"Unknown clan '{clan}': create it first (PUT /api/v1/clans/{{clan_id}}).",
            code="clan_not_found",
            details={"clan": clan},
        )
    if not segments:
        return
    boards = Board.objects.all()
    if allowed_boards is not None:
        boards = boards.filter(slug__in=allowed_boards)
    declared = sorted(
        {d for names in boards.values_list("segment_dimensions", flat=True) for d in names}
    )
    unknown = sorted(set(segments) - set(declared))
    if unknown:
        raise InvalidInput(
            f"No board declares the segment dimension '{unknown[0]}'.",
            code="unknown_segment_dimension",
            details={"unknown": unknown, "declared": declared},
        )


def memberships_write(
    player: Player, *, clan: object = UNCHANGED, segments: Mapping[str, str | None] | None = None
) -> None:
    """Store what was given, inside the caller's transaction with the player's row locked. New
    segment values or a new clan are counted (the stamp of their copies in Redis) and owe the
    player's live boards a refresh, which moves their standings into the new segments and clan."""
    joined = clan is not UNCHANGED and player.clan_id != clan
    if joined:
        player.clan_id = clan  # type: ignore[assignment]
        player.save(update_fields=["clan", "updated_at"])
    held = dict(
        PlayerSegment.objects.filter(player=player, dimension__in=segments or {}).values_list(
            "dimension", "value"
        )
    )
    changed = {d: v for d, v in (segments or {}).items() if held.get(d) != v}
    if not changed and not joined:
        return
    for dimension, value in changed.items():
        if value is None:
            PlayerSegment.objects.filter(player=player, dimension=dimension).delete()
        else:
            PlayerSegment.objects.update_or_create(
                player=player, dimension=dimension, defaults={"value": value}
            )
    player.segments_changes += 1
    player.save(update_fields=["segments_changes", "updated_at"])
    player_refresh_owe(player.player_id)


def player_memberships(player: Player) -> dict[str, object]:
    """The player's clan (or None) and segment values, as the API shows them."""
    return {
        "clan": player.clan_id,
        "segments": dict(
            PlayerSegment.objects.filter(player=player)
            .order_by("dimension")
            .values_list("dimension", "value")
        ),
    }


def clan_upsert(*, clan_id: str, name: str | None = None) -> tuple[Clan, bool]:
    """Create a clan or rename it; returns it and whether it is new."""
    changes = {} if name is None else {"name": name}
    clan, created = Clan.objects.get_or_create(clan_id=clan_id, defaults=changes)
    if changes and not created and clan.name != name:
        clan.name = name  # type: ignore[assignment]
        clan.save(update_fields=["name"])
    return clan, created
