"""`kafkito serve --port 0 --ready-file PATH`: the broker binds free ports itself and says which, once
it serves, in a file written whole; the file goes when the broker exits."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

from tests.cli.test_serve_errors import _refused
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

METADATA = 3


def _serve(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
    ready = tmp_path / "ready.json"
    cmd = [sys.executable, "-m", "kafkito", "serve", "--port", "0", "--data-dir", str(tmp_path / "data"),
           "--log-level", "warning", "--ready-file", str(ready), *args]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def written() -> dict[str, Any] | None:
        assert proc.poll() is None, f"kafkito serve exited with {proc.returncode}"
        return json.loads(ready.read_text()) if ready.exists() else None

    return proc, wait_until(written, what="the ready file")


def _stop(proc: subprocess.Popen[bytes]) -> int:
    proc.send_signal(signal.SIGTERM)
    return proc.wait(timeout=60)


def test_the_ready_file_names_every_nodes_port_and_goes_at_exit(tmp_path: Path) -> None:
    proc, ready = _serve(tmp_path, "--nodes", "2")
    try:
        assert ready["pid"] == proc.pid and ready["host"] == "127.0.0.1" and ready["console"] is None
        assert ready["port"] == ready["ports"][0] and len(set(ready["ports"])) == 2
        with WireClient(f"127.0.0.1:{ready['port']}") as client:
            described = client.request(METADATA, 4, topics=[])
        assert sorted(b.port for b in described.brokers) == sorted(ready["ports"])
    finally:
        assert _stop(proc) == 0
    assert not (tmp_path / "ready.json").exists()


def test_the_ready_file_names_the_consoles_address(tmp_path: Path) -> None:
    proc, ready = _serve(tmp_path, "--http", "127.0.0.1:0")
    try:
        with urllib.request.urlopen(
            ready["console"].removesuffix("/console/") + "/api/topics", timeout=30
        ) as r:
            assert r.status == 200 and "topics" in json.loads(r.read())
    finally:
        assert _stop(proc) == 0


def test_a_ready_file_that_cannot_be_written_is_refused_before_anything_is_created(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    message = _refused(tmp_path, "--ready-file", str(missing / "ready.json"))
    assert message == f"--ready-file {missing / 'ready.json'}: {missing} is not a writable directory"
    assert not (tmp_path / "data").exists()
