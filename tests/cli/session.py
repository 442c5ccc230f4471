"""The terminal session of docs/cli.md, replayed in tmux: `make run` in one window, the tools in another.

`python -m tests.cli.session` prints a fresh recording (what docs/cli.md shows); the test replays it
and compares, modulo timestamps, ids, the port and the data dir.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.net import free_port

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "cli.md"
BANNER_END = "Ctrl-C stops the broker."
PROMPT = "$ "
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
_LOG_LINE = re.compile(r"^<time> \[(\w+) *\] (\S+).*$")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass
class Recording:
    broker: list[str]  # the `make run` window, up to the end of the banner
    client: list[str]  # the tools window: prompts, commands and their output
    stopped: list[str]  # the `make run` window after Ctrl-C


def as_documented(lines: list[str], port: int, data: str) -> list[str]:
    """This run's port and data dir as the docs show them (9092, ./data)."""
    out = []
    for line in lines:
        line = line.replace(f" --bootstrap-server 127.0.0.1:{port}", "").replace(f":{port}", ":9092")
        line = line.replace(f"port={port}", "port=9092")
        out.append(line.replace(data, "./data").rstrip())
    while out and not out[-1]:
        out.pop()
    return out


def normalize(lines: list[str]) -> list[str]:
    """Timestamps, ids and a log line's fields out: its level and event stay."""
    out = []
    for line in lines:
        line = _LOG_LINE.sub(r"[\1] \2", _TIME.sub("<time>", line))
        out.append(_UUID.sub("<id>", line).rstrip())
    while out and not out[-1]:
        out.pop()
    return out


class Tmux:
    """A tmux server of our own (its own socket), so nothing else's sessions are touched."""

    def __init__(self) -> None:
        self.socket = f"kafkito-session-{os.getpid()}"

    def __call__(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True)
        return done.stdout

    def pane(self, target: str) -> list[str]:
        return self("capture-pane", "-p", "-J", "-S", "-", "-t", target).splitlines()

    def wait_for(self, target: str, text: str, timeout: float = 120) -> list[str]:
        deadline = time.monotonic() + timeout
        while True:
            lines = self.pane(target)
            if any(text in line for line in lines):
                return lines
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{text!r} not shown in {target} after {timeout} s:\n" + "\n".join(lines)
                )
            time.sleep(0.1)  # polling the pane: tmux has no way to wait for text

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def client_commands(doc_lines: list[str]) -> list[str]:
    return [line.removeprefix(PROMPT) for line in doc_lines if line.startswith(PROMPT)]


def record(commands: list[str]) -> tuple[Recording, int, str]:
    """Run `make run` and then `commands` in tmux; the panes as recorded, the port and the data dir."""
    if shutil.which("tmux") is None:
        raise AssertionError("tmux is not installed: `make install-clients` installs it")
    port = free_port()
    http_port = free_port()  # the web console's, shown as make run's default 8080
    data = tempfile.mkdtemp(prefix="kafkito-session-")
    tmux = Tmux()
    env = {"PORT": str(port), "HTTP_PORT": str(http_port), "DATA": f"{data}/data",
           "KAFKITO_BOOTSTRAP_SERVER": f"127.0.0.1:{port}", "PS1": PROMPT}  # fmt: skip
    # Not make's variables: under `make test`, `make run` would think itself a sub-make and print
    # "make[1]: Entering directory".
    unset = [arg for name in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS") for arg in ("-u", name)]
    shell = ["env", *unset, *(f"{k}={v}" for k, v in env.items()), "bash", "--norc", "--noprofile"]
    try:
        tmux(
            "new-session", "-d", "-s", "doc", "-n", "broker", "-x", "220", "-y", "60", "-c", str(REPO), *shell
        )
        tmux("set-option", "-t", "doc", "remain-on-exit", "on")
        _wait_ready(tmux, "doc:broker")  # keys typed before the shell reads them would be echoed twice
        tmux("send-keys", "-t", "doc:broker", "make run", "Enter")
        broker = tmux.wait_for("doc:broker", BANNER_END)
        tmux("new-window", "-t", "doc", "-n", "client", "-c", str(REPO), *shell)
        _wait_ready(tmux, "doc:client")
        for i, command in enumerate(commands, 1):
            tmux("send-keys", "-t", "doc:client", "-l", command)
            tmux("send-keys", "-t", "doc:client", "Enter")
            _wait_prompts(tmux, i + 1)
        client = tmux.pane("doc:client")
        tmux("send-keys", "-t", "doc:broker", "C-c", "")
        stopped = tmux.wait_for("doc:broker", "broker.stopped")
    finally:
        tmux.kill()
    broker = [line.replace(f":{http_port}/", ":8080/") for line in broker]
    end = next(i for i, line in enumerate(broker) if BANNER_END in line)
    start = next(i for i, line in enumerate(broker) if line.startswith(PROMPT + "make run"))
    return Recording(broker[start : end + 1], client, stopped), port, f"{data}/data"


def _wait_ready(tmux: Tmux, target: str, timeout: float = 30) -> None:
    """Wait until the window shows only the shell's first prompt."""
    deadline = time.monotonic() + timeout
    while [line.strip() for line in tmux.pane(target) if line.strip()] != [PROMPT.strip()]:
        if time.monotonic() > deadline:
            raise AssertionError(f"no shell prompt in {target}:\n" + "\n".join(tmux.pane(target)))
        time.sleep(0.05)  # polling the pane: tmux has no way to wait for text


def _wait_prompts(tmux: Tmux, count: int, timeout: float = 120) -> None:
    """Wait until `count` prompts are shown: the last command finished."""
    deadline = time.monotonic() + timeout
    while sum(line.startswith(PROMPT.strip()) for line in tmux.pane("doc:client")) < count:
        if time.monotonic() > deadline:
            raise AssertionError("a command did not finish:\n" + "\n".join(tmux.pane("doc:client")))
        time.sleep(0.1)  # polling the pane: tmux has no way to wait for text


def doc_blocks(text: str) -> dict[str, list[str]]:
    """The fenced blocks that follow `<!-- session: NAME -->` markers in docs/cli.md."""
    blocks = {}
    for match in re.finditer(r"<!-- session: (\w+) -->\n```\w*\n(.*?)\n```", text, re.S):
        blocks[match.group(1)] = match.group(2).splitlines()
    return blocks


if __name__ == "__main__":
    recording, port, data = record(client_commands(doc_blocks(DOC.read_text())["client"]))
    for name in ("broker", "client"):
        lines = as_documented(getattr(recording, name), port, data)
        print("\n".join([f"<!-- session: {name} -->", "```console", *lines, "```"]))
