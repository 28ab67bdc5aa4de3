"""A GET through an ASGI application (the whole server's, or a part of it), as a client would
send it from 127.0.0.1, in an event loop of its own."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx


def asgi_get(app: Any, path: str, headers: dict[str, str] | None = None) -> httpx.Response:
    async def get() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 4000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            return await http.get(path, headers=headers)

    return asyncio.run(get())
