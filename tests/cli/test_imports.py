"""`kafkito serve` pays nothing for the tools: their clients and verbs are imported only when one runs."""

from __future__ import annotations

import json
import subprocess
import sys

_SERVE_LOADS = (
    "import json, sys, kafkito.broker.cli as cli, kafkito.broker.app, kafkito.broker.server, "
    "kafkito.broker.preflight; cli._parser(); print(json.dumps(sorted(sys.modules)))"
)


def test_serve_imports_no_client_and_no_verb() -> None:
    out = subprocess.run([sys.executable, "-c", _SERVE_LOADS], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    assert not {m for m in loaded if m.startswith(("kafka.admin", "kafka.producer", "kafka.consumer"))}
    tools = {m.rsplit(".", 1)[1] for m in loaded if m.startswith("kafkito.broker.tools.")}
    assert tools <= {"args", "connect", "output"}  # the parser's: no verb
    assert "difflib" not in loaded  # only for a mistyped flag or an unknown property name
