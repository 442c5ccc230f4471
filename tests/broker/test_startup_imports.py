"""What the broker imports before its first request: no API handler, no transaction coordinator, no HTTP.

Each is imported on first use (a handler on its API's first request, the transaction coordinator on
the first transactional one, or at start when `__transaction_state` exists): start-up time is
BENCHMARKS.md's, and this keeps a new top-level import from quietly bringing them back.
"""

from __future__ import annotations

import json
import subprocess
import sys

_LOADED = (
    "import json, sys, kafkito.broker.cli, kafkito.broker.app, kafkito.broker.server; "
    "print(json.dumps(sorted(sys.modules)))"
)


def test_serve_imports_no_handler_and_no_transaction_coordinator() -> None:
    out = subprocess.run([sys.executable, "-c", _LOADED], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    handlers = {m for m in loaded if m.startswith("kafkito.broker.handlers.")}
    assert handlers <= {"kafkito.broker.handlers.registry", "kafkito.broker.handlers.api_versions"}
    assert not {m for m in loaded if m.startswith("kafkito.broker.transactions")}
    # `kafkito control`'s urllib client and the control endpoint's aiohttp: only when asked for.
    assert not loaded & {"urllib.request", "http.client", "aiohttp"}
    # What consumer groups need on first use only: regexes (google-re2), metadata hashes (hashlib,
    # OpenSSL), the heterogeneous assignor's fractions (with decimal): ~4 ms of every start together.
    eager = loaded & {"re2", "hashlib", "fractions", "decimal"}
    assert not eager, f"{eager}: import them where they are first used (BENCHMARKS.md, start-up)"
