"""Every request is logged at debug level with its api, version, correlation id and client id."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.brokers import wait_for_ready_file
from tests.support.wire import WireClient


def _serve(tmp_path: Path, level: str) -> tuple[subprocess.Popen[bytes], int, Path]:
    log_path, ready = tmp_path / f"{level}.log", tmp_path / f"{level}-ready.json"
    with open(log_path, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kafkito", "serve", "--port", "0", "--ready-file", str(ready),
             "--data-dir", str(tmp_path / level), "--log-level", level, "--log-format", "json"],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    return proc, wait_for_ready_file(ready, proc)["port"], log_path


def _requests_logged(tmp_path: Path, level: str) -> list[dict[str, object]]:
    proc, port, log_path = _serve(tmp_path, level)
    try:
        with WireClient(f"127.0.0.1:{port}", client_id="log-check") as client:
            client.request(3, 12, topics=None, allow_auto_topic_creation=False)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    events = [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]
    return [e for e in events if e.get("event") == "request"]


def test_debug_level_logs_each_request_with_its_context(tmp_path: Path) -> None:
    logged = _requests_logged(tmp_path, "debug")
    expected = {"api": "Metadata", "version": 12, "client_id": "log-check", "correlation_id": 1}
    assert expected.items() <= logged[0].items()


def test_info_level_does_not_log_requests(tmp_path: Path) -> None:
    assert _requests_logged(tmp_path, "info") == []
