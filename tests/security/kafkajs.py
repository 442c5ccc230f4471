"""Running tests/security/kafkajs_secure.js (KafkaJS from tests/compat/node) and reading its one JSON line."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).with_name("kafkajs_secure.js")
KAFKAJS = Path(__file__).resolve().parents[1] / "compat" / "node" / "node_modules" / "kafkajs"


def run_kafkajs(**cmd: Any) -> dict[str, Any]:
    node = shutil.which("node")
    assert node and KAFKAJS.is_dir(), "node and KafkaJS (`make install-clients`) are needed"
    done = subprocess.run([node, str(SCRIPT), json.dumps(cmd)], capture_output=True, timeout=120)
    lines = [line for line in done.stdout.decode().splitlines() if line.strip()]
    assert lines, done.stderr.decode()[-2000:]
    result: dict[str, Any] = json.loads(lines[-1])
    return result
