from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.rank_style_enum import RankStyleEnum
from ...models.ranks_in_request import RanksInRequest
from ...models.ranks_out import RanksOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: RanksInRequest,
    board: str | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
    segment: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    params: dict[str, Any] = {}

    params["board"] = board

    json_rank_style: str | Unset = UNSET
    if not isinstance(rank_style, Unset):
        json_rank_style = rank_style.value

    params["rank_style"] = json_rank_style

    params["season"] = season

    params["segment"] = segment

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/leaderboard/ranks",
        "params": params,
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | RanksOut | None:
    if response.status_code == 200:
        response_200 = RanksOut.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())

        return response_404

    if response.status_code == 413:
        response_413 = Error.from_dict(response.json())

        return response_413

    if response.status_code == 415:
        response_415 = Error.from_dict(response.json())

        return response_415

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Error | RanksOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: RanksInRequest,
    board: str | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
    segment: str | Unset = UNSET,
) -> Response[Error | RanksOut]:
    """Ranks of up to 200 players at once (a friends view)

     A read of a season's standings. One that finds them lost answers 503 (the exception
    handler) and asks for their rebuild: a season that stands still gets no mirror write to
    find it so (at most one rebuild a while, heals.py).

    Args:
        board (str | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):
        segment (str | Unset):
        body (RanksInRequest): Rejects fields it does not know, instead of silently dropping them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RanksOut]
    """

    kwargs = _get_kwargs(
        body=body,
        board=board,
        rank_style=rank_style,
        season=season,
        segment=segment,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: RanksInRequest,
    board: str | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
    segment: str | Unset = UNSET,
) -> Error | RanksOut | None:
    """Ranks of up to 200 players at once (a friends view)

     A read of a season's standings. One that finds them lost answers 503 (the exception
    handler) and asks for their rebuild: a season that stands still gets no mirror write to
    find it so (at most one rebuild a while, heals.py).

    Args:
        board (str | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):
        segment (str | Unset):
        body (RanksInRequest): Rejects fields it does not know, instead of silently dropping them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RanksOut
    """

    return sync_detailed(
        client=client,
        body=body,
        board=board,
        rank_style=rank_style,
        season=season,
        segment=segment,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: RanksInRequest,
    board: str | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
    segment: str | Unset = UNSET,
) -> Response[Error | RanksOut]:
    """Ranks of up to 200 players at once (a friends view)

     A read of a season's standings. One that finds them lost answers 503 (the exception
    handler) and asks for their rebuild: a season that stands still gets no mirror write to
    find it so (at most one rebuild a while, heals.py).

    Args:
        board (str | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):
        segment (str | Unset):
        body (RanksInRequest): Rejects fields it does not know, instead of silently dropping them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RanksOut]
    """

    kwargs = _get_kwargs(
        body=body,
        board=board,
        rank_style=rank_style,
        season=season,
        segment=segment,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: RanksInRequest,
    board: str | Unset = UNSET,
    rank_style: RankStyleEnum | Unset = UNSET,
    season: str | Unset = UNSET,
    segment: str | Unset = UNSET,
) -> Error | RanksOut | None:
    """Ranks of up to 200 players at once (a friends view)

     A read of a season's standings. One that finds them lost answers 503 (the exception
    handler) and asks for their rebuild: a season that stands still gets no mirror write to
    find it so (at most one rebuild a while, heals.py).

    Args:
        board (str | Unset):
        rank_style (RankStyleEnum | Unset):
        season (str | Unset):
        segment (str | Unset):
        body (RanksInRequest): Rejects fields it does not know, instead of silently dropping them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RanksOut
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            board=board,
            rank_style=rank_style,
            season=season,
            segment=segment,
        )
    ).parsed
