from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.clan_standing_out import ClanStandingOut
from ...models.error import Error
from ...models.rank_style_enum import RankStyleEnum
from ...types import UNSET, Response, Unset


def _get_kwargs(
    clan_id: str,
    *,
    board: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    n: int | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["board"] = board

    params["limit"] = limit

    params["n"] = n

    json_rank_style: str | Unset = UNSET
    if not isinstance(rank_style, Unset):
        json_rank_style = rank_style.value

    params["rank_style"] = json_rank_style

    params["season"] = season

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/leaderboard/clans/{clan_id}".format(
            clan_id=quote(str(clan_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ClanStandingOut | Error | None:
    if response.status_code == 200:
        response_200 = ClanStandingOut.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())

        return response_404

    if response.status_code == 429:
        response_429 = Error.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = Error.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ClanStandingOut | Error]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    clan_id: str,
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    n: int | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
) -> Response[ClanStandingOut | Error]:
    """A clan's rank, the clans around it, and its members ranked within it

     `404 clan_not_found` for a clan that does not exist, `404 clan_not_ranked` for one with no member
    with a score in the season.

    Args:
        clan_id (str):
        board (str | Unset):
        limit (int | Unset):
        n (int | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ClanStandingOut | Error]
    """

    kwargs = _get_kwargs(
        clan_id=clan_id,
        board=board,
        limit=limit,
        n=n,
        rank_style=rank_style,
        season=season,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    clan_id: str,
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    n: int | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
) -> ClanStandingOut | Error | None:
    """A clan's rank, the clans around it, and its members ranked within it

     `404 clan_not_found` for a clan that does not exist, `404 clan_not_ranked` for one with no member
    with a score in the season.

    Args:
        clan_id (str):
        board (str | Unset):
        limit (int | Unset):
        n (int | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ClanStandingOut | Error
    """

    return sync_detailed(
        clan_id=clan_id,
        client=client,
        board=board,
        limit=limit,
        n=n,
        rank_style=rank_style,
        season=season,
    ).parsed


async def asyncio_detailed(
    clan_id: str,
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    n: int | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
) -> Response[ClanStandingOut | Error]:
    """A clan's rank, the clans around it, and its members ranked within it

     `404 clan_not_found` for a clan that does not exist, `404 clan_not_ranked` for one with no member
    with a score in the season.

    Args:
        clan_id (str):
        board (str | Unset):
        limit (int | Unset):
        n (int | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ClanStandingOut | Error]
    """

    kwargs = _get_kwargs(
        clan_id=clan_id,
        board=board,
        limit=limit,
        n=n,
        rank_style=rank_style,
        season=season,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    clan_id: str,
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    n: int | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
) -> ClanStandingOut | Error | None:
    """A clan's rank, the clans around it, and its members ranked within it

     `404 clan_not_found` for a clan that does not exist, `404 clan_not_ranked` for one with no member
    with a score in the season.

    Args:
        clan_id (str):
        board (str | Unset):
        limit (int | Unset):
        n (int | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ClanStandingOut | Error
    """

    return (
        await asyncio_detailed(
            clan_id=clan_id,
            client=client,
            board=board,
            limit=limit,
            n=n,
            rank_style=rank_style,
            season=season,
        )
    ).parsed
