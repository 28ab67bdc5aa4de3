"""Template filters of the player pages. static/pages/live.js formats live updates the same way,
so a row rendered here and the same row updated in the browser look identical."""

from __future__ import annotations

from django import template

register = template.Library()

_UNITS = (("day", 86400), ("hour", 3600), ("minute", 60))


@register.filter
def grouped(value: int | float | None) -> str:
    """12345 -> "12,345"."""
    if value is None:
        return "–"
    return f"{value:,}"


# Badge colours: one hue every HUE_STEP degrees, each a class of static/pages/site.css (the
# Content-Security-Policy allows no inline style attribute to carry a computed one).
HUE_STEP = 15


@register.filter
def hue(player_id: str) -> str:
    """A stable colour class ("hue-0" to "hue-23") for a player's initial badge; ids one
    character apart differ by 137 degrees, so neighbours on the board do not share a colour."""
    value = 0
    for char in player_id:
        value = (value * 31 + ord(char)) % 360
    return f"hue-{value * 137 % 360 // HUE_STEP}"


@register.filter
def initial(name: str) -> str:
    for char in name:
        if char.isalnum():
            return char.upper()
    return "?"


@register.filter
def duration(seconds: int | None) -> str:
    """The two largest units of a duration: "12 days 3 hours", "5 minutes"."""
    if seconds is None:
        return ""
    if seconds < 60:
        return "less than a minute"
    parts = []
    for name, size in _UNITS:
        count, seconds = divmod(seconds, size)
        if count or parts:
            parts.append(f"{count} {name}{'' if count == 1 else 's'}")
        if len(parts) == 2:
            break
    return " ".join(p for p in parts if not p.startswith("0 "))


@register.filter
def percentile(value: float | None) -> str:
    """99.5 -> "99.5", 100.0 -> "100"."""
    if value is None:
        return "–"
    return f"{value:.2f}".rstrip("0").rstrip(".")
