#!/usr/bin/env python3
"""Request material and a small client for benchmarks/frontends-wrk.sh and benchmarks/callgrind.sh.

  frontends.py matrix-template webpush ENDPOINT OUT DEVICES  # a Synapse-shaped notify body, @EVENT@ for the event
  frontends.py matrix-template apns - OUT DEVICES            # id and @DEVICE@ for a device, and OUT.devices with
  frontends.py matrix-template unifiedpush ENDPOINT OUT DEVICES  # DEVICES devices (a JSON object a line)
  frontends.py nextcloud-bodies PORT fcm|apns OUT     # registers devices at the gateway, writes batch bodies
  frontends.py send PORT CASE MATERIAL COUNT PREFIX   # COUNT requests over 4 keep-alive connections

Keys and tokens go only into the files named; nothing secret is printed. Needs python3's `cryptography`.
"""
import base64
import hashlib
import http.client
import json
import os
import random
import sys
import threading
import time
import urllib.parse

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed

EVENT = "@EVENT@"  # replaced by a unique event id per request (the gateway drops repeated (event_id, pushkey))
DEVICES = 1000  # Nextcloud devices registered per case
USERS = 8  # Nextcloud users (RSA keys) the devices belong to
BODIES = 64  # distinct batch bodies wrk cycles through
BATCH = 100  # entries per batch


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


DEVICE = "@DEVICE@"  # replaced by one of the devices (a line of TEMPLATE.devices each), in turn


def matrix_device(kind: str, endpoint: str, index: int) -> dict:
    """Device number `index` of a case: each has its own pushkey, as a homeserver's many pushers do."""
    if kind == "webpush":
        # A browser subscription: pushkey is its p256dh key (uncompressed P-256 point), data has endpoint and auth.
        key = ec.generate_private_key(ec.SECP256R1()).public_key()
        p256dh = b64url(key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint))
        return {"app_id": "demo.webpush", "pushkey": p256dh, "pushkey_ts": 1795300273,
                "data": {"endpoint": f"{endpoint}/{index}", "auth": b64url(os.urandom(16))}, "tweaks": {"sound": "default"}}
    if kind == "unifiedpush":
        # A UnifiedPush pusher: the pushkey is the endpoint URL (query string included).
        base, _, query = endpoint.partition("?")
        url = f"{base}-{index}" + (f"?{query}" if query else "")
        return {"app_id": "demo.unifiedpush", "pushkey": url, "pushkey_ts": 1795300273, "data": {}, "tweaks": {"sound": "default"}}
    # APNs: Synapse's pushkey is the base64 of the device token's bytes.
    token = bytes.fromhex(apns_token(index))
    return {"app_id": "demo.apns", "pushkey": base64.b64encode(token).decode(), "pushkey_ts": 1795300273,
            "data": {}, "tweaks": {"sound": "default"}}


def matrix_template(kind: str) -> str:
    """A notify body as Synapse sends it (the full format), one device left as @DEVICE@, the event id as @EVENT@."""
    notification = {
        "notification": {
            "content": {"body": "hello there", "msgtype": "m.text"}, "counts": {"unread": 2}, "devices": [DEVICE],
            "event_id": EVENT, "id": EVENT, "prio": "high", "room_id": "!HWLKroom:example.org", "room_name": "Mission Control",
            "sender": "@alice:example.org", "sender_display_name": "Alice", "type": "m.room.message",
        }
    }
    return json.dumps(notification, separators=(",", ":")).replace(json.dumps(DEVICE), DEVICE)


def apns_token(index: int) -> str:
    # 64 hex digits that none of the APNs emulator's failure prefixes (dead, bad0, 4290, 5000) starts with.
    return "a1" + hashlib.sha256(f"apns-{index}".encode()).hexdigest()[:62]


def php_urlencode(text: str) -> str:
    return urllib.parse.quote(text, safe="-_.")


def nextcloud_bodies(port: int, platform: str, out: str) -> None:
    """Registers DEVICES devices with POST /devices as Nextcloud clients do, then writes BODIES batches of
    BATCH entries (distinct devices within a batch), each entry signed as nextcloud/notifications signs it."""
    rng = random.Random(13)
    keys = [rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(USERS)]
    pems = [k.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode() for k in keys]
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    devices = []
    for index in range(DEVICES):
        user = index % USERS
        digest = hashlib.sha512(f"bench-device-{platform}-{index}".encode()).digest()
        token = apns_token(index) if platform == "apns" else f"bench-fcm-token-{index}"
        # deviceIdentifierSignature: PKCS#1 v1.5 over the identifier, which already is a SHA-512 digest.
        signature = keys[user].sign(digest, padding.PKCS1v15(), Prehashed(hashes.SHA512()))
        form = urllib.parse.urlencode({
            "pushToken": token, "deviceIdentifier": base64.b64encode(digest).decode(),
            "deviceIdentifierSignature": base64.b64encode(signature).decode(), "userPublicKey": pems[user],
        })
        connection.request("POST", "/devices", body=form, headers={
            "Content-Type": "application/x-www-form-urlencoded", "User-Agent": "Mozilla/5.0 (Android) Nextcloud-android/30.0.0"})
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            sys.exit(f"POST /devices answered {response.status} for device {index}")
        devices.append((base64.b64encode(digest).decode(), token, user))
    # One subject (ciphertext stand-in) per user, signed with the user key over its bytes (SHA-512, PKCS#1 v1.5).
    subjects = [os.urandom(256) for _ in range(USERS)]
    signatures = [base64.b64encode(keys[u].sign(subjects[u], padding.PKCS1v15(), hashes.SHA512())).decode() for u in range(USERS)]
    entries = []
    for identifier, token, user in devices:
        entry = {"deviceIdentifier": identifier, "pushTokenHash": hashlib.sha512(token.encode()).hexdigest(),
                 "subject": base64.b64encode(subjects[user]).decode(), "signature": signatures[user],
                 "priority": "high", "type": "alert"}
        entries.append(json.dumps(entry, separators=(",", ":")).replace("/", "\\/"))  # PHP's json_encode escapes '/'
    with open(out, "w") as f:
        for _ in range(BODIES):
            chosen = rng.sample(entries, BATCH)
            f.write("&".join(f"notifications%5B{i}%5D={php_urlencode(e)}" for i, e in enumerate(chosen)) + "\n")
    print(f"registered {DEVICES} {platform} devices; wrote {BODIES} batches of {BATCH}")


def send(port: int, case: str, material: str, count: int, prefix: str, threads: int = 4) -> None:
    """Sends exactly `count` requests of `case` over `threads` keep-alive connections, each bounded in time."""
    with open(material) as f:
        lines = [line.rstrip("\n") for line in f if line.strip()]
    matrix = case.startswith("matrix")
    if matrix:
        with open(material + ".devices") as f:
            devices = [line.rstrip("\n") for line in f if line.strip()]
    gorush = case.startswith("gorush")
    path = "/_matrix/push/v1/notify" if matrix else "/api/push" if gorush else "/notifications"
    content_type = "application/x-www-form-urlencoded" if case.startswith("nextcloud") else "application/json"
    lock = threading.Lock()
    state = {"next": 0, "statuses": {}, "errors": 0}
    deadline = time.monotonic() + float(os.environ.get("SEND_DEADLINE", "3600"))

    def worker() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        while time.monotonic() < deadline:
            with lock:
                index = state["next"]
                if index >= count:
                    break
                state["next"] += 1
            if matrix:
                body = lines[0].replace(EVENT, f"${prefix}-{index}").replace(DEVICE, devices[index % len(devices)])
            else:
                body = lines[index % len(lines)]
            try:
                connection.request("POST", path, body=body.encode(), headers={"Content-Type": content_type})
                response = connection.getresponse()
                text = response.read()
                status = response.status
                if matrix:
                    ok = status == 200 and b'"rejected":[]' in text
                elif gorush:
                    ok = status == 200 and b'"success":"ok"' in text
                else:
                    ok = status == 200 and b'"failed":0' in text and b'"unknown":[]' in text
            except (OSError, http.client.HTTPException):
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
                status, ok = "error", False
            with lock:
                state["statuses"][status] = state["statuses"].get(status, 0) + 1
                state["errors"] += 0 if ok else 1
        connection.close()

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    started = time.monotonic()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    elapsed = time.monotonic() - started
    statuses = " ".join(f"{k}:{v}" for k, v in sorted(state["statuses"].items(), key=str))
    print(f"sent {state['next']} of {count} in {elapsed:.1f} s; statuses {statuses}; answers not all-delivered {state['errors']}")
    if state["next"] < count or state["errors"]:
        sys.exit(1)


def main() -> None:
    command, args = sys.argv[1], sys.argv[2:]
    if command == "matrix-template":
        kind, endpoint, out, devices = args
        with open(out, "w") as f:
            f.write(matrix_template(kind) + "\n")
        with open(out + ".devices", "w") as f:
            for index in range(int(devices)):
                f.write(json.dumps(matrix_device(kind, endpoint, index), separators=(",", ":")) + "\n")
    elif command == "nextcloud-bodies":
        nextcloud_bodies(int(args[0]), args[1], args[2])
    elif command == "send":
        send(int(args[0]), args[1], args[2], int(args[3]), args[4])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
