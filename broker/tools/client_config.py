"""`--command-config FILE`: a Kafka client properties file, as Kafka's tools take it, turned into
kafka-python's settings (security protocol, SASL mechanism and JAAS login, PEM trust and key stores).

Kafka's names are read, and librdkafka's (`ssl.ca.location`, `ssl.certificate.location`,
`ssl.key.location`, `sasl.username`, `sasl.password`) too, since kcat and rpk users have those files.
kafka-python reads PEM files only: a JKS or PKCS12 store is refused in one line that says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkito.broker.tools.args import ENV_COMMAND_CONFIG
from kafkito.broker.tools.output import ToolError

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
LOGIN_MODULES = {
    "org.apache.kafka.common.security.plain.PlainLoginModule": ("PLAIN",),
    "org.apache.kafka.common.security.scram.ScramLoginModule": ("SCRAM-SHA-256", "SCRAM-SHA-512"),
}
# Client settings the tools take as they are or that make no difference to them: read without a word.
QUIET = frozenset(
    {
        "client.id", "request.timeout.ms", "default.api.timeout.ms", "retries", "retry.backoff.ms",
        "ssl.protocol", "ssl.enabled.protocols", "ssl.keystore.type", "ssl.truststore.type",
        "sasl.client.callback.handler.class", "sasl.login.class", "ssl.engine.factory.class",
        "sasl.kerberos.service.name",
    }
)  # fmt: skip


@dataclass(slots=True)
class ClientSecurity:
    """What a properties file says about reaching the broker, in kafka-python's words."""

    protocol: str = "PLAINTEXT"
    options: dict[str, Any] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)  # names the tools do not use

    @property
    def uses_tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")


def read_properties(path: Path) -> dict[str, str]:
    """`name=value` (or `name: value`) lines; `#` and `!` comments; a trailing `\\` joins lines."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise ToolError(f"cannot read --command-config {path} ({exc.strerror})", 2) from None
    props: dict[str, str] = {}
    pending = ""
    for raw in text.splitlines():
        line = pending + raw.strip()
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending = line[:-1]
            continue
        pending = ""
        if not line or line[0] in "#!":
            continue
        cut = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if cut < 0:
            raise ToolError(f"--command-config {path}: {line!r} is not NAME=VALUE", 2)
        props[line[:cut].strip()] = line[cut + 1 :].strip()
    return props


def security_from(props: dict[str, str], where: str) -> ClientSecurity:
    """kafka-python's security settings for these properties."""
    remaining = dict(props)
    protocol = remaining.pop("security.protocol", "PLAINTEXT").upper()
    if protocol not in PROTOCOLS:
        raise ToolError(f"{where}: security.protocol={protocol} is not one of {', '.join(PROTOCOLS)}", 2)
    found = ClientSecurity(protocol, {"security_protocol": protocol})
    if protocol.startswith("SASL_"):
        found.options.update(_sasl(remaining, where))
    if found.uses_tls:
        found.options.update(_tls(remaining, where))
    found.ignored = sorted(n for n in remaining if n not in QUIET and not _unused_here(n, protocol))
    return found


def _unused_here(name: str, protocol: str) -> bool:
    """sasl.* or ssl.* settings a file may carry for another protocol than the one it names."""
    return (name.startswith("sasl.") and not protocol.startswith("SASL_")) or (
        name.startswith("ssl.") and protocol not in ("SSL", "SASL_SSL")
    )


def _sasl(props: dict[str, str], where: str) -> dict[str, Any]:
    mechanism = props.pop("sasl.mechanism", props.pop("sasl.mechanisms", "GSSAPI")).upper()
    if mechanism not in MECHANISMS:
        raise ToolError(
            f"{where}: sasl.mechanism={mechanism}: kafkito's tools speak {', '.join(MECHANISMS)}", 2
        )
    username, password = props.pop("sasl.username", None), props.pop("sasl.password", None)
    jaas = props.pop("sasl.jaas.config", None)
    if jaas is not None:
        username, password = _jaas_login(jaas, mechanism, where)
    if not username or password is None:
        raise ToolError(
            f"{where}: SASL {mechanism} needs sasl.jaas.config with username and password "
            '(e.g. org.apache.kafka.common.security.scram.ScramLoginModule required username="u" '
            'password="p";)',
            2,
        )
    return {"sasl_mechanism": mechanism, "sasl_plain_username": username, "sasl_plain_password": password}


def _jaas_login(text: str, mechanism: str, where: str) -> tuple[str | None, str | None]:
    from kafkito.broker.auth.jaas import JaasError, parse_jaas

    try:
        entry = parse_jaas(text)
    except JaasError as exc:
        raise ToolError(f"{where}: {exc}", 2) from None
    serves = LOGIN_MODULES.get(entry.login_module)
    if serves is None or mechanism not in serves:
        raise ToolError(
            f"{where}: sasl.jaas.config's login module {entry.login_module} does not log in with {mechanism}",
            2,
        )
    return entry.options.get("username"), entry.options.get("password")


def _tls(props: dict[str, str], where: str) -> dict[str, Any]:
    for kind in ("truststore", "keystore"):
        store_type = props.get(f"ssl.{kind}.type", "PEM").upper()
        if f"ssl.{kind}.location" in props and store_type != "PEM":
            raise ToolError(
                f"{where}: ssl.{kind}.type={store_type}: kafkito's tools read PEM files only "
                f"(set ssl.{kind}.type=PEM; `openssl pkcs12 -in STORE -out store.pem` converts one)",
                2,
            )
    options: dict[str, Any] = {}
    ca = props.pop("ssl.truststore.location", None) or props.pop("ssl.ca.location", None)
    if ca:
        options["ssl_cafile"] = _pem(ca, where)
    keystore = props.pop("ssl.keystore.location", None)  # a PEM keystore: the key and its certificate
    cert = props.pop("ssl.certificate.location", None) or keystore
    key = props.pop("ssl.key.location", None) or keystore
    if cert:
        options["ssl_certfile"] = _pem(cert, where)
    if key:
        options["ssl_keyfile"] = _pem(key, where)
    password = props.pop("ssl.key.password", None) or props.pop("ssl.keystore.password", None)
    if password:
        options["ssl_password"] = password
    props.pop("ssl.truststore.password", None)  # PEM trust stores have none
    identification = props.pop("ssl.endpoint.identification.algorithm", "https")
    options["ssl_check_hostname"] = identification.lower() == "https"
    return options


def _pem(location: str, where: str) -> str:
    """A PEM file's path: a missing file, or a JKS/PKCS12 store named without its type, is refused."""
    try:
        head = Path(location).read_bytes()
    except OSError as exc:
        raise ToolError(f"{where}: cannot read {location} ({exc.strerror})", 2) from None
    if b"-----BEGIN " not in head:
        raise ToolError(
            f"{where}: {location} is not a PEM file: kafkito's tools read PEM only "
            "(`openssl pkcs12 -in STORE -out store.pem` converts a PKCS12 store)",
            2,
        )
    return location


def load(path: str | None) -> ClientSecurity:
    """The security of `--command-config PATH` (or `$KAFKITO_COMMAND_CONFIG`); PLAINTEXT without one."""
    chosen = path or os.environ.get(ENV_COMMAND_CONFIG) or None
    if chosen is None:
        return ClientSecurity(options={"security_protocol": "PLAINTEXT"})
    return security_from(read_properties(Path(chosen)), f"--command-config {chosen}")
