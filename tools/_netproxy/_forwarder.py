"""The in-sandbox half of the proxy: a loopback listener relaying to corral's unix socket.

This file is not imported: its text runs inside the sandbox as `python -I -S -c TEXT SOCKET --
ARGV...`, with the standard library only. It listens on the sandbox's own loopback (a fresh
network namespace, so the port is always free), then runs the command and exits with its code.
"""

import contextlib
import os
import socket
import subprocess
import sys
import threading


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


def _serve_one(client: socket.socket, path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _accept(listener: socket.socket, path: str) -> None:
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_serve_one, args=(client, path), daemon=True).start()


def main() -> None:
    path, port, argv = sys.argv[1], int(sys.argv[2]), sys.argv[4:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    threading.Thread(target=_accept, args=(listener, path), daemon=True).start()
    try:
        child = subprocess.Popen(argv)
    except OSError as exc:
        sys.stderr.write(f"{argv[0]}: {exc.strerror}\n")
        sys.exit(127 if isinstance(exc, FileNotFoundError) else 126)
    code = child.wait()
    sys.stdout.flush()
    os._exit(128 - code if code < 0 else code)


if __name__ == "__main__":
    main()
