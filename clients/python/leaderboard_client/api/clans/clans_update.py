from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.clan_in_request import ClanInRequest
from ...models.clan_out import ClanOut
from ...models.error import Error
from ...types import UNSET, Response, Unset


def _get_kwargs(
    clan_id: str,
    *,
    body: ClanInRequest | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/api/v1/clans/{clan_id}".format(
            clan_id=quote(str(clan_id), safe=""),
        ),
    }

    if not isinstance(body, Unset):
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ClanOut | Error | None:
    if response.status_code == 200:
        response_200 = ClanOut.from_dict(response.json())

        return response_200

    if response.status_code == 201:
        response_201 = ClanOut.from_dict(response.json())

        return response_201

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ClanOut | Error]:
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
    body: ClanInRequest | Unset = UNSET,
) -> Response[ClanOut | Error]:
    """Create or rename a clan (game servers)

     Players join with the profile write (`PUT /api/v1/players/{player_id}` `{"clan": "clan-id"}`, null
    to leave).

    Args:
        clan_id (str):
        body (ClanInRequest | Unset): Rejects fields it does not know, instead of silently
            dropping them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ClanOut | Error]
    """

    kwargs = _get_kwargs(
        clan_id=clan_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    clan_id: str,
    *,
    client: AuthenticatedClient,
    body: ClanInRequest | Unset = UNSET,
) -> ClanOut | Error | None:
    """Create or rename a clan (game servers)

     Players join with the profile write (`PUT /api/v1/players/{player_id}` `{"clan": "clan-id"}`, null
    to leave).

    Args:
        clan_id (str):
        body (ClanInRequest | Unset): Rejects fields it does not know, instead of silently
            dropping them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ClanOut | Error
    """

    return sync_detailed(
        clan_id=clan_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    clan_id: str,
    *,
    client: AuthenticatedClient,
    body: ClanInRequest | Unset = UNSET,
) -> Response[ClanOut | Error]:
    """Create or rename a clan (game servers)

     Players join with the profile write (`PUT /api/v1/players/{player_id}` `{"clan": "clan-id"}`, null
    to leave).

    Args:
        clan_id (str):
        body (ClanInRequest | Unset): Rejects fields it does not know, instead of silently
            dropping them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ClanOut | Error]
    """

    kwargs = _get_kwargs(
        clan_id=clan_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    clan_id: str,
    *,
    client: AuthenticatedClient,
    body: ClanInRequest | Unset = UNSET,
) -> ClanOut | Error | None:
    """Create or rename a clan (game servers)

     Players join with the profile write (`PUT /api/v1/players/{player_id}` `{"clan": "clan-id"}`, null
    to leave).

    Args:
        clan_id (str):
        body (ClanInRequest | Unset): Rejects fields it does not know, instead of silently
            dropping them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ClanOut | Error
    """

    return (
        await asyncio_detailed(
            clan_id=clan_id,
            client=client,
            body=body,
        )
    ).parsed
