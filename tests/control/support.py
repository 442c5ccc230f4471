"""A `kafkito serve --control` child process and a plain urllib client of its JSON API."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.brokers import ProcessBroker
from tests.support.net import free_port


@dataclass
class Answer:
    status: int
    body: Any


@dataclass
class RawAnswer:
    status: int
    headers: http.client.HTTPMessage
    text: str


def raw_request(
    port: int, method: str, path: str, headers: dict[str, str] | None = None, body: bytes | None = None
) -> RawAnswer:
    """One request to 127.0.0.1:`port` with exactly these headers (a `Host` given replaces the real
    one, as a browser's would after DNS rebinding); any status is returned."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return RawAnswer(response.status, response.headers, response.read().decode())
    finally:
        connection.close()


class ControlledBroker(ProcessBroker):
    """`kafkito serve --control 127.0.0.1:PORT` as a child, with the broker on its own free port."""

    def __init__(self, data_dir: Path, *extra: str) -> None:
        self.control_port = free_port()
        args = ["--control", f"127.0.0.1:{self.control_port}", *extra]
        props = {"group.initial.rebalance.delay.ms": 0}
        super().__init__(data_dir, props=props, args=args, also_wait=[self.control_port])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.control_port}"

    def call(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None) -> Answer:
        """One request with urllib; any status is returned (not raised) with its decoded JSON body."""
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return Answer(response.status, json.loads(response.read()))
        except urllib.error.HTTPError as exc:
            return Answer(exc.code, json.loads(exc.read()))

    def control(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """`kafkito control --url URL ARGS...` as a subprocess."""
        cmd = [sys.executable, "-m", "kafkito", "control", "--url", self.url, *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
