#!/usr/bin/env python3
"""Shares of a `perf script` profile by component: each sample goes to the most specific component on
its stack (the first marker found walking from the leaf). Usage:

    perf record -F 999 -g -o /tmp/p.data .build-release/release/pushgate-bench matrix demo.webpush 30000 32
    perf script -i /tmp/p.data | python3 benchmarks/perf-components.py
"""
import collections
import re
import sys

MARKERS = [
    ("loadgen", r"pushgate_bench"),
    ("emulator", r"PushgateSandbox"),
    ("ahc", r"AsyncHTTPClient"),
    ("webpush", r"PushgateWebPush"),
    ("apns-client", r"PushgateAPNs"),
    ("fcm-client", r"PushgateFCM"),
    ("matrix", r"PushgateMatrix"),
    ("nextcloud", r"PushgateNextcloud"),
    ("delivery", r"PushgateDelivery"),
    ("server-mw", r"PushgateServer|PushgateHTTP"),
    ("hummingbird", r"Hummingbird"),
    ("core", r"PushgateCore"),
    ("store", r"sqlite|SQLiteNIO|PostgresNIO"),
    ("crypto", r"CCryptoBoringSSL|6Crypto|nistz256|ecp_|_mont|sha256|aesni|gcm"),
    ("tls", r"NIOSSL|CNIOBoringSSL"),
    ("http2", r"NIOHTTP2|NIOHPACK"),
    ("http1", r"NIOHTTP1|llhttp"),
    ("concurrency", r"swift_task|swift::AsyncTask|swift_job|_Concurrency|runJob"),
    ("nio", r"NIOCore|NIOPosix"),
    ("kernel", r"\[kernel"),
]
COMPILED = [(name, re.compile(pattern)) for name, pattern in MARKERS]


def component(frames):
    for frame in frames:
        for name, pattern in COMPILED:
            if pattern.search(frame):
                return name
    return "other"


def main():
    counts = collections.Counter()
    frames = []
    for line in sys.stdin:
        if line.strip() and line[0] in " \t":
            frames.append(line.strip())
            continue
        if frames:
            counts[component(frames)] += 1
            frames = []
    if frames:
        counts[component(frames)] += 1
    total = sum(counts.values()) or 1
    for name, count in counts.most_common():
        print(f"{name:12s} {100 * count / total:5.1f}%")


if __name__ == "__main__":
    main()
