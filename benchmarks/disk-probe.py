#!/usr/bin/env python3
"""The disk's sync latency while a benchmark runs, beside the figures that wait on it (gorush's async
answers and the Status server's answers wait for the store's fsync). Every 100 ms it writes 4 KiB at the
start of FILE and fsyncs it (about ten small syncs a second: next to the gateway's hundreds, no load of
note); on SIGTERM it prints how long those syncs took: "p50/p99/max ms, N over 20 ms".

    python3 benchmarks/disk-probe.py FILE > RESULT &   ...   kill PID; wait PID; cat RESULT
"""
import os
import signal
import sys
import time

path = sys.argv[1]
times = []
stopping = False


def stop(*_):
    global stopping
    stopping = True


signal.signal(signal.SIGTERM, stop)
descriptor = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
block = b"\0" * 4096
try:
    while not stopping:
        os.pwrite(descriptor, block, 0)
        began = time.perf_counter()
        os.fsync(descriptor)
        times.append(1000 * (time.perf_counter() - began))
        time.sleep(0.1)
finally:
    os.close(descriptor)
    os.unlink(path)
    times.sort()
    if times:
        at = lambda share: times[min(len(times) - 1, int(share * len(times)))]
        slow = sum(1 for value in times if value > 20)
        print(f"{at(0.5):.2f}/{at(0.99):.2f}/{times[-1]:.2f} ms, {slow} over 20 ms")
    else:
        print("-")
