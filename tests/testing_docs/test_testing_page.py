"""Every example of docs/testing.md runs as written: python blocks as pytest modules (or scripts),
sh blocks in bash against `kafkito serve --control`."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.support import ControlledCluster
from tests.control.support import ControlledBroker
from tests.testing_docs.blocks import RUN_LANGUAGES, Block, fenced_blocks

PAGE = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
BLOCKS = fenced_blocks(PAGE)
PYTHON = [b for b in BLOCKS if b.language == "python"]
SHELL = [b for b in BLOCKS if b.language == "sh"]
EXAMPLE_TIMEOUT_S = 300


def where(block: Block) -> str:
    return f"docs/testing.md, the {block.language} block of line {block.line}"


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=EXAMPLE_TIMEOUT_S, check=False
    )


def test_the_page_has_an_example_of_every_feature() -> None:
    code = "".join(b.code for b in BLOCKS)
    for feature in (
        "def test_",
        "kafkito_session",
        "pytest.mark.kafkito",
        "kafkito.testing.start",
        ".advance(",
        ".expire_member(",
        ".inject(",
        ".disconnect(",
        ".blackhole(",
        ".wait_for_group(",
        ".group_timeline(",
        ".restart(",
        "curl ",
        "kafkito control advance",
        "kafkito control fault add",
        "kafkito control fault wait",
        "kafkito control group wait",
        "kafkito control timeline",
        "nodes=3",
        ".stop_node(",
        ".start_node(",
        ".move_coordinator(",
        "kafkito control node stop",
        "kafkito control coordinator move",
    ):
        assert feature in code, f"docs/testing.md has no example of {feature}"
    assert {b.language for b in BLOCKS} <= {*RUN_LANGUAGES, "text"}, "a block language the suite does not run"


def test_the_examples_wait_for_conditions_not_for_time() -> None:
    """No example sleeps, or waits for a consumer to go quiet: each waits on what it expects."""
    for block in BLOCKS:
        if block.language in RUN_LANGUAGES:
            assert "sleep(" not in block.code and "sleep " not in block.code, where(block)
            if "consumer_timeout_ms" in block.code:  # a bound on the wait, with islice stopping at the count
                assert "islice" in block.code, f"{where(block)}: iterating until the consumer is idle"


def test_the_page_says_how_to_install_kafkito_and_each_client() -> None:
    text = PAGE.read_text()
    for step in ("pip install -e /path/to/kafkito", "make install", "pip wheel", "python -m build",
                 "pip install confluent-kafka", "pip install pytest"):  # fmt: skip
        assert step in text, f"docs/testing.md does not say {step!r}"
    assert "pip install kafkito\n" not in text and "`pip install kafkito`" not in text  # not on PyPI


def test_the_readme_links_the_page() -> None:
    assert "(docs/testing.md)" in (PAGE.parents[1] / "README.md").read_text()


@pytest.mark.parametrize("block", PYTHON, ids=[b.id for b in PYTHON])
def test_python_example(block: Block, tmp_path: Path) -> None:
    if block.is_test_module:
        # A pytest run of its own, outside this repository's conftest: as a user's suite would run it.
        module = tmp_path / f"test_example_line_{block.line}.py"
        module.write_text(block.code)
        result = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", module.name], tmp_path)
        summary = result.stdout.strip().splitlines()[-1:] or [""]
        assert result.returncode == 0, (
            f"{where(block)} failed:\n{result.stdout[-6000:]}\n{result.stderr[-3000:]}"
        )
        assert " passed" in summary[0] and "skipped" not in summary[0], f"{where(block)}: {summary[0]}"
    else:
        script = tmp_path / f"example_line_{block.line}.py"
        script.write_text(block.code)
        result = run([sys.executable, script.name], tmp_path)
        assert result.returncode == 0, (
            f"{where(block)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
        )


@pytest.fixture
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ControlledBroker]:
    block: Block = request.node.callspec.params["block"]
    # A block that stops nodes runs against `kafkito serve --nodes 3` (KAFKITO_BOOTSTRAP lists them all).
    kind = ControlledCluster if "kafkito control node " in block.code else ControlledBroker
    broker = kind(tmp_path / "data").start()
    yield broker
    broker.stop()


@pytest.mark.parametrize("block", SHELL, ids=[b.id for b in SHELL])
def test_shell_example(block: Block, served: ControlledBroker, tmp_path: Path) -> None:
    env = dict(os.environ)
    # `python` and `kafkito` are this interpreter's (the virtualenv's), as after `pip install kafkito`.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["KAFKITO_CONTROL"] = served.url
    env["KAFKITO_BOOTSTRAP"] = served.bootstrap
    code, stdout, stderr = run_shell(block.code, tmp_path, env)
    assert code == 0, f"{where(block)} failed ({code}):\n{stdout[-3000:]}\n{stderr[-6000:]}"
    assert "Traceback" not in stderr, stderr


def run_shell(code: str, cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    """bash -e in a session of its own: whatever the block left running in the background is killed
    with it, and its output goes to files (a pipe held open by a leftover process would never end)."""
    out, err = cwd / "stdout.txt", cwd / "stderr.txt"
    with out.open("w") as stdout, err.open("w") as stderr:
        proc = subprocess.Popen(
            ["bash", "-e", "-o", "pipefail", "-c", code],
            cwd=cwd, env=env, stdout=stdout, stderr=stderr, start_new_session=True,
        )  # fmt: skip
        try:
            status = proc.wait(timeout=EXAMPLE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            status = -1
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return status, out.read_text(), err.read_text()
