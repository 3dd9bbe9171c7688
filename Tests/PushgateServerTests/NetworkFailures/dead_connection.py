#!/usr/bin/env python3
"""Kills a provider connection the way a NAT or a load balancer does, without a FIN or a RST, and
measures how the gateway recovers.

Run inside a network namespace of its own (``unshare -n``, as root): it brings up that namespace's
loopback, starts ``pushgate sandbox`` (the provider emulators) and ``pushgate serve`` against them,
delivers one notification through gorush's API to open the provider connection, then drops every
packet of that connection with nftables and sends more. It prints one JSON object: when each
notification arrived at the emulator, how often, and which connections the gateway used.

    unshare -n python3 dead_connection.py PUSHGATE_BINARY WORK_DIR apns|fcm
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from datetime import datetime

BINARY, WORK, PROVIDER = sys.argv[1], sys.argv[2], sys.argv[3]
# The APNs app's ping_timeout (seconds); the tests use 2, benchmarks/dead-connection.sh the default 5.
PING_TIMEOUT = float(os.environ.get("PING_TIMEOUT", "2"))
AFTER_DROP = 10
# nft lives in /usr/sbin, which a PATH may lack (sudo's secure_path keeps it, a login shell's may not).
NFT = shutil.which("nft") or "/usr/sbin/nft"
DEADLINE = 120.0


def run(*args, stdin=None):
    subprocess.run(args, check=True, input=stdin, capture_output=True, text=True)


def http(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, response.read().decode()


def established(port):
    """The gateway's local ports of its established connections to the emulator's `port`."""
    out = subprocess.run(["ss", "-tnH", "state", "established", f"( dport = :{port} )"], capture_output=True, text=True, check=True).stdout
    return sorted({int(line.split()[-2].rsplit(":", 1)[1]) for line in out.splitlines() if line.strip()})


def wait_for(condition, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise SystemExit(f"timed out waiting for {what}")


def main():
    run("ip", "link", "set", "lo", "up")
    os.makedirs(WORK, exist_ok=True)
    processes = []
    try:
        sandbox = subprocess.Popen([BINARY, "sandbox", "--directory", f"{WORK}/sandbox"], stdout=subprocess.PIPE,
                                   stderr=open(f"{WORK}/sandbox.log", "w"), text=True)
        processes.append(sandbox)
        banner = ""
        while "Configuration:" not in banner:
            line = sandbox.stdout.readline()
            if not line:
                raise SystemExit("the sandbox ended before printing its addresses")
            banner += line
        apns_port = int(re.search(r"APNs emulator: +https://127\.0\.0\.1:(\d+)", banner).group(1))
        fcm_port = int(re.search(r"FCM emulator: +http://127\.0\.0\.1:(\d+)", banner).group(1))
        deliveries_url = re.search(r"Deliveries: +(\S+)", banner).group(1)
        apps = open(f"{WORK}/sandbox/pushgate-sandbox.yaml").read()
        tokens = re.search(r"# Demo tokens: APNs (\w+), FCM ([^,]+),", apps)
        apps = apps[:apps.index("# A Status")] if "# A Status" in apps else apps
        # The APNs app gives up a silent connection after a PING unanswered for PING_TIMEOUT seconds.
        apps = apps.replace("    type: apns\n", f"    type: apns\n    ping_timeout: {PING_TIMEOUT}\n")
        with open(f"{WORK}/pushgate.yaml", "w") as config:
            config.write(f"""http: {{bind_addresses: ['127.0.0.1'], port: 0, io_threads: 1}}
log: {{format: json}}
database: {{url: 'sqlite:{WORK}/store.sqlite'}}
gorush:
  ios_app: demo.apns
  android_app: demo.fcm
  allow_unauthenticated: true
{apps}
""")
        log = open(f"{WORK}/gateway.log", "w")
        gateway = subprocess.Popen([BINARY, "serve", "--config", f"{WORK}/pushgate.yaml"], stdout=log, stderr=subprocess.STDOUT)
        processes.append(gateway)

        def listening():
            for line in open(f"{WORK}/gateway.log"):
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if event.get("msg") == "listening":
                    return int(event["port"])
            if gateway.poll() is not None:
                raise SystemExit("the gateway ended before listening:\n" + open(f"{WORK}/gateway.log").read()[-4000:])
            return None
        port = wait_for(listening, 60, "the gateway to listen")

        if PROVIDER == "apns":
            platform, token, emulator_port = 1, tokens.group(1), apns_port
        else:
            platform, token, emulator_port = 2, tokens.group(2), fcm_port

        def push(text):
            notification = {"tokens": [token], "platform": platform, "message": text}
            if PROVIDER == "apns":
                notification["topic"] = "im.pushgate.sandbox"  # for Android, a topic is a second recipient
            status, body = http("POST", f"http://127.0.0.1:{port}/api/push", {"notifications": [notification]})
            assert status == 200, body

        def arrivals():
            """When the emulator received each text (once per delivery), by the emulator's own clock: the
            figures measure the gateway, not how often and how late this script looked."""
            _, body = http("GET", deliveries_url)
            seen = {}
            for delivery in json.loads(body):
                if delivery["provider"] == PROVIDER and delivery["status"] == 200:
                    received = datetime.fromisoformat(delivery["receivedAt"].replace("Z", "+00:00")).timestamp()
                    # Once per delivery, however often the text stands in its body.
                    for text in set(re.findall(r"dead-connection-\d+", delivery["body"])):
                        seen.setdefault(text, []).append(received)
            return seen

        push("dead-connection-0")
        wait_for(lambda: "dead-connection-0" in arrivals(), 60, "the first delivery")
        before = wait_for(lambda: established(emulator_port), 10, "the provider connection")

        rules = "table inet pushgate_dead_connection {\n chain input {\n  type filter hook input priority 0; policy accept;\n"
        for local in before:
            # The whole 4-tuple: the kernel may give the same local port to a connection elsewhere.
            rules += f"  tcp sport {local} tcp dport {emulator_port} drop\n  tcp sport {emulator_port} tcp dport {local} drop\n"
        rules += " }\n}\n"
        run(NFT, "-f", "-", stdin=rules)
        dropped_at = time.time()  # the emulator's clock is the machine's

        sent = {}
        for index in range(1, AFTER_DROP + 1):
            text = f"dead-connection-{index}"
            sent[text] = time.time()
            push(text)
            time.sleep(0.2)
        expected = set(sent)
        seen = wait_for(lambda: (lambda s: s if expected <= set(s) else None)(arrivals()), DEADLINE, "every notification after the drop")
        time.sleep(1.0)  # a duplicate would show up now
        seen = arrivals()
        after = established(emulator_port)
        metrics = http("GET", f"http://127.0.0.1:{port}/metrics")[1]
        missed = re.search(r'^pushgate_apns_pings_missed_total\{app="demo\.apns"\} (\d+)', metrics, re.M)
        app = "demo.apns" if PROVIDER == "apns" else "demo.fcm"
        opened = re.search(r'^pushgate_provider_connections_opened_total\{app="' + re.escape(app) + r'"\} (\d+)', metrics, re.M)
        print(json.dumps({
            "apns_pings_missed": int(missed.group(1)) if missed else None,
            "connections_opened": int(opened.group(1)) if opened else None,
            "dropped_connections": before,
            "connections_after": after,
            "recovered_after_seconds": max(min(seen[t]) for t in expected) - dropped_at,
            "arrivals": {t: len(seen.get(t, [])) for t in ["dead-connection-0"] + sorted(expected)},
            "latest_wait_seconds": max(min(seen[t]) - sent[t] for t in expected),
        }))
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


main()
