"""The web processes' WebSocket protocol (server/websocket_protocol.py): uvicorn's sans-I/O one,
which lets go of the handshake's request and response once the socket is open."""

import asyncio
from pathlib import Path
from typing import Any

from uvicorn.config import Config
from uvicorn.server import ServerState

from scripts.processes import SERVING_OPTIONS
from server.websocket_protocol import WebSocketProtocol

HANDSHAKE = (
    b"GET /ws/leaderboard?board=global HTTP/1.1\r\nHost: example.com\r\nUpgrade: websocket\r\n"
    b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    b"Sec-WebSocket-Version: 13\r\nOrigin: https://example.com\r\n\r\n"
)


class Transport(asyncio.Transport):
    """What the protocol writes, as a socket would carry it."""

    def __init__(self) -> None:
        super().__init__()
        self.written = bytearray()
        self.closing = False

    def write(self, data: Any) -> None:
        self.written += data

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50000)}.get(
            name, default
        )


def _served(app: Any) -> tuple[WebSocketProtocol, Transport]:
    """A handshake served to `app` until it stops sending (the socket left open)."""

    async def serve() -> tuple[WebSocketProtocol, Transport]:
        config = Config(app=app, ws=WebSocketProtocol, proxy_headers=False, lifespan="off")
        config.load()
        protocol = WebSocketProtocol(config=config, server_state=ServerState(), app_state={})
        transport = Transport()
        protocol.connection_made(transport)
        protocol.data_received(HANDSHAKE)
        for _ in range(100):
            await asyncio.sleep(0)
        protocol.connection_lost(None)
        await asyncio.sleep(0)
        return protocol, transport

    return asyncio.run(serve())


def test_an_open_socket_keeps_neither_the_handshakes_request_nor_its_response():
    async def app(scope: Any, receive: Any, send: Any) -> None:
        assert scope["headers"]  # the app still sees the handshake's headers
        await receive()
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send", "text": "standings"})
        await receive()

    protocol, transport = _served(app)

    assert transport.written.startswith(b"HTTP/1.1 101 Switching Protocols\r\n")
    assert b"standings" in transport.written
    assert protocol.request is None
    assert protocol.response is None


def test_a_refused_socket_is_answered_403_as_before():
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "websocket.close"})

    _, transport = _served(app)

    assert transport.written.startswith(b"HTTP/1.1 403 Forbidden\r\n")


def test_the_procfile_and_every_server_started_here_serve_sockets_with_it():
    web = next(
        line
        for line in (Path(__file__).parents[2] / "Procfile").read_text().splitlines()
        if line.startswith("web:")
    )
    protocol = "server.websocket_protocol:WebSocketProtocol"

    assert f"--ws {protocol}" in web
    assert SERVING_OPTIONS[SERVING_OPTIONS.index("--ws") + 1] == protocol
