from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.player_search_out import PlayerSearchOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    board: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    search: str,
    season: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["board"] = board

    params["limit"] = limit

    params["offset"] = offset

    params["search"] = search

    params["season"] = season

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/players",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | PlayerSearchOut | None:
    if response.status_code == 200:
        response_200 = PlayerSearchOut.from_dict(response.json())

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
) -> Response[Error | PlayerSearchOut]:
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
    search: str,
    season: str | Unset = UNSET,
) -> Response[Error | PlayerSearchOut]:
    """Players by name: a case-insensitive prefix, ranked by relevance, then by rank

     An exact name first, then an exact player id, then names that start with the query; within each, the
    better ranked on the board's season (the running one by default) first. Among the first 200 names
    that share the prefix, in a page of `limit`: `next_offset` is the next page's.

    Args:
        board (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        search (str):
        season (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | PlayerSearchOut]
    """

    kwargs = _get_kwargs(
        board=board,
        limit=limit,
        offset=offset,
        search=search,
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
    search: str,
    season: str | Unset = UNSET,
) -> Error | PlayerSearchOut | None:
    """Players by name: a case-insensitive prefix, ranked by relevance, then by rank

     An exact name first, then an exact player id, then names that start with the query; within each, the
    better ranked on the board's season (the running one by default) first. Among the first 200 names
    that share the prefix, in a page of `limit`: `next_offset` is the next page's.

    Args:
        board (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        search (str):
        season (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | PlayerSearchOut
    """

    return sync_detailed(
        client=client,
        board=board,
        limit=limit,
        offset=offset,
        search=search,
        season=season,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    search: str,
    season: str | Unset = UNSET,
) -> Response[Error | PlayerSearchOut]:
    """Players by name: a case-insensitive prefix, ranked by relevance, then by rank

     An exact name first, then an exact player id, then names that start with the query; within each, the
    better ranked on the board's season (the running one by default) first. Among the first 200 names
    that share the prefix, in a page of `limit`: `next_offset` is the next page's.

    Args:
        board (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        search (str):
        season (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | PlayerSearchOut]
    """

    kwargs = _get_kwargs(
        board=board,
        limit=limit,
        offset=offset,
        search=search,
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
    search: str,
    season: str | Unset = UNSET,
) -> Error | PlayerSearchOut | None:
    """Players by name: a case-insensitive prefix, ranked by relevance, then by rank

     An exact name first, then an exact player id, then names that start with the query; within each, the
    better ranked on the board's season (the running one by default) first. Among the first 200 names
    that share the prefix, in a page of `limit`: `next_offset` is the next page's.

    Args:
        board (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        search (str):
        season (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | PlayerSearchOut
    """

    return (
        await asyncio_detailed(
            client=client,
            board=board,
            limit=limit,
            offset=offset,
            search=search,
            season=season,
        )
    ).parsed
