#!/usr/bin/env python3
"""Two commands timed side by side: each round runs both once, in turn (the first round
warms the caches and is not counted); medians, and the median of the per-round ratios.

usage: side_by_side.py ROUNDS NAME_A NAME_B -- ARGV_A... --- ARGV_B...
"""
import statistics
import subprocess
import sys
import time


def main():
    rounds, a, b = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    rest = sys.argv[sys.argv.index("--") + 1:]
    cut = rest.index("---")
    cmds = {a: rest[:cut], b: rest[cut + 1:]}
    times = {k: [] for k in cmds}
    for _ in range(rounds + 1):
        for k, argv in cmds.items():
            t0 = time.perf_counter()
            r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            times[k].append(time.perf_counter() - t0)
            if r.returncode != 0:
                sys.exit("%s failed: %s" % (k, r.stderr.decode()))
    for k in times:
        times[k] = times[k][1:]
    width = max(len(k) for k in cmds) + 2
    for k, v in times.items():
        print("%-*s median %7.1f ms  (min %.1f, max %.1f)" % (width, k, 1000 * statistics.median(v),
                                                            1000 * min(v), 1000 * max(v)))
    ratios = [x / y for x, y in zip(times[a], times[b])]
    print("%s / %s: median ratio %.2f over %d rounds" % (a, b, statistics.median(ratios), rounds))


if __name__ == "__main__":
    main()
