"""What the benchmarks share about the broker processes they run: a free port, waiting for it, CPU time."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing listens on 127.0.0.1:{port}") from None
            time.sleep(0.01)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def kafkito_executable(checkout: str | None = None) -> str:
    """The `kafkito` command of this venv, or of another checkout's own `.venv` (a baseline to compare
    with in the same run: `python3 -m venv DIR/.venv && DIR/.venv/bin/pip install -e DIR`)."""
    if checkout is not None:
        exe = Path(checkout) / ".venv" / "bin" / "kafkito"
        if not exe.is_file():
            raise SystemExit(f"{exe} not found: install that checkout into its own .venv first")
        return str(exe)
    return shutil.which("kafkito", path=str(Path(sys.executable).parent)) or "kafkito"
