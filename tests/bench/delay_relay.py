#!/usr/bin/env python3
# An ssh ProxyCommand that delays every byte by MS milliseconds each way, so a round trip
# over the benchmark's namespaced sshd costs what one to a distant server does (this
# kernel has no netem). Order and bytes are kept; only time is added.
#
# usage: ProxyCommand=python3 delay_relay.py HOST PORT MS
import os
import socket
import sys
import threading
import time
from collections import deque


def pump(read, write, close, delay):
    queue, ready = deque(), threading.Condition()

    def reader():
        while True:
            data = read()
            with ready:
                queue.append((time.monotonic() + delay, data))
                ready.notify()
            if not data:
                return

    threading.Thread(target=reader, daemon=True).start()
    while True:
        with ready:
            while not queue:
                ready.wait()
            due, data = queue.popleft()
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        if not data:
            close()
            return
        write(data)


def main():
    host, port, delay = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) / 1000.0
    sock = socket.create_connection((host, port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def to_stdout(data):
        view = memoryview(data)
        while view:
            view = view[os.write(1, view):]

    up = threading.Thread(target=pump, daemon=True, args=(
        lambda: os.read(0, 65536), sock.sendall, lambda: sock.shutdown(socket.SHUT_WR), delay))
    up.start()
    pump(lambda: sock.recv(65536), to_stdout, lambda: None, delay)


if __name__ == "__main__":
    main()
