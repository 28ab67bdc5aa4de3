"""Where a webhook may be posted: http or https URLs whose host resolves only to public addresses.
An operator's URL must not reach this deployment's own network (PostgreSQL, Redis, a cloud's
metadata service at 169.254.169.254), so a private, loopback, link-local, multicast or reserved
address is refused, at registration and again before every POST (DNS can change in between),
unless WEBHOOK_ALLOW_PRIVATE_URLS is on: local development and the tests post to 127.0.0.1."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

SCHEMES = {"http": 80, "https": 443}

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class UrlRefused(Exception):
    """The URL may not be posted to; the message says why, for the operator."""


@dataclass(frozen=True, slots=True)
class Target:
    """Where one POST goes: the URL's parts, and the addresses its host was checked at (the
    POST connects to one of these, so a second DNS answer cannot send it elsewhere)."""

    scheme: str
    host: str
    port: int
    path: str
    addresses: tuple[str, ...]


def _split(url: str) -> tuple[str, str, int, str]:
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise UrlRefused(f"The URL does not parse: {exc}.") from exc
    if parts.scheme not in SCHEMES:
        raise UrlRefused("Only http and https URLs can receive webhooks.")
    if parts.username is not None or parts.password is not None:
        raise UrlRefused("A webhook URL carries no user name or password; sign with the secret.")
    try:
        port = parts.port or SCHEMES[parts.scheme]
    except ValueError as exc:
        raise UrlRefused(f"The URL's port is not a port: {exc}.") from exc
    if not parts.hostname:
        raise UrlRefused("The URL has no host.")
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    return parts.scheme, parts.hostname, port, path


def _kind_refused(address: IPAddress) -> str | None:
    """Which kind of address this is when it is not a public one (None for a public one)."""
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:
        return _kind_refused(mapped)
    for kind in ("loopback", "link_local", "multicast", "reserved", "unspecified", "private"):
        if getattr(address, f"is_{kind}"):
            return kind.replace("_", "-")
    if not address.is_global:
        return "non-public"
    return None


def _addresses(host: str, port: int) -> list[IPAddress]:
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise UrlRefused(f"The host {host} does not resolve: {exc}.") from exc
    addresses: list[IPAddress] = []
    for *_, sockaddr in found:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


def _check(host: str, addresses: list[IPAddress]) -> None:
    if settings.WEBHOOK_ALLOW_PRIVATE_URLS:
        return
    for address in addresses:
        kind = _kind_refused(address)
        if kind is not None:
            raise UrlRefused(
                f"The host {host} resolves to {address}, a {kind} address: webhooks go to "
                "public addresses only (WEBHOOK_ALLOW_PRIVATE_URLS is off)."
            )


def url_check(url: str) -> None:
    """At registration: raise UrlRefused for a URL that may not receive webhooks. With private
    addresses allowed a host need not resolve yet (there is nothing to guard)."""
    _, host, port, _ = _split(url)
    if settings.WEBHOOK_ALLOW_PRIVATE_URLS:
        return
    _check(host, _addresses(host, port))


def target_resolve(url: str) -> Target:
    """Before a POST: the URL's host resolved now and checked; raises UrlRefused."""
    scheme, host, port, path = _split(url)
    addresses = _addresses(host, port)
    if not addresses:
        raise UrlRefused(f"The host {host} has no address.")
    _check(host, addresses)
    return Target(
        scheme=scheme,
        host=host,
        port=port,
        path=path,
        addresses=tuple(str(address) for address in addresses),
    )
