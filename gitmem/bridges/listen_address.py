"""Where a local HTTP server (``gitmem mcp --http``, ``gitmem ui``) may listen, judged as
the socket will bind it: the host is resolved first, as ``bind`` would resolve it, and the
server binds the resolved address. Every spelling of "all interfaces" is refused (``0``,
``0x0``, ``0.0``, ``::``, ``::ffff:0.0.0.0``, a name that resolves to one of them);
loopback is the default, and any other address needs a token the user chose."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass

from gitmem.errors import ConfigError, InvalidInput

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
MIN_TOKEN = 32  # characters: a token_urlsafe(24) or longer, 192 bits; a person's choice too


@dataclass(frozen=True)
class Address:
    host: str  # as bound: numeric, "127.0.0.1" or "::1"
    port: int
    given: str = ""  # the host as the user spelled it, when it is a name ("localhost")

    @property
    def netloc(self) -> str:
        return _netloc(self.host, self.port)

    def host_headers(self) -> list[str]:
        """The ``Host`` values a request to this server may carry: the bound address, the
        name it was given by, and the loopback names when it is loopback."""
        names = [self.netloc]
        if self.given:
            names.append(_netloc(self.given, self.port))
        if is_loopback(self.host):
            names += [f"{name}:{self.port}" for name in LOOPBACK_NAMES]
        return list(dict.fromkeys(names))


def judge(text: str, *, option: str, remote_ok: bool, why_not: str) -> Address:
    """``PORT``, ``HOST:PORT`` or ``[IPv6]:PORT`` (host 127.0.0.1 by default), resolved as
    the socket will bind it. An unspecified address is refused; one not loopback is
    refused unless ``remote_ok`` (``why_not`` then says how to allow it)."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host = "127.0.0.1"
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not port.isdigit() or not 0 <= int(port) <= 65535 or not host:
        raise InvalidInput(
            f"{option} takes [HOST:]PORT (e.g. 8765 or 127.0.0.1:8765), not {text!r}"
        )
    bound = _resolve(host, int(port), f"{option} {text}")
    ip = ipaddress.ip_address(bound)
    plain = ip.ipv4_mapped or ip if isinstance(ip, ipaddress.IPv6Address) else ip
    if plain.is_unspecified:
        raise InvalidInput(
            f"{option} {text}: that is {bound}, every interface; bind one address "
            "(put a proxy in front to serve other names)"
        )
    if not plain.is_loopback and not remote_ok:
        raise InvalidInput(f"{option} {text}: {bound} is not loopback; {why_not}")
    named = "" if _numeric(host) else host
    return Address(bound, int(port), named)


def is_loopback(host: str) -> bool:
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost"
    plain = ip.ipv4_mapped or ip if isinstance(ip, ipaddress.IPv6Address) else ip
    return plain.is_loopback


def token_problem(token: str, var: str) -> str | None:
    """Why ``token`` (from ``var``) cannot guard a server, or None."""
    if token.strip() != token:
        return f"{var} has spaces around it; an HTTP header cannot carry them"
    if len(token) < MIN_TOKEN:
        return (
            f"{var} is {len(token)} characters; a token needs at least {MIN_TOKEN} "
            "(python3 -c 'import secrets; print(secrets.token_urlsafe(32))')"
        )
    return None


def listen(address: Address) -> socket.socket:
    family = socket.AF_INET6 if ":" in address.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address.host, address.port))
        sock.listen(128)
    except OSError as err:
        sock.close()
        raise ConfigError(f"cannot listen on {address.netloc}: {err.strerror}") from None
    return sock


def _resolve(host: str, port: int, said: str) -> str:
    """The numeric address ``bind`` would use for ``host``: getaddrinfo's first answer."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as err:
        reason = err.strerror if isinstance(err, socket.gaierror) else "not a host name"
        raise InvalidInput(f"{said}: cannot resolve {host!r}: {reason}") from None
    return str(found[0][4][0])


def _numeric(host: str) -> bool:
    try:
        socket.getaddrinfo(host, None, flags=socket.AI_NUMERICHOST)
    except (socket.gaierror, UnicodeError):
        return False
    return True


def _netloc(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
