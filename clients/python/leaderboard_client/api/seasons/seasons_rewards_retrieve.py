from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.rewards_out import RewardsOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    slug: str,
    *,
    board: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    player_id: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["board"] = board

    params["limit"] = limit

    params["offset"] = offset

    params["player_id"] = player_id

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/seasons/{slug}/rewards".format(
            slug=quote(str(slug), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | RewardsOut | None:
    if response.status_code == 200:
        response_200 = RewardsOut.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = Error.from_dict(response.json())

        return response_409

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Error | RewardsOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    slug: str,
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    player_id: str | Unset = UNSET,
) -> Response[Error | RewardsOut]:
    """The rewards of a closed season, by rank, a page at a time (the whole board's, then each segment's)

    Args:
        slug (str):
        board (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        player_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RewardsOut]
    """

    kwargs = _get_kwargs(
        slug=slug,
        board=board,
        limit=limit,
        offset=offset,
        player_id=player_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    slug: str,
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    player_id: str | Unset = UNSET,
) -> Error | RewardsOut | None:
    """The rewards of a closed season, by rank, a page at a time (the whole board's, then each segment's)

    Args:
        slug (str):
        board (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        player_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RewardsOut
    """

    return sync_detailed(
        slug=slug,
        client=client,
        board=board,
        limit=limit,
        offset=offset,
        player_id=player_id,
    ).parsed


async def asyncio_detailed(
    slug: str,
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    player_id: str | Unset = UNSET,
) -> Response[Error | RewardsOut]:
    """The rewards of a closed season, by rank, a page at a time (the whole board's, then each segment's)

    Args:
        slug (str):
        board (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        player_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RewardsOut]
    """

    kwargs = _get_kwargs(
        slug=slug,
        board=board,
        limit=limit,
        offset=offset,
        player_id=player_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    slug: str,
    *,
    client: AuthenticatedClient,
    board: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    player_id: str | Unset = UNSET,
) -> Error | RewardsOut | None:
    """The rewards of a closed season, by rank, a page at a time (the whole board's, then each segment's)

    Args:
        slug (str):
        board (str | Unset):
        limit (int | Unset):
        offset (int | Unset):
        player_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RewardsOut
    """

    return (
        await asyncio_detailed(
            slug=slug,
            client=client,
            board=board,
            limit=limit,
            offset=offset,
            player_id=player_id,
        )
    ).parsed
