# agent/main.py, a part of the sitepatch agent (start.py says how the parts are joined):
# the table of operations and the loop that answers one request a line.

OPS = {
    "hello": op_hello, "compile": op_compile, "read": op_read, "read_lines": op_read_lines, "search": op_search, "list": op_list, "stat": op_stat,
    "realpath": op_realpath, "write": op_write, "remove": op_remove,
    "lock": op_lock, "unlock": op_unlock, "list_many": op_list_many, "snapshot": op_snapshot,
    "importable": op_importable, "run": op_run, "run_many": op_run_many,
}


BEAT_SECONDS = 10  # hello sets it from what sitepatch waits for


class Beats:
    # While an operation runs, a line "~" every BEAT_SECONDS tells sitepatch it is at work
    # (host/agent_client.cpp bounds silence, not length: a proof run or a JIT build may
    # take minutes). SIGALRM from an interval timer armed only during an operation: no
    # thread at every start. A beat never splits a reply: none is written while one is.
    def __init__(self, out):
        self.out, self.writing = out, False
        try:
            import _signal
            _signal.signal(_signal.SIGALRM, self.beat)
            self.timer = _signal
        except (ImportError, AttributeError, ValueError, OSError):
            self.timer = None

    def beat(self, signum, frame):
        if not self.writing:
            self.out.write(b"~\n")
            self.out.flush()

    def arm(self, on):
        if self.timer is not None:
            self.timer.setitimer(self.timer.ITIMER_REAL, BEAT_SECONDS if on else 0, BEAT_SECONDS if on else 0)

    def reply(self, data):
        self.writing = True
        try:
            self.out.write(data)
            self.out.flush()
        finally:
            self.writing = False


def main():
    # Replies go to a private copy of stdout; anything else printed (a .pth file, a
    # warning, a C library) lands on stderr instead of corrupting the protocol.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    beats = Beats(out)
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        beats.arm(True)
        try:
            req = loads(line.decode("utf-8"))
            fn = OPS.get(req.get("op")) if isinstance(req, dict) else None
            if fn is None:
                raise Refused("unknown op %r" % (req.get("op") if isinstance(req, dict) else req,))
            reply = fn(req)
            reply["ok"] = True
        except Refused as e:
            reply = {"ok": False, "error": str(e)}
        except Partial as e:
            reply = {"ok": False, "error": str(e), "partial": e.changed}
        except Exception as e:
            reply = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
        beats.arm(False)
        beats.reply(dumps(reply).encode("ascii") + b"\n")
    # EOF: the caller is done, or gone; either way no request of ours is half done.
    for fd, writer in list(LOCKS.values()):
        release(fd, writer)
    LOCKS.clear()
    return 0


def run():
    start_site()
    code = main()
    # Every reply is flushed and the OS releases the locks: skip the interpreter's
    # tear-down, which every command would otherwise wait for.
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":  # `python -c <source>`; src/host/agent_boot.cpp imports it and calls run()
    run()
