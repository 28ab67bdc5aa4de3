"""Player-facing pages, rendered on the server: each view reads one page's data and renders it."""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable
from typing import Any

import redis.exceptions
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_safe

from config.building_blocks.errors import InvalidInput, NotFound
from config.building_blocks.throttles import pages_wait
from leaderboards.heals import season_heal_queue_for_read
from leaderboards.search import QUERY_MAX_LENGTH
from leaderboards.selectors import SeasonStandingsLost
from seasons.models import DEFAULT_BOARD

from . import selectors

# Browsers ask for /favicon.ico on every site, the admin's pages included.
_FAVICON = (settings.BASE_DIR / "static" / "pages" / "favicon.svg").read_bytes()

logger = logging.getLogger(__name__)

View = Callable[..., HttpResponse]


def page_view(view: View) -> View:
    """GET/HEAD only, at most THROTTLE_PAGES_RATE per client address (then the HTML 429 page);
    unknown things are the HTML 404 page, a store that is down a 503 page (and a season whose
    standings it lost is asked to be rebuilt)."""

    @require_safe
    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        wait = pages_wait(request)
        if wait is not None:
            response = render(request, "429.html", status=429)
            response["Retry-After"] = str(max(1, math.ceil(wait)))
            return response
        try:
            return view(request, *args, **kwargs)
        except NotFound as exc:
            raise Http404(exc.message) from exc
        except InvalidInput as exc:
            # A query the page cannot answer (a segment of a dimension the board lacks).
            return render(request, "400.html", {"message": exc.message}, status=400)
        except (
            OperationalError,
            InterfaceError,
            redis.exceptions.ConnectionError,
            redis.exceptions.TimeoutError,
        ) as exc:
            logger.warning("page %s unavailable: %s", request.path, exc)
            if isinstance(exc, SeasonStandingsLost):
                season_heal_queue_for_read(season_id=exc.season_id)
            response = render(request, "503.html", status=503)
            response["Retry-After"] = "5"
            return response

    return wrapper


def _reverse(name: str, **kwargs: str) -> str:
    try:
        return reverse(name, kwargs=kwargs)
    except NoReverseMatch as exc:
        raise NotFound("There is no such page.") from exc


def _page_number(request: HttpRequest) -> int:
    raw = request.GET.get("page") or "1"
    if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= 2**31:
        raise NotFound(f"There is no page '{raw}'.", code="page_not_found")
    return int(raw)


@page_view
def home(request: HttpRequest) -> HttpResponse:
    context = selectors.board_page(
        board_slug=DEFAULT_BOARD, season_slug=None, page=_page_number(request)
    )
    return render(request, "pages/board.html", {**context, "is_home": True})


@page_view
def board(request: HttpRequest, board: str, season: str | None = None) -> HttpResponse:
    picked = request.GET.get("season")
    if picked and season is None:
        # The season picker is a plain GET form: send it to the season's own address.
        address = _reverse("pages:season", board=board, season=picked)
        kept = {name: request.GET.get(name) for name in ("friends_of", "segment")}
        kept = {name: value for name, value in kept.items() if value}
        return redirect(f"{address}?{urlencode(kept)}" if kept else address)
    context = selectors.board_page(
        board_slug=board,
        season_slug=season,
        page=_page_number(request),
        friends_of=request.GET.get("friends_of") or None,
        segment=request.GET.get("segment") or None,
    )
    return render(request, "pages/board.html", {**context, "is_home": False})


@page_view
def clans(request: HttpRequest, board: str) -> HttpResponse:
    """The board's clan board (of its running season, or of `?season=`)."""
    context = selectors.clans_page(board_slug=board, season_slug=request.GET.get("season") or None)
    return render(request, "pages/clans.html", context)


@page_view
def clan(request: HttpRequest, board: str, clan_id: str) -> HttpResponse:
    """A clan on the board: its rank and points, and its members ranked within it."""
    context = selectors.clan_page(
        board_slug=board, clan_id=clan_id, season_slug=request.GET.get("season") or None
    )
    return render(request, "pages/clan.html", context)


@page_view
def player_lookup(request: HttpRequest) -> HttpResponse:
    """The lookup box is a plain GET form too: a name's start or a player id. One player meant
    is their page; several are listed, best matches first."""
    query = request.GET.get("player_id", "").strip()[:QUERY_MAX_LENGTH]
    if not query:
        return redirect("pages:home")
    context = selectors.player_search_page(query=query)
    if context["only"] is not None:
        return redirect(_reverse("pages:player", player_id=context["only"]))
    return render(request, "pages/search.html", context)


@page_view
def player(request: HttpRequest, player_id: str) -> HttpResponse:
    return render(request, "pages/player.html", selectors.player_page(player_id=player_id))


@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    return HttpResponse(
        _FAVICON, content_type="image/svg+xml", headers={"Cache-Control": "public, max-age=86400"}
    )
