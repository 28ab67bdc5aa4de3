from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.friends_in_request import FriendsInRequest
from ...models.friends_out import FriendsOut
from ...types import Response


def _get_kwargs(
    player_id: str,
    *,
    body: FriendsInRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/api/v1/players/{player_id}/friends".format(
            player_id=quote(str(player_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | FriendsOut | None:
    if response.status_code == 200:
        response_200 = FriendsOut.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())

        return response_403

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Error | FriendsOut]:
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
    body: FriendsInRequest,
) -> Response[Error | FriendsOut]:
    """Replace a player's friends (game servers)

     One-way (the player's own list), at most 1,000 ids (`400 too_many_friends`), never the player's own
    (`400 friend_is_self`); an id given twice is kept once. The player is created when new. A key
    limited to some boards may write only the friends of a player with a result on one of them (`403
    player_not_in_scope`).

    Args:
        player_id (str):
        body (FriendsInRequest): Rejects fields it does not know, instead of silently dropping
            them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | FriendsOut]
    """

    kwargs = _get_kwargs(
        player_id=player_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    player_id: str,
    *,
    client: AuthenticatedClient,
    body: FriendsInRequest,
) -> Error | FriendsOut | None:
    """Replace a player's friends (game servers)

     One-way (the player's own list), at most 1,000 ids (`400 too_many_friends`), never the player's own
    (`400 friend_is_self`); an id given twice is kept once. The player is created when new. A key
    limited to some boards may write only the friends of a player with a result on one of them (`403
    player_not_in_scope`).

    Args:
        player_id (str):
        body (FriendsInRequest): Rejects fields it does not know, instead of silently dropping
            them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | FriendsOut
    """

    return sync_detailed(
        player_id=player_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    player_id: str,
    *,
    client: AuthenticatedClient,
    body: FriendsInRequest,
) -> Response[Error | FriendsOut]:
    """Replace a player's friends (game servers)

     One-way (the player's own list), at most 1,000 ids (`400 too_many_friends`), never the player's own
    (`400 friend_is_self`); an id given twice is kept once. The player is created when new. A key
    limited to some boards may write only the friends of a player with a result on one of them (`403
    player_not_in_scope`).

    Args:
        player_id (str):
        body (FriendsInRequest): Rejects fields it does not know, instead of silently dropping
            them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | FriendsOut]
    """

    kwargs = _get_kwargs(
        player_id=player_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    player_id: str,
    *,
    client: AuthenticatedClient,
    body: FriendsInRequest,
) -> Error | FriendsOut | None:
    """Replace a player's friends (game servers)

     One-way (the player's own list), at most 1,000 ids (`400 too_many_friends`), never the player's own
    (`400 friend_is_self`); an id given twice is kept once. The player is created when new. A key
    limited to some boards may write only the friends of a player with a result on one of them (`403
    player_not_in_scope`).

    Args:
        player_id (str):
        body (FriendsInRequest): Rejects fields it does not know, instead of silently dropping
            them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | FriendsOut
    """

    return (
        await asyncio_detailed(
            player_id=player_id,
            client=client,
            body=body,
        )
    ).parsed
