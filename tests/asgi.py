"""A GET through an ASGI application (the whole server's, or a part of it), as a client would
send it (from 127.0.0.1 unless told), in an event loop of its own."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx


def asgi_get(
    app: Any,
    path: str,
    headers: dict[str, str] | list[tuple[str, str]] | None = None,
    *,
    client: str = "127.0.0.1",
) -> httpx.Response:
    """`headers` as a list may repeat a name (two X-Forwarded-For lines); `client` is the
    connection's address."""

    async def get() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=(client, 4000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            return await http.get(path, headers=headers)

    return asyncio.run(get())
