"""`kafkito serve --nodes 3 --port 0 --control ...` as a child process (the control endpoint's JSON API
and `kafkito control` against it)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from tests.control.support import ControlledBroker
from tests.support.net import wait_for_port
from tests.support.waiting import wait_until


class ControlledCluster(ControlledBroker):
    """`kafkito serve --nodes 3 --port 0 --control ...`: three nodes on free ports."""

    def start(self) -> ControlledCluster:
        cmd = [
            sys.executable, "-m", "kafkito", "serve", "--nodes", "3", "--port", "0",
            "--data-dir", str(self.data_dir), "--log-format", "json",
            "--control", f"127.0.0.1:{self.control_port}", "--set", "group.initial.rebalance.delay.ms=0",
        ]  # fmt: skip
        with open(self.log_path, "ab") as logf:
            self.proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, env=os.environ.copy())
        try:
            wait_for_port("127.0.0.1", self.control_port, 30)
            wait_until(lambda: self.call("GET", "/topology").status == 200, what="the cluster serving")
        except TimeoutError:
            self.stop()
            raise RuntimeError(f"cluster did not start; log:\n{self.log_path.read_text()[-4000:]}") from None
        return self

    def nodes(self) -> dict[int, dict[str, Any]]:
        return {n["node_id"]: n for n in self.call("GET", "/topology").body["nodes"]}

    @property
    def bootstrap(self) -> str:
        return ",".join(f"{n['host']}:{n['port']}" for n in self.nodes().values())
