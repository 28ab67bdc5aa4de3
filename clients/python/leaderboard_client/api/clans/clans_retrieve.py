from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.clan_out import ClanOut
from ...models.error import Error
from ...types import Response


def _get_kwargs(
    clan_id: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/clans/{clan_id}".format(
            clan_id=quote(str(clan_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ClanOut | Error | None:
    if response.status_code == 200:
        response_200 = ClanOut.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

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
    client: AuthenticatedClient | Client,
) -> Response[ClanOut | Error]:
    """A clan and its size

     Anyone reads (GET); only a game server's key writes (PUT).

    Args:
        clan_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ClanOut | Error]
    """

    kwargs = _get_kwargs(
        clan_id=clan_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    clan_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> ClanOut | Error | None:
    """A clan and its size

     Anyone reads (GET); only a game server's key writes (PUT).

    Args:
        clan_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ClanOut | Error
    """

    return sync_detailed(
        clan_id=clan_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    clan_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[ClanOut | Error]:
    """A clan and its size

     Anyone reads (GET); only a game server's key writes (PUT).

    Args:
        clan_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ClanOut | Error]
    """

    kwargs = _get_kwargs(
        clan_id=clan_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    clan_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> ClanOut | Error | None:
    """A clan and its size

     Anyone reads (GET); only a game server's key writes (PUT).

    Args:
        clan_id (str):

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
        )
    ).parsed
