"""The `kafkito` command: `kafkito serve [--data-dir DIR --set k=v ...]`, `offsets dump`, `control ...`."""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kafkito.broker.config import Config, ConfigError, default
from kafkito.broker.control.cli import add_control_parser, run_control

if TYPE_CHECKING:
    from kafkito.broker.control.address import ControlAddress


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kafkito", description="A Kafka-wire-compatible broker in Python.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the broker")
    serve.add_argument("--config", metavar="FILE", help="a server.properties file")
    serve.add_argument("--host", help=f"address to bind (default {default('host')})")
    serve.add_argument("--port", type=int, help=f"port to bind (default {default('port')}; 0: a free one)")
    serve.add_argument("--data-dir", help=f"logs and offsets (log.dirs, default {default('log.dirs')})")
    serve.add_argument("--advertised-host", help="host clients are told to connect to")
    serve.add_argument("--advertised-port", type=int, help="port clients are told to connect to")
    serve.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="any broker property, repeatable"
    )
    serve.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    serve.add_argument("--log-format", default="auto", choices=["auto", "console", "json"])
    serve.add_argument("--control", metavar="HOST:PORT", help="serve the HTTP control endpoint (loopback)")
    serve.add_argument(
        "--control-allow-remote", action="store_true", help="let --control bind a non-loopback address"
    )
    offsets = sub.add_parser("offsets", help="look inside __consumer_offsets")
    offsets_sub = offsets.add_subparsers(dest="offsets_command", required=True)
    dump = offsets_sub.add_parser("dump", help="decode every record, one JSON line each")
    dump.add_argument("--group", help="only this group's records (and only its partition is read)")
    dump.add_argument("--data-dir", default=default("log.dirs"), help="log.dirs (default %(default)s)")
    add_control_parser(sub)
    return parser


def build_config(args: argparse.Namespace) -> Config:
    config = Config()
    if args.config:
        config.load_properties(args.config)
    for item in args.set:
        name, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--set expects NAME=VALUE, got {item!r}")
        config.set(name, value)
    flags = {
        "host": args.host,
        "port": args.port,
        "log.dirs": args.data_dir,
        "advertised.host": args.advertised_host,
        "advertised.port": args.advertised_port,
    }
    for name, value in flags.items():
        if value is not None:
            config.set(name, str(value))
    return config


def _run_serve(args: argparse.Namespace) -> int:
    # Start-up imports create ~30k objects that live as long as the process; collecting while they
    # are created costs ~10 ms, so the collector waits, then freeze() keeps them out of later collections.
    gc.disable()
    try:
        from kafkito.broker.logging_setup import configure_logging

        configure_logging(args.log_level, args.log_format)
        try:
            config = build_config(args)
            control = _control_address(args)
        except (ConfigError, OSError, ValueError) as exc:
            print(f"kafkito: {exc}", file=sys.stderr)
            return 2
        import asyncio

        from kafkito.broker.app import Broker
        from kafkito.broker.server import KafkaConnection  # noqa: F401  (Broker.start's import, done here with gc paused)

        try:
            import uvloop
        except ImportError:  # pragma: no cover - uvloop is optional off Linux/macOS
            runner = asyncio.run
        else:
            runner = uvloop.run
    finally:
        gc.freeze()
        gc.enable()
    # 0 after a clean stop, 1 when a component failed to close (logged); a second signal exits at once.
    if control is None:
        return runner(Broker(config).serve())
    from kafkito.broker.control.server import ControlBindError, serve_with_control

    try:
        return runner(serve_with_control(Broker(config), control))
    except ControlBindError as exc:  # the broker did not start
        print(f"kafkito: --control {control.host}:{control.port}: {exc.strerror}", file=sys.stderr)
        return 2


def _control_address(args: argparse.Namespace) -> ControlAddress | None:
    if args.control is None:
        if args.control_allow_remote:
            raise ValueError("--control-allow-remote needs --control HOST:PORT")
        return None
    from kafkito.broker.control.address import parse_control_address

    return parse_control_address(args.control, allow_remote=args.control_allow_remote)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        return _run_serve(args)
    if args.command == "control":
        return run_control(args)
    if args.command == "offsets":
        from pathlib import Path

        from kafkito.broker.offsets.dump import dump

        dump(Path(args.data_dir), sys.stdout, args.group)
        return 0
    return 2  # pragma: no cover - argparse rejects unknown commands


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
