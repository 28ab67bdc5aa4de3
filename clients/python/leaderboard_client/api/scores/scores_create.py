from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.result_in_request import ResultInRequest
from ...models.result_out import ResultOut
from ...types import Response


def _get_kwargs(
    *,
    body: list[ResultInRequest] | ResultInRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/scores",
    }

    if isinstance(body, ResultInRequest):
        _kwargs["json"] = body.to_dict()
    else:
        _kwargs["json"] = []
        for componentsschemas_result_batch_in_request_item_data in body:
            componentsschemas_result_batch_in_request_item = (
                componentsschemas_result_batch_in_request_item_data.to_dict()
            )
            _kwargs["json"].append(componentsschemas_result_batch_in_request_item)

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | ResultOut | list[ResultOut] | ResultOut | None:
    if response.status_code == 200:

        def _parse_response_200(data: object) -> list[ResultOut] | ResultOut:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_result_or_batch_out_type_0 = ResultOut.from_dict(data)

                return componentsschemas_result_or_batch_out_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, list):
                raise TypeError()
            componentsschemas_result_or_batch_out_type_1 = []
            _componentsschemas_result_or_batch_out_type_1 = data
            for componentsschemas_result_batch_out_item_data in _componentsschemas_result_or_batch_out_type_1:
                componentsschemas_result_batch_out_item = ResultOut.from_dict(
                    componentsschemas_result_batch_out_item_data
                )

                componentsschemas_result_or_batch_out_type_1.append(componentsschemas_result_batch_out_item)

            return componentsschemas_result_or_batch_out_type_1

        response_200 = _parse_response_200(response.json())

        return response_200

    if response.status_code == 201:
        response_201 = ResultOut.from_dict(response.json())

        return response_201

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

    if response.status_code == 409:
        response_409 = Error.from_dict(response.json())

        return response_409

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


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | ResultOut | list[ResultOut] | ResultOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: list[ResultInRequest] | ResultInRequest,
) -> Response[Error | ResultOut | list[ResultOut] | ResultOut]:
    """Post one match result, or a JSON array of 1 to 1,000

    Args:
        body (list[ResultInRequest] | ResultInRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ResultOut | list[ResultOut] | ResultOut]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: list[ResultInRequest] | ResultInRequest,
) -> Error | ResultOut | list[ResultOut] | ResultOut | None:
    """Post one match result, or a JSON array of 1 to 1,000

    Args:
        body (list[ResultInRequest] | ResultInRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ResultOut | list[ResultOut] | ResultOut
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: list[ResultInRequest] | ResultInRequest,
) -> Response[Error | ResultOut | list[ResultOut] | ResultOut]:
    """Post one match result, or a JSON array of 1 to 1,000

    Args:
        body (list[ResultInRequest] | ResultInRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ResultOut | list[ResultOut] | ResultOut]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: list[ResultInRequest] | ResultInRequest,
) -> Error | ResultOut | list[ResultOut] | ResultOut | None:
    """Post one match result, or a JSON array of 1 to 1,000

    Args:
        body (list[ResultInRequest] | ResultInRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ResultOut | list[ResultOut] | ResultOut
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
