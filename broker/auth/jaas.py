"""Kafka's JAAS configuration syntax, as `sasl.jaas.config` values hold it:
`org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" user_alice="s";`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = re.compile(r'\s*(?:([A-Za-z_][\w.$-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]+))|(;))')
_FLAGS = ("required", "requisite", "sufficient", "optional")


class JaasError(ValueError):
    """A `sasl.jaas.config` value that does not parse (the message never holds its values)."""


@dataclass(slots=True)
class JaasEntry:
    login_module: str
    flag: str
    options: dict[str, str] = field(default_factory=dict, repr=False)


def parse_jaas(text: str) -> JaasEntry:
    """The one login module entry of a `sasl.jaas.config` value."""
    head = re.match(r"\s*([\w.$]+)\s+(\w+)", text)
    if head is None or head.group(2).lower() not in _FLAGS:
        raise JaasError("sasl.jaas.config must start with a login module class and a control flag")
    entry = JaasEntry(head.group(1), head.group(2).lower())
    pos = head.end()
    ended = False
    while pos < len(text):
        if not text[pos:].strip():
            break
        m = _TOKEN.match(text, pos)
        if m is None or ended:
            raise JaasError(f"sasl.jaas.config: unexpected text at character {pos}")
        if m.group(4):
            ended = True
        else:
            quoted = m.group(2)
            value = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else m.group(3)
            entry.options[m.group(1)] = value
        pos = m.end()
    if not ended:
        raise JaasError("sasl.jaas.config must end with ';'")
    return entry
