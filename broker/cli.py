"""The `kafkito` command: `serve`, the everyday tools (`topics`, `groups`, `produce`, `consume`,
`offsets dump`) and `control ...`.

`serve` checks its arguments and the data dir before it creates anything (broker.preflight); the
tools are imported only when one runs (broker.tools), so `serve` pays nothing for them.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafkito.broker.cli_parser import KafkitoParser, VersionAction, finish

if TYPE_CHECKING:
    from kafkito.broker.app import Broker
    from kafkito.broker.config import Config
    from kafkito.broker.control.address import ControlAddress
    from kafkito.broker.ready_file import ReadyFile


def _add_serve(sub: argparse._SubParsersAction[KafkitoParser]) -> None:
    from kafkito.broker.config import default  # imported by main, with the collector paused for serve

    serve = sub.add_parser("serve", help="run the broker", description="run the broker")
    serve.add_argument("--config", metavar="FILE", help="a server.properties file")
    serve.add_argument("--host", help=f"address to bind (default {default('host')})")
    serve.add_argument("--port", type=int, help=f"port to bind (default {default('port')}; 0: a free one)")
    serve.add_argument(
        "--nodes",
        type=int,
        default=1,
        help="run a cluster of N nodes in this process, on --port, --port+1, ... (0: free ports; default 1)",
    )
    serve.add_argument("--data-dir", help=f"logs and offsets (log.dirs, default {default('log.dirs')})")
    serve.add_argument("--advertised-host", help="host clients are told to connect to")
    serve.add_argument("--advertised-port", type=int, help="port clients are told to connect to")
    serve.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="any broker property, repeatable"
    )
    serve.add_argument(
        "--as-version",
        metavar="X.Y",
        help="advertise and accept only the API versions of Kafka X.Y, 0.10.0 to 4.4 (kafkito.as.version)",
    )
    serve.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    serve.add_argument("--log-format", default="auto", choices=["auto", "console", "json"])
    serve.add_argument("--control", metavar="HOST:PORT", help="serve the HTTP control endpoint (loopback)")
    serve.add_argument(
        "--control-allow-remote", action="store_true", help="let --control bind a non-loopback address"
    )
    serve.add_argument("--http", metavar="HOST:PORT", help="serve the web console (docs/console.md)")
    serve.add_argument("--http-allow-remote", action="store_true", help="let --http bind off loopback")
    serve.add_argument("--http-write", action="store_true", help="console may delete topics, reset offsets")
    serve.add_argument("--banner", action="store_true", help="once listening, print how to try it (make run)")
    serve.add_argument(
        "--ready-file",
        metavar="PATH",
        help="once serving, write the bound ports here as JSON (with --port 0: learn the port; docs/cli.md)",
    )


def _parser(command: str | None = None) -> KafkitoParser:
    """The command line's parser; for `serve`, without the tools' and control's verbs, which nothing
    after `serve` can name (argparse's gettext lookups for their ~100 parsers cost every start ~5 ms)."""
    parser = KafkitoParser(prog="kafkito", description="A Kafka-wire-compatible broker in Python.")
    parser.add_argument("--version", action=VersionAction)
    sub = parser.add_subparsers(dest="command", required=True)
    _add_serve(sub)
    if command != "serve":  # nor their modules (broker.tools, broker.control: ~1 ms of a start)
        from kafkito.broker.control.cli import add_control_parser
        from kafkito.broker.tools.args import add_tool_parsers

        add_tool_parsers(sub)
        add_control_parser(sub)
    return finish(parser)  # type: ignore[return-value]


def build_config(args: argparse.Namespace) -> Config:
    from kafkito.broker.config import Config, ConfigError

    config = Config()
    if args.config:
        try:
            config.load_properties(args.config)
        except OSError as exc:
            raise ConfigError(
                f"cannot read the properties file {args.config} ({exc.strerror}): pass --config FILE"
            ) from None
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
        "kafkito.as.version": args.as_version,
    }
    for name, value in flags.items():
        if value is not None:
            config.set(name, str(value))
    if config.kafkito_as_version is not None:
        from kafkito.protocol.kafka_releases import release_name

        try:
            release_name(config.kafkito_as_version)
        except ValueError as exc:
            raise ConfigError(f"--as-version / kafkito.as.version: {exc}") from None
    return config


def _checked_config(args: argparse.Namespace) -> tuple[Config, ControlAddress | None]:
    """The config, checked before anything is created on disk; warns about unknown property names."""
    import structlog

    from kafkito.broker.preflight import check, check_ready_file, topic_default_properties, unknown_properties

    if args.nodes < 1:
        raise ValueError(f"--nodes must be at least 1, not {args.nodes}")
    config = build_config(args)
    control = _control_address(args)
    if args.http is None and (args.http_allow_remote or args.http_write):
        raise ValueError("--http-allow-remote and --http-write need --http HOST:PORT")
    log = structlog.get_logger("kafkito.config")
    unknown = unknown_properties(config, topic_default_properties())
    for name, close in unknown:
        if close is not None:
            log.warning("config.unknown_property", property=name, hint=f"did you mean `{close}`?")
    ignored = [name for name, close in unknown if close is None]
    if ignored:
        log.warning("config.not_used", properties=ignored, hint="kafkito does not use them; ignored")
    check(config, args.nodes)
    if args.ready_file is not None:
        check_ready_file(Path(args.ready_file))
    return config, control


def _run_serve(args: argparse.Namespace) -> int:
    # Start-up imports create ~30k objects that live as long as the process; collecting while they
    # are created costs ~10 ms, so the collector waits, then freeze() keeps them out of later collections.
    gc.disable()
    try:
        from kafkito.broker.config import ConfigError
        from kafkito.broker.logging_setup import configure_logging
        from kafkito.broker.preflight import PreflightError

        configure_logging(args.log_level, args.log_format)
        try:
            config, control = _checked_config(args)
        except (ConfigError, PreflightError, OSError, ValueError) as exc:
            print(f"kafkito serve: {exc}", file=sys.stderr)
            return 2
        import asyncio

        from kafkito.broker.app import Broker
        from kafkito.broker.log.dir_lock import DataDirInUse
        from kafkito.broker.server import KafkaConnection  # noqa: F401  (Broker.start's import, done here with gc paused)

        runner: Runner
        try:
            import uvloop
        except ImportError:  # pragma: no cover - uvloop is optional off Linux/macOS
            runner = asyncio.run
        else:
            runner = uvloop.run
    finally:
        gc.freeze()
        gc.enable()
    runner = _tuning_malloc(runner)
    broker = Broker(config, args.nodes)
    ready = _ready_file(args)
    if ready is not None:
        runner = _writing(ready, broker, runner)
    try:
        # 0 after a clean stop, 1 when a component failed to close (logged); a second signal exits at once.
        if args.http is not None:
            return _serve_http(args, broker, control, runner, ready)
        if control is None:
            return runner(_serve_with_banner(broker) if args.banner else broker.serve())
        from kafkito.broker.control.server import ControlBindError, serve_with_control

        try:
            return runner(serve_with_control(broker, control))
        except ControlBindError as exc:  # the broker did not start
            print(f"kafkito: --control {control.host}:{control.port}: {exc.strerror}", file=sys.stderr)
            return 2
    except DataDirInUse as exc:  # another broker holds the data dir: nothing was started
        print(f"kafkito serve: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the listener could not bind after all (taken since the check)
        print(
            f"kafkito serve: cannot listen on {config.host}:{config.port} ({exc.strerror})", file=sys.stderr
        )
        return 2


Runner = Callable[[Coroutine[Any, Any, int]], int]  # asyncio.run or uvloop.run, for a broker's main


def _tuning_malloc(runner: Runner) -> Runner:
    """`runner`, with glibc's malloc tuned on its loop once the broker is up (broker.malloc_tuning):
    megabyte buffers then reuse freed memory instead of faulting in fresh pages. Its ctypes costs ~1.5
    ms, and the settings matter once data flows, not to the first requests."""

    async def tuned(main: Coroutine[Any, Any, int]) -> int:
        import asyncio

        from kafkito.broker.malloc_tuning import TUNE_AFTER_S, keep_freed_memory

        asyncio.get_running_loop().call_later(TUNE_AFTER_S, keep_freed_memory)
        return await main

    return lambda main: runner(tuned(main))


def _ready_file(args: argparse.Namespace) -> ReadyFile | None:
    if args.ready_file is None:
        return None
    from kafkito.broker.ready_file import ReadyFile

    return ReadyFile(args.ready_file, console=args.http is not None)


def _writing(ready: ReadyFile, broker: Broker, runner: Runner) -> Runner:
    """`runner`, writing the ready file once the broker serves (`--ready-file`)."""
    return lambda main: runner(ready.serve(broker, main))


def _serve_http(
    args: argparse.Namespace,
    broker: Broker,
    control: ControlAddress | None,
    runner: Any,
    ready: ReadyFile | None = None,
) -> int:
    """Serve with the web console (and the control endpoint, sharing its server on the same port)."""
    from kafkito.broker.console.options import parse_console_options
    from kafkito.broker.console.sites import HttpBindError, serve_http

    try:
        console = parse_console_options(args.http, allow_remote=args.http_allow_remote, write=args.http_write)
    except ValueError as exc:
        print(f"kafkito serve: {exc}", file=sys.stderr)
        return 2
    hooks = [hook for hook in (_banner if args.banner else None, ready and ready.console_started) if hook]

    def started(broker: Broker, url: str | None) -> None:
        for hook in hooks:
            hook(broker, url)

    try:
        status: int = runner(serve_http(broker, control, console, started if hooks else None))
    except HttpBindError as exc:  # the broker did not start
        print(f"kafkito: {exc.flag} {exc.address.host}:{exc.address.port}: {exc.strerror}", file=sys.stderr)
        return 2
    return status


async def _serve_with_banner(broker: Broker) -> int:
    """`Broker.serve`, printing the banner once the listener is bound."""
    import asyncio

    serving = asyncio.ensure_future(broker.serve())
    while not serving.done():
        try:
            broker.bound_port  # noqa: B018  (raises until the listener is bound)
        except (RuntimeError, AttributeError):
            await asyncio.sleep(0.01)
            continue
        _banner(broker)
        break
    return await serving


def _banner(broker: Broker, console_url: str | None = None) -> None:
    """Where the broker listens and how to try it (`make run`), and the web console's address."""
    from kafkito.broker.tools.connect import DEFAULT_BOOTSTRAP

    bootstrap = "{}:{}".format(*broker.advertised)
    to = "" if bootstrap == DEFAULT_BOOTSTRAP else f" --bootstrap-server {bootstrap}"
    delay = broker.config.group_initial_rebalance_delay_ms
    produce = (
        "printf 'alice:signed up\\nbob:logged in\\n' | .venv/bin/kafkito produce events --key-separator :"
    )
    print(
        f"\nkafkito is ready: bootstrap.servers={bootstrap}, data in {broker.config.log_dirs.split(',')[0]}\n"
        f"group.initial.rebalance.delay.ms={delay} (Kafka waits 3000): a new group forms at once\n"
        "Try it in another terminal:\n"
        f"  {produce}{to}\n"
        f"  .venv/bin/kafkito consume events --from-beginning --print-key --group readers{to}\n"
        f"  .venv/bin/kafkito groups describe readers{to}\n"
        + (f"Web console: {console_url}\n" if console_url else "")
        + _console_warning(broker, console_url)
        + "Ctrl-C stops the broker.\n",
        file=sys.stderr,
        flush=True,
    )


def _console_warning(broker: Broker, console_url: str | None) -> str:
    """A banner line when the console serves past the broker's authentication or ACLs."""
    if console_url is None:
        return ""
    from kafkito.broker.console.exposure import warning

    text = warning(broker.config)
    return f"WARNING: {text}\n" if text else ""


def _control_address(args: argparse.Namespace) -> ControlAddress | None:
    if args.control is None:
        if args.control_allow_remote:
            raise ValueError("--control-allow-remote needs --control HOST:PORT")
        return None
    from kafkito.broker.control.address import parse_control_address

    return parse_control_address(args.control, allow_remote=args.control_allow_remote)


def _run_tool(args: argparse.Namespace) -> int:
    """Run a tool verb; its failures are one line on stderr, never a traceback."""
    import importlib
    import logging

    from kafkito.broker.tools.output import ToolError

    logging.getLogger("kafka").addHandler(logging.NullHandler())  # the client's own retries are not news
    logging.getLogger("kafka").propagate = False
    module, function = args.tool.split(":")
    where = f"kafkito {args.command}" + (
        f" {getattr(args, f'{args.command}_verb')}" if hasattr(args, f"{args.command}_verb") else ""
    )
    try:
        status: int = getattr(importlib.import_module(module), function)(args)
    except ToolError as exc:
        print(f"{where}: {exc}", file=sys.stderr)
        return exc.status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader (head, less) went away
        sys.stderr.close()
        return 0
    except Exception as exc:  # a client's own check, a lost connection: unforeseen, still one line
        from kafkito.broker.tools.connect import describe_error

        print(f"{where}: {describe_error(exc)}", file=sys.stderr)
        return 1
    return status


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    serving = words[:1] == ["serve"] and gc.isenabled()
    if serving:  # until _run_serve freezes what start-up made: the parser's imports are its first
        gc.disable()
    try:
        parser = _parser(words[0] if words else None)
        KafkitoParser.command_line = words
        args, extras = parser.parse_known_args(words)
        if extras:
            args.cli_parser.error(f"unrecognized arguments: {' '.join(extras)}")
    except BaseException:  # a command line that does not parse (SystemExit): nothing to serve
        if serving:
            gc.enable()
        raise
    if args.command == "serve":
        return _run_serve(args)
    if args.command == "control":
        from kafkito.broker.control.cli import run_control

        return run_control(args)
    return _run_tool(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
