from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.clans_top_out import ClansTopOut
from ...models.error import Error
from ...models.rank_style_enum import RankStyleEnum
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    board: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["board"] = board

    params["limit"] = limit

    params["offset"] = offset

    json_rank_style: str | Unset = UNSET
    if not isinstance(rank_style, Unset):
        json_rank_style = rank_style.value

    params["rank_style"] = json_rank_style

    params["season"] = season

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/leaderboard/clans/top",
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ClansTopOut | Error | None:
    if response.status_code == 200:
        response_200 = ClansTopOut.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ClansTopOut | Error]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
) -> Response[ClansTopOut | Error]:
    """The clan board: clans ranked by their members' season totals

     A clan's points are its members' summed on a board of sums, its best member's on a board of bests;
    equal sums tie by clan id, equal bests by who reached them first.

    Args:
        board (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ClansTopOut | Error]
    """

    kwargs = _get_kwargs(
        board=board,
        limit=limit,
        offset=offset,
        rank_style=rank_style,
        season=season,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
) -> ClansTopOut | Error | None:
    """The clan board: clans ranked by their members' season totals

     A clan's points are its members' summed on a board of sums, its best member's on a board of bests;
    equal sums tie by clan id, equal bests by who reached them first.

    Args:
        board (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ClansTopOut | Error
    """

    return sync_detailed(
        client=client,
        board=board,
        limit=limit,
        offset=offset,
        rank_style=rank_style,
        season=season,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
) -> Response[ClansTopOut | Error]:
    """The clan board: clans ranked by their members' season totals

     A clan's points are its members' summed on a board of sums, its best member's on a board of bests;
    equal sums tie by clan id, equal bests by who reached them first.

    Args:
        board (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ClansTopOut | Error]
    """

    kwargs = _get_kwargs(
        board=board,
        limit=limit,
        offset=offset,
        rank_style=rank_style,
        season=season,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
) -> ClansTopOut | Error | None:
    """The clan board: clans ranked by their members' season totals

     A clan's points are its members' summed on a board of sums, its best member's on a board of bests;
    equal sums tie by clan id, equal bests by who reached them first.

    Args:
        board (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ClansTopOut | Error
    """

    return (
        await asyncio_detailed(
            client=client,
            board=board,
            limit=limit,
            offset=offset,
            rank_style=rank_style,
            season=season,
        )
    ).parsed
