"""A `kafkito serve --control` child process and a plain urllib client of its JSON API."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.net import free_port, wait_for_port


@dataclass
class Answer:
    status: int
    body: Any


class ControlledBroker:
    """`kafkito serve --control 127.0.0.1:PORT` as a child, with the broker on its own free port."""

    def __init__(self, data_dir: Path, *extra: str) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.control_port = free_port()
        self.extra = extra
        self.log_path = data_dir.parent / f"{data_dir.name}-broker.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.control_port}"

    def start(self) -> ControlledBroker:
        cmd = [
            sys.executable, "-m", "kafkito", "serve", "--port", str(self.port),
            "--data-dir", str(self.data_dir), "--log-format", "json",
            "--control", f"127.0.0.1:{self.control_port}",
            "--set", "group.initial.rebalance.delay.ms=0", *self.extra,
        ]  # fmt: skip
        with open(self.log_path, "ab") as logf:
            self.proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, env=os.environ.copy())
        try:
            wait_for_port("127.0.0.1", self.control_port, 30)
            wait_for_port("127.0.0.1", self.port, 30)
        except TimeoutError:
            self.stop()
            raise RuntimeError(f"broker did not start; log:\n{self.log_path.read_text()[-4000:]}") from None
        return self

    def stop(self) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        code, self.proc = self.proc.returncode, None
        return code

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
