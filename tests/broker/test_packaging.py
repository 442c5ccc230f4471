"""`pip install .` into a fresh venv: everything under `kafkito`, and both ways of starting it work."""

from __future__ import annotations

import ast
import shutil
import socket
import subprocess
import venv
from pathlib import Path

import pytest

from tests.support.brokers import wait_for_ready_file

REPO = Path(__file__).resolve().parents[2]
_NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", "node_modules", "__pycache__", "*.egg-info", "build", "dist", "data", ".*_cache"
)
_GENERIC_NAMES = ("broker", "protocol", "purgatory")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with kafkito installed (not editable) from a copy of this working tree."""
    root = tmp_path_factory.mktemp("pkg")
    source = root / "src"
    shutil.copytree(REPO, source, symlinks=True, ignore=_NOT_SOURCE)
    env_dir = root / "venv"
    venv.create(env_dir, with_pip=True)
    pip = [str(env_dir / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, str(source)], check=True, cwd=root, timeout=600)
    return env_dir


def _site_packages(env_dir: Path) -> Path:
    found = list((env_dir / "lib").glob("python3*/site-packages"))
    assert len(found) == 1, found
    return found[0]


@pytest.mark.slow
def test_installs_nothing_under_a_generic_top_level_name(installed: Path) -> None:
    site = _site_packages(installed)
    assert (site / "kafkito" / "broker" / "app.py").is_file()
    assert (site / "kafkito" / "protocol" / "codec.py").is_file()
    assert (site / "kafkito" / "purgatory" / "timer.py").is_file()
    for name in _GENERIC_NAMES:
        assert not (site / name).exists(), f"{name}/ installed at the top level"
        assert not (site / f"{name}.py").exists()
    top_level = {p.name for p in site.iterdir()}
    assert not top_level & set(_GENERIC_NAMES)
    probe = "import importlib.util, sys; sys.exit(any(importlib.util.find_spec(n) for n in sys.argv[1:]))"
    subprocess.run([str(installed / "bin" / "python"), "-c", probe, *_GENERIC_NAMES], check=True, cwd="/")


def _serves(cmd: list[str], tmp_path: Path) -> None:
    ready = tmp_path / "ready.json"
    proc = subprocess.Popen(
        [*cmd, "serve", "--port", "0", "--ready-file", str(ready), "--data-dir", str(tmp_path / "data")],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        port = wait_for_ready_file(ready, proc, 60)["port"]
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            # ApiVersions v0, correlation id 7, client id "t": the broker answers with the same id.
            sock.sendall(bytes.fromhex("0000000b00120000000000070001") + b"t")
            size = int.from_bytes(sock.recv(4), "big")
            assert size > 4
            assert sock.recv(4) == (7).to_bytes(4, "big")
    finally:
        proc.terminate()
        out = proc.communicate(timeout=30)[0].decode(errors="replace")
    assert proc.returncode == 0, out
    assert "Traceback" not in out, out


@pytest.mark.slow
def test_kafkito_command_serves_from_the_venv(installed: Path, tmp_path: Path) -> None:
    _serves([str(installed / "bin" / "kafkito")], tmp_path)


@pytest.mark.slow
def test_python_dash_m_kafkito_serves_from_the_venv(installed: Path, tmp_path: Path) -> None:
    _serves([str(installed / "bin" / "python"), "-m", "kafkito"], tmp_path)


def test_the_code_imports_only_namespaced_names() -> None:
    """No module of ours imports `broker`, `protocol` or `purgatory` at the top level (they would be a
    second copy of the same code, and are not installed)."""
    offenders = []
    roots = [REPO / d for d in ("broker", "protocol", "purgatory", "tests", "bench", "kafkito_spark")]
    files = [*(REPO / "kafkito").glob("*.py"), *(p for root in roots for p in root.rglob("*.py"))]
    for path in files:
        if "node_modules" not in path.parts:
            offenders += _generic_imports(path)
    assert not offenders, offenders


def _generic_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found += [f"{path}:{node.lineno} {n}" for n in names if n.split(".")[0] in _GENERIC_NAMES]
    return found


def test_compose_publishes_the_port_on_loopback_only() -> None:
    """The broker has no authentication: `docker compose up` must not expose it to the network."""
    text = (REPO / "docker-compose.yml").read_text()
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "ports:")
    published = []
    for line in lines[start + 1 :]:
        if not line.strip().startswith("- "):
            break
        published.append(line.strip()[2:].strip("\"'"))
    assert published, "no published port"
    assert all(p.startswith("127.0.0.1:") for p in published), published
