"""What the kernel alone charges a sender per GiB sent over loopback TCP, by way of sending.

Run: .venv/bin/python bench/send_floor.py [--mb 100] [--repeat 5] [--chunks 65536,1048576,10485760]

No broker: one process sends a file of `--mb` MiB (in the page cache) `--repeat` times to a reader
process on 127.0.0.1, in chunks of each size, and reports the sender's CPU seconds (user + system)
per GiB for each way a broker could send record bytes:
- `sendfile`: os.sendfile from the file (what kafkito's Fetch does for 16 KiB and more; Kafka too);
- `pread+send`: os.pread into a new bytes object, then send (the read path);
- `memory`: send from bytes already in memory (what a cache of the records would cost at best).
On loopback the sender's system time includes the receiving side's TCP processing (delivered in the
sender's softirq), but not the reader's copy into its buffer. This is the floor under the broker's
own "CPU s/GiB consumed" in bench/datapath.py: no Python code of a broker can go below it.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import socket
import statistics
import tempfile
from collections.abc import Callable

Sender = Callable[[socket.socket, int, int, int], None]  # (socket, file fd, offset, size)


def _reader(port: int) -> None:
    sock = socket.create_connection(("127.0.0.1", port))
    buf = bytearray(1 << 20)
    while sock.recv_into(buf):
        pass


def _sendfile(sock: socket.socket, fd: int, offset: int, size: int) -> None:
    sent = 0
    while sent < size:
        sent += os.sendfile(sock.fileno(), fd, offset + sent, size - sent)


def _pread_send(sock: socket.socket, fd: int, offset: int, size: int) -> None:
    sock.sendall(os.pread(fd, size, offset))


def _memory(data: memoryview) -> Sender:
    def send(sock: socket.socket, fd: int, offset: int, size: int) -> None:
        sock.sendall(data[offset : offset + size])

    return send


def measure(path: str, size: int, repeat: int, chunk: int, send: Sender) -> float:
    """The sender's CPU seconds per GiB for one way of sending."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    reader = multiprocessing.Process(target=_reader, args=(server.getsockname()[1],))
    reader.start()
    conn, _ = server.accept()
    fd = os.open(path, os.O_RDONLY)
    before = resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(repeat):
        for offset in range(0, size, chunk):
            send(conn, fd, offset, min(chunk, size - offset))
    after = resource.getrusage(resource.RUSAGE_SELF)
    os.close(fd)
    conn.close()
    server.close()
    reader.join()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu / (size * repeat / (1 << 30))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5, help="times the file is sent per measurement")
    parser.add_argument("--runs", type=int, default=3, help="measurements per cell (median reported)")
    parser.add_argument("--chunks", default="65536,1048576,10485760", help="bytes per send")
    args = parser.parse_args()
    size = args.mb << 20
    with tempfile.NamedTemporaryFile(dir=os.environ.get("TMPDIR", "/tmp")) as f:
        data = os.urandom(size)
        f.write(data)
        f.flush()
        os.pread(f.fileno(), size, 0)  # into the page cache
        ways: dict[str, Sender] = {
            "sendfile": _sendfile,
            "pread+send": _pread_send,
            "memory": _memory(memoryview(data)),
        }
        chunks = [int(c) for c in args.chunks.split(",")]
        print(f"sender CPU s/GiB over loopback, {args.mb} MiB x {args.repeat}, median of {args.runs}")
        print("| chunk | " + " | ".join(ways) + " |")
        print("|---|" + "---|" * len(ways))
        for chunk in chunks:
            cells = []
            for send in ways.values():
                runs = [measure(f.name, size, args.repeat, chunk, send) for _ in range(args.runs)]
                cells.append(f"{statistics.median(runs):.2f}")
            print(f"| {chunk >> 10} KiB | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
