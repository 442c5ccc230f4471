"""`kafkito serve --log-format console` colours its log lines on a terminal only: with stderr on a pipe
(a CI log, a file, a parent process) the lines are plain text, with no ANSI escape."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
from pathlib import Path

from tests.support.brokers import wait_for_ready_file
from tests.support.waiting import wait_until

ESCAPE = "\x1b["


def _serve(tmp_path: Path, stderr: int) -> tuple[subprocess.Popen[bytes], Path]:
    ready = tmp_path / "ready.json"
    command = [sys.executable, "-m", "kafkito", "serve", "--port", "0", "--data-dir", str(tmp_path / "data"),
               "--log-format", "console", "--ready-file", str(ready)]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
    return proc, ready


def test_console_logs_on_a_pipe_carry_no_escapes(tmp_path: Path) -> None:
    proc, ready = _serve(tmp_path, subprocess.PIPE)
    try:
        wait_for_ready_file(ready, proc)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    text = err.decode()
    assert "broker.started" in text and "broker.stopped" in text, text
    assert ESCAPE not in text, text


def test_console_logs_on_a_terminal_keep_their_colours(tmp_path: Path) -> None:
    primary, secondary = pty.openpty()
    proc, _ = _serve(tmp_path, secondary)
    os.close(secondary)
    seen = bytearray()

    def started() -> bool:
        if select.select([primary], [], [], 0.1)[0]:
            seen.extend(os.read(primary, 65536))
        return b"broker.started" in seen

    try:
        wait_until(started, 30, "broker.started on the terminal")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        os.close(primary)
    assert ESCAPE in seen.decode(errors="replace")
