"""TLS for SSL and SASL_SSL listeners: the server `ssl.SSLContext` from PEM key and trust stores, and the
principal of a client certificate (its subject as RFC 2253 text, through `ssl.principal.mapping.rules`)."""

from __future__ import annotations

import os
import re
import ssl
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafkito.broker.config import ConfigError

_CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
# The attribute keywords Java's X500Principal.getName() (RFC 2253) writes; others keep their name.
_KEYWORDS = {
    "commonName": "CN", "countryName": "C", "localityName": "L", "stateOrProvinceName": "ST",
    "organizationName": "O", "organizationalUnitName": "OU", "streetAddress": "STREET",
    "domainComponent": "DC", "userId": "UID",
}  # fmt: skip


def server_context(prop: Callable[[str], str | None]) -> ssl.SSLContext:
    """The listener's TLS context from its `ssl.*` properties (`prop` applies the listener prefix)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    versions = [
        v.strip() for v in (prop("ssl.enabled.protocols") or "TLSv1.2,TLSv1.3").split(",") if v.strip()
    ]
    known = [_VERSIONS[v] for v in versions if v in _VERSIONS]
    if not known:
        raise ConfigError(f"ssl.enabled.protocols={','.join(versions)}: kafkito accepts TLSv1.2 and TLSv1.3")
    ctx.minimum_version, ctx.maximum_version = min(known), max(known)
    _load_keystore(ctx, prop)
    trusted = _load_truststore(ctx, prop)
    auth = (prop("ssl.client.auth") or "none").strip().lower()
    if auth not in _CLIENT_AUTH:
        raise ConfigError(f"ssl.client.auth={auth!r}: expected none, requested or required")
    if auth != "none" and not trusted:
        raise ConfigError(f"ssl.client.auth={auth} needs a truststore to check client certificates against")
    ctx.verify_mode = _CLIENT_AUTH[auth]
    return ctx


def _require_pem(prop: Callable[[str], str | None], store: str) -> None:
    kind = (prop(f"ssl.{store}.type") or "JKS").strip().upper()
    if kind != "PEM":
        raise ConfigError(
            f"ssl.{store}.type={kind}: kafkito reads PEM stores only (set ssl.{store}.type=PEM)"
        )


def _load_keystore(ctx: ssl.SSLContext, prop: Callable[[str], str | None]) -> None:
    location, chain, key = prop("ssl.keystore.location"), prop("ssl.keystore.certificate.chain"), prop(
        "ssl.keystore.key")  # fmt: skip
    password = prop("ssl.key.password")
    if not location and not (chain and key):
        raise ConfigError("a TLS listener needs ssl.keystore.location, or ssl.keystore.certificate.chain "
                          "and ssl.keystore.key")  # fmt: skip
    _require_pem(prop, "keystore")
    try:
        if location:
            ctx.load_cert_chain(location, password=password)
            return
        assert chain is not None and key is not None
        # load_cert_chain reads files only: the inline PEM goes through a private temporary file.
        fd, path = tempfile.mkstemp(suffix=".pem")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(_pem_lines(key) + "\n" + _pem_lines(chain) + "\n")
            ctx.load_cert_chain(path, password=password)
        finally:
            os.unlink(path)
    except (OSError, ssl.SSLError) as e:
        raise ConfigError(f"cannot load the TLS keystore: {e}") from None


def _load_truststore(ctx: ssl.SSLContext, prop: Callable[[str], str | None]) -> bool:
    location, inline = prop("ssl.truststore.location"), prop("ssl.truststore.certificates")
    if not location and not inline:
        return False
    _require_pem(prop, "truststore")
    try:
        if location:
            ctx.load_verify_locations(cafile=location)
        else:
            ctx.load_verify_locations(cadata=_pem_lines(inline or ""))
    except (OSError, ssl.SSLError) as e:
        raise ConfigError(f"cannot load the TLS truststore: {e}") from None
    return True


def _pem_lines(value: str) -> str:
    """An inline PEM value as Kafka accepts it in a properties file (newlines may be written as `\\n`)."""
    return value.replace("\\n", "\n").strip()


def _escape(value: str) -> str:
    out = re.sub(r'([,+"\\<>;=])', r"\\\1", value)
    if out.startswith(("#", " ")):
        out = "\\" + out
    if out.endswith(" ") and not out.endswith("\\ "):
        out = out[:-1] + "\\ "
    return out


def subject_name(peercert: dict[str, Any]) -> str:
    """A certificate's subject as RFC 2253 text (`CN=alice,OU=eng,O=acme,C=US`), as Kafka reads it."""
    rdns = []
    for rdn in reversed(peercert.get("subject", ())):
        rdns.append("+".join(f"{_KEYWORDS.get(k, k)}={_escape(v)}" for k, v in rdn))
    return ",".join(rdns)


_RULE = re.compile(r"\s*(?:(DEFAULT)|RULE:((?:\\/|[^/])*)/((?:\\/|[^/])*)/([LU])?)\s*(?:,|$)")


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str] | None  # None: DEFAULT
    replacement: str = ""
    case: str | None = None


class PrincipalMapper:
    """`ssl.principal.mapping.rules`: `RULE:pattern/replacement/[LU]` and `DEFAULT`; the first match wins."""

    def __init__(self, rules: str) -> None:
        self._rules: list[_Rule] = []
        pos, text = 0, rules.strip() or "DEFAULT"
        while pos < len(text):
            m = _RULE.match(text, pos)
            if m is None or m.end() == pos:
                raise ConfigError(f"ssl.principal.mapping.rules: cannot parse the rule at {text[pos:]!r}")
            pos = m.end()
            if m.group(1):
                self._rules.append(_Rule(None))
                continue
            try:
                pattern = re.compile(m.group(2).replace("\\/", "/"))
            except re.error as e:
                raise ConfigError(f"ssl.principal.mapping.rules: bad pattern {m.group(2)!r}: {e}") from None
            replacement = re.sub(r"\$(\d+)", r"\\g<\1>", m.group(3).replace("\\/", "/"))
            self._rules.append(_Rule(pattern, replacement, m.group(4)))

    def name(self, dn: str) -> str | None:
        """The principal name of a subject, or None when no rule applies."""
        for rule in self._rules:
            if rule.pattern is None:
                return dn
            m = rule.pattern.fullmatch(dn)
            if m is None:
                continue
            out = m.expand(rule.replacement)
            return out.lower() if rule.case == "L" else out.upper() if rule.case == "U" else out
        return None
