from http import HTTPStatus
from typing import Any, cast

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.rank_style_enum import RankStyleEnum
from ...models.top_out import TopOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    board: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
    segment: str | Unset = UNSET,
    if_none_match: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(if_none_match, Unset):
        headers["If-None-Match"] = if_none_match

    params: dict[str, Any] = {}

    params["board"] = board

    params["limit"] = limit

    params["offset"] = offset

    json_rank_style: str | Unset = UNSET
    if not isinstance(rank_style, Unset):
        json_rank_style = rank_style.value

    params["rank_style"] = json_rank_style

    params["season"] = season

    params["segment"] = segment

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/leaderboard/top",
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | Error | TopOut | None:
    if response.status_code == 200:
        response_200 = TopOut.from_dict(response.json())

        return response_200

    if response.status_code == 304:
        response_304 = cast(Any, None)
        return response_304

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
) -> Response[Any | Error | TopOut]:
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
    segment: str | Unset = UNSET,
    if_none_match: str | Unset = UNSET,
) -> Response[Any | Error | TopOut]:
    """The top of the board (pages through the whole board with offset)

     A read of a season's standings. One that finds them lost answers 503 (the exception
    handler) and asks for their rebuild: a season that stands still gets no mirror write to
    find it so (at most one rebuild a while, heals.py).

    Args:
        board (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):
        segment (str | Unset):
        if_none_match (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Error | TopOut]
    """

    kwargs = _get_kwargs(
        board=board,
        limit=limit,
        offset=offset,
        rank_style=rank_style,
        season=season,
        segment=segment,
        if_none_match=if_none_match,
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
    segment: str | Unset = UNSET,
    if_none_match: str | Unset = UNSET,
) -> Any | Error | TopOut | None:
    """The top of the board (pages through the whole board with offset)

     A read of a season's standings. One that finds them lost answers 503 (the exception
    handler) and asks for their rebuild: a season that stands still gets no mirror write to
    find it so (at most one rebuild a while, heals.py).

    Args:
        board (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):
        segment (str | Unset):
        if_none_match (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Error | TopOut
    """

    return sync_detailed(
        client=client,
        board=board,
        limit=limit,
        offset=offset,
        rank_style=rank_style,
        season=season,
        segment=segment,
        if_none_match=if_none_match,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
    segment: str | Unset = UNSET,
    if_none_match: str | Unset = UNSET,
) -> Response[Any | Error | TopOut]:
    """The top of the board (pages through the whole board with offset)

     A read of a season's standings. One that finds them lost answers 503 (the exception
    handler) and asks for their rebuild: a season that stands still gets no mirror write to
    find it so (at most one rebuild a while, heals.py).

    Args:
        board (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):
        segment (str | Unset):
        if_none_match (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Error | TopOut]
    """

    kwargs = _get_kwargs(
        board=board,
        limit=limit,
        offset=offset,
        rank_style=rank_style,
        season=season,
        segment=segment,
        if_none_match=if_none_match,
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
    segment: str | Unset = UNSET,
    if_none_match: str | Unset = UNSET,
) -> Any | Error | TopOut | None:
    """The top of the board (pages through the whole board with offset)

     A read of a season's standings. One that finds them lost answers 503 (the exception
    handler) and asks for their rebuild: a season that stands still gets no mirror write to
    find it so (at most one rebuild a while, heals.py).

    Args:
        board (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):
        segment (str | Unset):
        if_none_match (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Error | TopOut
    """

    return (
        await asyncio_detailed(
            client=client,
            board=board,
            limit=limit,
            offset=offset,
            rank_style=rank_style,
            season=season,
            segment=segment,
            if_none_match=if_none_match,
        )
    ).parsed
