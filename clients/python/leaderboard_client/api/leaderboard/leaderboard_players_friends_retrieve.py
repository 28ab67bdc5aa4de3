from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.friends_view_out import FriendsViewOut
from ...models.rank_style_enum import RankStyleEnum
from ...types import UNSET, Response, Unset


def _get_kwargs(
    player_id: str,
    *,
    board: str | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["board"] = board

    json_rank_style: str | Unset = UNSET
    if not isinstance(rank_style, Unset):
        json_rank_style = rank_style.value

    params["rank_style"] = json_rank_style

    params["season"] = season

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/leaderboard/players/{player_id}/friends".format(
            player_id=quote(str(player_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | FriendsViewOut | None:
    if response.status_code == 200:
        response_200 = FriendsViewOut.from_dict(response.json())

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
) -> Response[Error | FriendsViewOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    player_id: str,
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
) -> Response[Error | FriendsViewOut]:
    """A player and their friends ranked among themselves, with their global ranks

     The friends are the list game servers stored (`PUT /api/v1/players/{player_id}/friends`), up to
    1,000, read in one round trip. `404 player_not_found` for a player never seen.

    Args:
        player_id (str):
        board (str | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | FriendsViewOut]
    """

    kwargs = _get_kwargs(
        player_id=player_id,
        board=board,
        rank_style=rank_style,
        season=season,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    player_id: str,
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
) -> Error | FriendsViewOut | None:
    """A player and their friends ranked among themselves, with their global ranks

     The friends are the list game servers stored (`PUT /api/v1/players/{player_id}/friends`), up to
    1,000, read in one round trip. `404 player_not_found` for a player never seen.

    Args:
        player_id (str):
        board (str | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | FriendsViewOut
    """

    return sync_detailed(
        player_id=player_id,
        client=client,
        board=board,
        rank_style=rank_style,
        season=season,
    ).parsed


async def asyncio_detailed(
    player_id: str,
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
) -> Response[Error | FriendsViewOut]:
    """A player and their friends ranked among themselves, with their global ranks

     The friends are the list game servers stored (`PUT /api/v1/players/{player_id}/friends`), up to
    1,000, read in one round trip. `404 player_not_found` for a player never seen.

    Args:
        player_id (str):
        board (str | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | FriendsViewOut]
    """

    kwargs = _get_kwargs(
        player_id=player_id,
        board=board,
        rank_style=rank_style,
        season=season,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    player_id: str,
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
) -> Error | FriendsViewOut | None:
    """A player and their friends ranked among themselves, with their global ranks

     The friends are the list game servers stored (`PUT /api/v1/players/{player_id}/friends`), up to
    1,000, read in one round trip. `404 player_not_found` for a player never seen.

    Args:
        player_id (str):
        board (str | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | FriendsViewOut
    """

    return (
        await asyncio_detailed(
            player_id=player_id,
            client=client,
            board=board,
            rank_style=rank_style,
            season=season,
        )
    ).parsed
