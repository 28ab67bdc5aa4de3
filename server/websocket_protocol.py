"""The WebSocket protocol the web processes serve sockets with (`--ws` in the Procfile):
uvicorn's sans-I/O protocol, holding less for each open socket.

uvicorn keeps the handshake's request and response, with all their headers, on the protocol
object for the socket's whole life, though it reads them only until the response is sent.
Letting go of them takes a socket's protocol from 17.2 to 13.1 KB (tracemalloc, 1,000
handshakes as the benchmark's client sends them, in one process; docs/websocket.md, "What a
socket costs").
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol


class WebSocketProtocol(WebSocketsSansIOProtocol):
    async def send(self, message: Any) -> None:
        await super().send(message)
        if message["type"] == "websocket.accept" and self.handshake_complete:
            # The 101 answer is on its way: uvicorn never reads either again (a rejected
            # handshake keeps them, and the connection closes anyway). websockets' parser
            # still holds the request for the socket's life, so its headers are emptied: the
            # app has its own copy, in the scope.
            self.request.headers.clear()
            self.request = None  # type: ignore[assignment]
            self.response = None  # type: ignore[assignment]
