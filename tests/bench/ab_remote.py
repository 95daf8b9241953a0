#!/usr/bin/env python3
"""Two or more sitepatch builds side by side against one sshd: apply and rollback of the
bundled recipe, alternating build by build each round, beside `ssh host true`.

usage: sitepatch_bench_remote 1 --hold > hold.env &      # the sshd and venv, until Enter
       python3 tests/bench/ab_remote.py hold.env ROUNDS BUILD [BUILD...]
DELAY=MS in the environment sends every ssh through delay_relay.py (MS ms each way).
Prints medians and their ratio to `ssh host true`; asserts nothing."""
import os
import shlex
import statistics
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    env = {}
    with open(sys.argv[1]) as f:
        for line in f:
            key, _, value = line.rstrip("\n").partition("=")
            env[key] = shlex.split(value)[0] if value else ""
    ssh = shlex.split(env["SSH"]) + ["-o", "BatchMode=yes"]
    if os.environ.get("DELAY"):
        relay = os.path.join(os.path.dirname(os.path.abspath(__file__)), "delay_relay.py")
        ssh += ["-o", "ProxyCommand=python3 %s %%h %%p %s" % (relay, os.environ["DELAY"])]
    target = env["TARGET"]
    rows = [("ssh host true", ssh + [target, "true"])]
    for build in sys.argv[3:]:
        base = [build, "--host", target, "--ssh-command", shlex.join(ssh), "--venv", "/srv/venv"]
        rows.append((build + " apply", base + ["apply", "-q", env["TWO"]]))
        rows.append((build + " rollback", base + ["rollback", "-q", "--all"]))
    seconds = {name: [] for name, _ in rows}
    for _ in range(int(sys.argv[2])):
        for name, argv in rows:
            t0 = time.perf_counter()
            r = subprocess.run(argv, capture_output=True)
            seconds[name].append(time.perf_counter() - t0)
            if r.returncode:
                sys.exit("%s failed (%d):\n%s" % (name, r.returncode, r.stderr.decode(errors="replace")))
    bare = statistics.median(seconds["ssh host true"])
    for name, s in seconds.items():
        m = statistics.median(s)
        print("%-48s %.3f s  %.2fx ssh true" % (name, m, m / bare))


if __name__ == "__main__":
    main()
