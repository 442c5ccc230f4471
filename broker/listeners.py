"""The broker's listeners as Kafka defines them: `listeners`, `advertised.listeners`,
`listener.security.protocol.map`, and the per-listener properties `listener.name.<name>.<property>`.

Without `listeners`, there is one PLAINTEXT listener on `host:port` (`--host`/`--port`), as before.
The first listener always binds `host:port` (which `listeners` sets, and the flags may override).
"""

from __future__ import annotations

import socket
from enum import StrEnum
from typing import NamedTuple

from kafkito.broker.config import Config, ConfigError

ANONYMOUS = "User:ANONYMOUS"


class SecurityProtocol(StrEnum):
    PLAINTEXT = "PLAINTEXT"
    SSL = "SSL"
    SASL_PLAINTEXT = "SASL_PLAINTEXT"
    SASL_SSL = "SASL_SSL"

    @property
    def tls(self) -> bool:
        return self in (SecurityProtocol.SSL, SecurityProtocol.SASL_SSL)

    @property
    def sasl(self) -> bool:
        return self in (SecurityProtocol.SASL_PLAINTEXT, SecurityProtocol.SASL_SSL)


class Listener(NamedTuple):
    """One listener: its name, security protocol, bind address and (when set) advertised address (a
    NamedTuple: every start builds one, and defining one costs ~10 times less than a frozen dataclass)."""

    name: str
    protocol: SecurityProtocol
    host: str
    port: int
    advertised_host: str | None = None
    advertised_port: int | None = None

    def prop(self, config: Config, name: str) -> str | None:
        """A property as this listener sees it: `listener.name.<name>.<property>`, else the broker's."""
        return listener_property(config, self.name, name)


def _split(entry: str, what: str) -> tuple[str, str, int]:
    name, sep, address = entry.strip().partition("://")
    if not sep or not name:
        raise ConfigError(f"{what} entry {entry!r} is not NAME://host:port")
    host, _, port = address.rpartition(":")
    if not port.isdigit():
        raise ConfigError(f"{what} entry {entry!r} has no port")
    return name.upper(), host.strip("[]"), int(port)


def protocol_map(config: Config) -> dict[str, SecurityProtocol]:
    out: dict[str, SecurityProtocol] = {}
    for pair in config.listener_security_protocol_map.split(","):
        if not pair.strip():
            continue
        name, _, proto = pair.strip().partition(":")
        try:
            out[name.upper()] = SecurityProtocol(proto.upper())
        except ValueError:
            raise ConfigError(
                f"listener.security.protocol.map: {pair!r} names no security protocol "
                "(PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)"
            ) from None
    return out


def _advertised(config: Config) -> dict[str, tuple[str, int]]:
    advertised: dict[str, tuple[str, int]] = {}
    for entry in (config.advertised_listeners or "").split(","):
        if entry.strip():
            name, host, port = _split(entry, "advertised.listeners")
            advertised[name] = (host, port)
    return advertised


def listeners_of(config: Config) -> list[Listener]:
    """Every listener, the first on `host:port`; ConfigError for a malformed or inconsistent list."""
    if not config.listeners:
        return [
            Listener("PLAINTEXT", SecurityProtocol.PLAINTEXT, config.host, config.port,
                     config.advertised_host, config.advertised_port)
        ]  # fmt: skip
    protocols = protocol_map(config)
    advertised = _advertised(config)
    out: list[Listener] = []
    for index, entry in enumerate(e for e in config.listeners.split(",") if e.strip()):
        name, host, port = _split(entry, "listeners")
        if name not in protocols:
            raise ConfigError(f"listener {name} has no security protocol in listener.security.protocol.map")
        if any(other.name == name for other in out):
            raise ConfigError(f"listeners names {name} twice")
        if index == 0:
            host, port = config.host, config.port  # --host/--port may override the first
        adv_host, adv_port = advertised.get(name, (None, None))
        if index == 0 and not config.advertised_listeners:
            adv_host, adv_port = config.advertised_host, config.advertised_port
        out.append(Listener(name, protocols[name], host or "0.0.0.0", port, adv_host, adv_port))
    unknown = set(advertised) - {listener.name for listener in out}
    if unknown:
        raise ConfigError(f"advertised.listeners names {sorted(unknown)}, which listeners does not")
    return out


def listener_property(config: Config, listener: str, name: str) -> str | None:
    """`listener.name.<listener>.<name>` when given, else the broker property `name` (as a string)."""
    prefixed = config.extra.get(f"listener.name.{listener.lower()}.{name}")
    if prefixed is not None:
        return prefixed
    attr = name.replace(".", "_")
    if hasattr(config, attr) and attr not in ("extra", "explicit"):
        value = getattr(config, attr)
        return None if value is None else str(value)
    return config.extra.get(name)


def authenticates(listener: Listener, config: Config) -> bool:
    """Whether the listener authenticates its clients (SASL, or TLS with required client certificates)."""
    if listener.protocol.sasl:
        return True
    return listener.protocol.tls and (listener.prop(config, "ssl.client.auth") or "").lower() == "required"


_LOOPBACK = ("127.", "::1", "localhost")


def numeric_address(host: str, port: int) -> tuple[socket.AddressFamily, tuple[str, int]] | None:
    """(family, address) to bind when `host` is an IPv4 or IPv6 address literal, else None (a name).

    A literal needs no name resolution: binding it directly skips `getaddrinfo`, whose `str` host is
    encoded with the `idna` codec (importing it, `stringprep` and `unicodedata` costs each start ~1 ms).
    """
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
        except (OSError, ValueError):
            continue
        return family, (host, port)
    return None


def bound_socket(host: str, port: int) -> socket.socket | None:
    """A TCP socket bound to an address literal as the event loop's `create_server(host, port,
    reuse_address=True)` binds it (SO_REUSEADDR, IPv6 only on an IPv6 address), to pass as `sock=`;
    None when `host` is a name, which `create_server` resolves. The bind error is worded as the loop's."""
    found = numeric_address(host, port)
    if found is None:
        return None
    family, address = found
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        reason = (exc.strerror or str(exc)).lower()
        raise OSError(exc.errno, f"error while attempting to bind on address {address!r}: {reason}") from None
    return sock


def open_to_network(listener: Listener) -> bool:
    """A listener bound beyond loopback."""
    return not listener.host.startswith(_LOOPBACK)


# Kafka's PASSWORD-type properties (and any listener-prefixed form of them): DescribeConfigs names them
# and never shows their values.
_SENSITIVE = ("sasl.jaas.config", "ssl.key.password", "ssl.keystore.password", "ssl.truststore.password",
              "ssl.keystore.key", "password")  # fmt: skip


def is_sensitive(name: str) -> bool:
    return name.endswith(_SENSITIVE)
