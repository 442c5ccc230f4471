"""Apache Kafka's own message specs (`common/message/*.json` inside the kafka-clients jar of the
reference classpath): each API's name, valid and flexible versions, listeners and fields."""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from tests.support.kafka_reference import classpath


@dataclass(frozen=True, slots=True)
class ApiSpec:
    api_key: int
    name: str  # "Produce"
    listeners: tuple[str, ...]
    request: dict[str, Any]
    response: dict[str, Any]

    @property
    def client_facing(self) -> bool:
        """Served by a broker to clients (not only between controllers and brokers)."""
        return "broker" in self.listeners


def clients_jar() -> Path:
    for jar in classpath().split(":"):
        if Path(jar).name.startswith("kafka-clients-"):
            return Path(jar)
    raise FileNotFoundError("no kafka-clients jar on the reference classpath")


def _parse(text: str) -> dict[str, Any]:
    spec: dict[str, Any] = json.loads(
        "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("//"))
    )
    return spec


@cache
def api_specs() -> dict[int, ApiSpec]:
    """api key -> Kafka's request and response specs."""
    requests: dict[int, dict[str, Any]] = {}
    responses: dict[int, dict[str, Any]] = {}
    with zipfile.ZipFile(clients_jar()) as jar:
        for entry in jar.namelist():
            if not (entry.startswith("common/message/") and entry.endswith(".json")):
                continue
            spec = _parse(jar.read(entry).decode())
            if spec.get("type") == "request":
                requests[spec["apiKey"]] = spec
            elif spec.get("type") == "response":
                responses[spec["apiKey"]] = spec
    return {
        key: ApiSpec(
            key, req["name"].removesuffix("Request"), tuple(req.get("listeners", ())), req, responses[key]
        )
        for key, req in sorted(requests.items())
        if key in responses
    }
