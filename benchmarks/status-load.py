"""Load for benchmarks/status-waku.sh: Status push requests through a Waku node's REST API, built as
status-go builds them (by the test suite's independent client, Tests/PushgateServerTests/StatusClient),
published at a fixed rate, timed from publish to the device (the sandbox's APNs emulator).

  status-load.py CLIENT_NODE_URL SERVER_KEY DELIVERIES_URL METRICS_URL COUNT RATE
  CLIENTS=100 (default): registered clients, each its own identity and device token; the requests go
  to them in turn.
"""
import base64
import datetime
import http.client
import json
import os
import sys
import threading
import time
import urllib.parse
import urllib.request
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "PushgateServerTests", "StatusClient"))
import status_client as sc  # noqa: E402

PUBSUB = "/waku/2/rs/16/32"


def delivered(metrics_url):
    text = urllib.request.urlopen(metrics_url, timeout=10).read().decode()
    return sum(float(line.split()[-1]) for line in text.splitlines()
               if line.startswith('pushgate_status_deliveries_total{') and 'outcome="delivered"' in line)


def main():
    node, server_key, deliveries_url, metrics_url, count, rate = sys.argv[1:7]
    count, rate = int(count), float(rate)
    sc.rest(node + "/relay/v1/subscriptions", "POST", [PUBSUB])
    # Many distinct registered clients, each its own identity, installation and device token, and the
    # push requests spread over them in turn, as many devices as a server's users have (CLIENTS, default 100).
    clients = []
    for n in range(int(os.environ.get("CLIENTS", "100"))):
        identity, ephemeral = os.urandom(32), os.urandom(32)
        token, installation = str(uuid.uuid4()), str(uuid.uuid4())
        answer = sc.register({"rest": node, "pubsub": PUBSUB, "server_key": server_key, "identity": identity.hex(), "installation_id":
                              installation, "access_token": token, "token_type": 1,
                              "device_token": "%064x" % (n + 1), "version": 1, "apn_topic": "im.pushgate.sandbox", "timeout": 30})
        assert answer.get("success"), answer
        clients.append((identity, ephemeral, token, installation))
    server = sc.PublicKey(bytes.fromhex(server_key))
    topic = sc.content_topic(sc.partitioned_name(server))
    bodies, chat_ids = [], []
    for i in range(count):
        identity, ephemeral, token, installation = clients[i % len(clients)]
        me = sc.PrivateKey(identity).public_key
        author = "0x" + sc.uncompressed(me).hex()
        chat = "bench-%d" % i
        request = sc.pn.PushNotificationRequest(message_id=i.to_bytes(32, "big"))
        request.requests.append(sc.pn.PushNotification(access_token=token, chat_id=sc.shake256(chat.encode()), public_key=sc.shake256(sc.compressed(me)),
                                                       installation_id=installation, type=1, author=sc.shake256(author.encode())))
        envelope = sc.amm(request.SerializeToString(), sc.amm_pb.ApplicationMetadataMessage.PUSH_NOTIFICATION_REQUEST, ephemeral)
        payload = sc.ecies_encrypt(sc.compressed(server), sc.frame(envelope, identity))
        bodies.append(base64.b64encode(payload).decode())
        chat_ids.append("0x" + sc.shake256(chat.encode()).hex())
    before = delivered(metrics_url)
    published = [0.0] * count
    url = urllib.parse.urlsplit(node)
    path = "/relay/v1/messages/" + urllib.parse.quote(PUBSUB, safe="")
    threads = 4
    start = time.time() + 0.2

    def publisher(offset):
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
        for i in range(offset, count, threads):
            due = start + i / rate
            pause = due - time.time()
            if pause > 0:
                time.sleep(pause)
            published[i] = time.time()
            body = json.dumps({"payload": bodies[i], "contentTopic": topic, "version": 1, "timestamp": time.time_ns(), "ephemeral": False})
            connection.request("POST", path, body, {"Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            assert response.status == 200, response.status

    workers = [threading.Thread(target=publisher, args=(k,)) for k in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    last_publish = max(published)
    deadline = time.time() + 120
    while delivered(metrics_url) - before < count and time.time() < deadline:
        time.sleep(0.05)
    done = time.time()
    got = int(delivered(metrics_url) - before)
    sent_at = dict(zip(chat_ids, published))
    latencies = []
    for item in json.loads(urllib.request.urlopen(deliveries_url, timeout=30).read()):
        if item.get("provider") != "apns":
            continue
        chat = json.loads(item["body"]).get("chatId")
        if chat in sent_at:
            received = datetime.datetime.fromisoformat(item["receivedAt"].replace("Z", "+00:00")).timestamp()
            latencies.append((received - sent_at[chat]) * 1000)
    latencies.sort()

    def pct(p):
        return latencies[min(len(latencies) - 1, int(len(latencies) * p / 100))] if latencies else float("nan")
    print(json.dumps({
        "published": count, "delivered": got, "publish_rate": round(count / (last_publish - published[0]), 1),
        "end_to_end_rate": round(got / (done - published[0]), 1), "latency_sample": len(latencies),
        "p50_ms": round(pct(50), 1), "p99_ms": round(pct(99), 1), "max_ms": round(latencies[-1], 1) if latencies else None,
    }))


if __name__ == "__main__":
    main()
