from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.around_out import AroundOut
from ...models.error import Error
from ...models.rank_style_enum import RankStyleEnum
from ...types import UNSET, Response, Unset


def _get_kwargs(
    player_id: str,
    *,
    board: str | Unset = UNSET,
    n: int | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
    segment: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["board"] = board

    params["n"] = n

    json_rank_style: str | Unset = UNSET
    if not isinstance(rank_style, Unset):
        json_rank_style = rank_style.value

    params["rank_style"] = json_rank_style

    params["season"] = season

    params["segment"] = segment

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/leaderboard/players/{player_id}/around".format(
            player_id=quote(str(player_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> AroundOut | Error | None:
    if response.status_code == 200:
        response_200 = AroundOut.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[AroundOut | Error]:
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
    n: int | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
    segment: str | Unset = UNSET,
) -> Response[AroundOut | Error]:
    """The ranks just above and below a player

     A read of a season's standings. One that finds them lost answers 503 (the exception
    handler) and asks for their rebuild: a season that stands still gets no mirror write to
    find it so (at most one rebuild a while, heals.py).

    Args:
        player_id (str):
        board (str | Unset):
        n (int | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):
        segment (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AroundOut | Error]
    """

    kwargs = _get_kwargs(
        player_id=player_id,
        board=board,
        n=n,
        rank_style=rank_style,
        season=season,
        segment=segment,
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
    n: int | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
    segment: str | Unset = UNSET,
) -> AroundOut | Error | None:
    """The ranks just above and below a player

     A read of a season's standings. One that finds them lost answers 503 (the exception
    handler) and asks for their rebuild: a season that stands still gets no mirror write to
    find it so (at most one rebuild a while, heals.py).

    Args:
        player_id (str):
        board (str | Unset):
        n (int | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):
        segment (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AroundOut | Error
    """

    return sync_detailed(
        player_id=player_id,
        client=client,
        board=board,
        n=n,
        rank_style=rank_style,
        season=season,
        segment=segment,
    ).parsed


async def asyncio_detailed(
    player_id: str,
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    n: int | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
    segment: str | Unset = UNSET,
) -> Response[AroundOut | Error]:
    """The ranks just above and below a player

     A read of a season's standings. One that finds them lost answers 503 (the exception
    handler) and asks for their rebuild: a season that stands still gets no mirror write to
    find it so (at most one rebuild a while, heals.py).

    Args:
        player_id (str):
        board (str | Unset):
        n (int | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):
        segment (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AroundOut | Error]
    """

    kwargs = _get_kwargs(
        player_id=player_id,
        board=board,
        n=n,
        rank_style=rank_style,
        season=season,
        segment=segment,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    player_id: str,
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    n: int | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
    segment: str | Unset = UNSET,
) -> AroundOut | Error | None:
    """The ranks just above and below a player

     A read of a season's standings. One that finds them lost answers 503 (the exception
    handler) and asks for their rebuild: a season that stands still gets no mirror write to
    find it so (at most one rebuild a while, heals.py).

    Args:
        player_id (str):
        board (str | Unset):
        n (int | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):
        segment (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AroundOut | Error
    """

    return (
        await asyncio_detailed(
            player_id=player_id,
            client=client,
            board=board,
            n=n,
            rank_style=rank_style,
            season=season,
            segment=segment,
        )
    ).parsed
