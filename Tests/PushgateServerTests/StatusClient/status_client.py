"""A Status client, written independently of Pushgate, that talks to a push notification server the way
status-go's client does: through a Waku node's REST API (nwaku's shapes), with coincurve (libsecp256k1),
pycryptodome (AES, Keccak, SHAKE) and the protobuf runtime.

Each subcommand reads one JSON object on stdin and prints one JSON object: the answer it got and what the
test needs to check about it (who signed it, on which topic, with which Waku fields).

  (every command also takes waku_version: the WakuMessage version label, 1 by default)
  register  {rest, pubsub, server_key, identity, installation_id, access_token, token_type, device_token,
             version, apn_topic, unregister, allow_from_contacts_only, allowed_key_list, blocked_chats,
             muted_chats, block_mentions, allowed_mentions_chats, timeout}
  query     {rest, pubsub, server_key, identity, ephemeral, target_key, timeout}
  push      {rest, pubsub, server_key, identity, ephemeral, message_id, requests: [{target_key,
             installation_id, access_token, chat, type, author_key}], timeout, repeat, expect_answer}
  publickey {secret}
"""
import base64
import hashlib
import hmac
import json
import os
import sys
import time
import urllib.parse
import urllib.request

from coincurve import PrivateKey, PublicKey
from Crypto.Cipher import AES
from Crypto.Hash import SHAKE256, keccak

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import application_metadata_message_pb2 as amm_pb  # noqa: E402
import push_notifications_pb2 as pn  # noqa: E402

# --- hashes, keys, topics ---------------------------------------------------------------------------


def keccak256(data):
    h = keccak.new(digest_bits=256)
    h.update(data)
    return h.digest()


def shake256(data, n=64):
    h = SHAKE256.new()
    h.update(data)
    return h.read(n)


def uncompressed(key):
    return key.format(compressed=False)


def compressed(key):
    return key.format(compressed=True)


def raw_x(secret, public):
    """The X coordinate of the shared point, unhashed (go-ethereum's GenerateShared)."""
    return PublicKey(public).multiply(secret).format(compressed=False)[1:33]


def content_topic(name):
    return "/waku/1/0x" + keccak256(name.encode())[:4].hex() + "/rfc26"


def partitioned_name(key):
    x = int.from_bytes(uncompressed(key)[1:33], "big")
    return "contact-discovery-%d" % (x % 5000)


def personal_name(key):
    return "contact-discovery-" + uncompressed(key).hex()


def sign(secret, digest):
    return PrivateKey(secret).sign_recoverable(digest, hasher=None)


def recover(signature, digest):
    return PublicKey.from_signature_and_message(signature, digest, hasher=None)


# --- the Waku payload (26/WAKU2-PAYLOAD version 1) -----------------------------------------------------


def frame(data, signer_secret):
    size = len(data).to_bytes(4, "little").rstrip(b"\x00") or b"\x00"
    body = bytes([len(size) | 0x04]) + size + data
    raw = len(body) + 65
    body += os.urandom(256 - raw % 256)
    return body + sign(signer_secret, keccak256(body))


def unframe(plain):
    flags = plain[0]
    signer = None
    end = len(plain)
    if flags & 0x04:
        end -= 65
        signer = recover(plain[end:], keccak256(plain[:end]))
    n = flags & 0x03
    size = int.from_bytes(plain[1:1 + n], "little")
    return plain[1 + n:1 + n + size], signer


def ecies_encrypt(public, plaintext):
    ephemeral = PrivateKey()
    k = hashlib.sha256((1).to_bytes(4, "big") + raw_x(ephemeral.secret, public)).digest()
    iv = os.urandom(16)
    c = AES.new(k[:16], AES.MODE_CTR, nonce=b"", initial_value=iv).encrypt(plaintext)
    tag = hmac.new(hashlib.sha256(k[16:]).digest(), iv + c, hashlib.sha256).digest()
    return uncompressed(ephemeral.public_key) + iv + c + tag


def ecies_decrypt(secret, data):
    k = hashlib.sha256((1).to_bytes(4, "big") + raw_x(secret, data[:65])).digest()
    iv, c, tag = data[65:81], data[81:-32], data[-32:]
    if not hmac.compare_digest(tag, hmac.new(hashlib.sha256(k[16:]).digest(), iv + c, hashlib.sha256).digest()):
        raise ValueError("bad tag")
    return AES.new(k[:16], AES.MODE_CTR, nonce=b"", initial_value=iv).decrypt(c)


def topic_key(name):
    return hashlib.pbkdf2_hmac("sha256", name.encode(), b"", 65356, 32)


def gcm_nonce_last(key, plaintext):
    nonce = os.urandom(12)
    c, tag = AES.new(key, AES.MODE_GCM, nonce=nonce).encrypt_and_digest(plaintext)
    return c + tag + nonce


def gcm_nonce_first(key, plaintext):
    nonce = os.urandom(12)
    c, tag = AES.new(key, AES.MODE_GCM, nonce=nonce).encrypt_and_digest(plaintext)
    return nonce + c + tag


def amm(payload, kind, signer_secret):
    message = amm_pb.ApplicationMetadataMessage(signature=sign(signer_secret, keccak256(payload)), payload=payload, type=kind)
    return message.SerializeToString()


# --- the node's REST API --------------------------------------------------------------------------------


def rest(url, method="GET", body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read()


def publish(args, topic, payload):
    quoted = urllib.parse.quote(args["pubsub"], safe="")
    # status-go labels its encrypted payloads version 1, and 0 from app 2.40 on; servers decrypt either.
    message = {"payload": base64.b64encode(payload).decode(), "contentTopic": topic, "version": args.get("waku_version", 1), "timestamp": time.time_ns(), "ephemeral": False}
    rest(args["rest"] + "/relay/v1/messages/" + quoted, "POST", message)
    return message


def await_answer(args, secret, kind):
    """Polls the partitioned topic of `secret`'s key for an answer of AMM type `kind`."""
    quoted = urllib.parse.quote(args["pubsub"], safe="")
    topic = content_topic(partitioned_name(PrivateKey(secret).public_key))
    server = PublicKey(bytes.fromhex(args["server_key"]))
    deadline = time.time() + args.get("timeout", 10)
    while time.time() < deadline:
        for message in json.loads(rest(args["rest"] + "/relay/v1/messages/" + quoted)):
            if message["contentTopic"] != topic:
                continue
            try:
                plain = ecies_decrypt(secret, base64.b64decode(message["payload"]))
            except Exception:
                continue
            data, waku_signer = unframe(plain)
            envelope = amm_pb.ApplicationMetadataMessage()
            envelope.ParseFromString(data)
            if envelope.type != kind:
                continue
            amm_signer = recover(envelope.signature, keccak256(envelope.payload))
            return envelope.payload, {
                "waku_signer_is_server": waku_signer is not None and compressed(waku_signer) == compressed(server),
                "amm_signer_is_server": compressed(amm_signer) == compressed(server),
                "version": message.get("version"),
                "ephemeral": message.get("ephemeral"),
                "timestamp": message.get("timestamp"),
                "meta": message.get("meta"),
                "frame_multiple_of_256": len(plain) % 256 == 0,
            }
        time.sleep(0.05)
    return None, None


# --- the three requests ---------------------------------------------------------------------------------


def register(args):
    identity = bytes.fromhex(args["identity"])
    server = PublicKey(bytes.fromhex(args["server_key"]))
    me = PrivateKey(identity).public_key
    token = args.get("access_token", "")
    registration = pn.PushNotificationRegistration(
        token_type=args.get("token_type", 1),
        device_token=args.get("device_token", ""),
        installation_id=args["installation_id"],
        access_token=token,
        enabled=not args.get("unregister", False),
        version=args["version"],
        unregister=args.get("unregister", False),
        grant=sign(identity, keccak256(compressed(me) + compressed(server) + token.encode())),
        allow_from_contacts_only=args.get("allow_from_contacts_only", False),
        apn_topic=args.get("apn_topic", ""),
        block_mentions=args.get("block_mentions", False),
    )
    registration.allowed_key_list.extend(bytes.fromhex(k) for k in args.get("allowed_key_list", []))
    registration.blocked_chat_list.extend(shake256(c.encode()) for c in args.get("blocked_chats", []))
    registration.muted_chat_list.extend(shake256(c.encode()) for c in args.get("muted_chats", []))
    registration.allowed_mentions_chat_list.extend(shake256(c.encode()) for c in args.get("allowed_mentions_chats", []))
    sealed = gcm_nonce_first(raw_x(identity, compressed(server)), registration.SerializeToString())
    envelope = amm(sealed, amm_pb.ApplicationMetadataMessage.PUSH_NOTIFICATION_REGISTRATION, identity)
    publish(args, content_topic(personal_name(server)), ecies_encrypt(compressed(server), frame(envelope, identity)))
    payload, seen = await_answer(args, identity, amm_pb.ApplicationMetadataMessage.PUSH_NOTIFICATION_REGISTRATION_RESPONSE)
    if payload is None:
        return {"answered": False}
    response = pn.PushNotificationRegistrationResponse()
    response.ParseFromString(payload)
    return dict(seen, answered=True, success=response.success, error=response.error, request_id_matches=response.request_id == shake256(sealed))


def query(args):
    identity, ephemeral = bytes.fromhex(args["identity"]), bytes.fromhex(args["ephemeral"])
    target = PublicKey(bytes.fromhex(args["target_key"]))
    hashed = shake256(compressed(target))
    name = hashed.hex()
    envelope = amm(pn.PushNotificationQuery(public_keys=[hashed]).SerializeToString(), amm_pb.ApplicationMetadataMessage.PUSH_NOTIFICATION_QUERY, ephemeral)
    message_id = keccak256(uncompressed(PrivateKey(ephemeral).public_key) + envelope)
    publish(args, content_topic(name), gcm_nonce_last(topic_key(name), frame(envelope, identity)))
    payload, seen = await_answer(args, ephemeral, amm_pb.ApplicationMetadataMessage.PUSH_NOTIFICATION_QUERY_RESPONSE)
    if payload is None:
        return {"answered": False}
    response = pn.PushNotificationQueryResponse()
    response.ParseFromString(payload)
    info = [
        {
            "installation_id": i.installation_id,
            "access_token": i.access_token,
            "public_key": i.public_key.hex(),
            "version": i.version,
            "grant_verifies": compressed(recover(i.grant, keccak256(compressed(target) + compressed(PublicKey(bytes.fromhex(args["server_key"]))) + i.access_token.encode()))) == compressed(target) if i.access_token else None,
            "allowed_key_list": [k.hex() for k in i.allowed_key_list],
        }
        for i in response.info
    ]
    return dict(seen, answered=True, success=response.success, message_id_matches=response.message_id == message_id, info=info, public_key_hash=hashed.hex())


def push(args):
    identity, ephemeral = bytes.fromhex(args["identity"]), bytes.fromhex(args["ephemeral"])
    server = PublicKey(bytes.fromhex(args["server_key"]))
    request = pn.PushNotificationRequest(message_id=bytes.fromhex(args["message_id"]))
    for item in args["requests"]:
        author = "0x" + uncompressed(PublicKey(bytes.fromhex(item["author_key"]))).hex()
        request.requests.append(
            pn.PushNotification(
                access_token=item["access_token"],
                chat_id=shake256(item.get("chat", author).encode()),
                public_key=shake256(compressed(PublicKey(bytes.fromhex(item["target_key"])))),
                installation_id=item["installation_id"],
                type=item.get("type", 1),
                author=shake256(author.encode()),
            )
        )
    envelope = amm(request.SerializeToString(), amm_pb.ApplicationMetadataMessage.PUSH_NOTIFICATION_REQUEST, ephemeral)
    payload = ecies_encrypt(compressed(server), frame(envelope, identity))
    for _ in range(args.get("repeat", 1)):
        # A repeat is a new Waku message (new timestamp) carrying the same Status message.
        publish(args, content_topic(partitioned_name(server)), payload)
        time.sleep(0.01)
    answers = []
    while True:
        body, seen = await_answer(args, ephemeral, amm_pb.ApplicationMetadataMessage.PUSH_NOTIFICATION_RESPONSE)
        if body is None:
            break
        response = pn.PushNotificationResponse()
        response.ParseFromString(body)
        reports = [
            {"success": r.success, "error": r.error, "public_key": r.public_key.hex(), "installation_id": r.installation_id} for r in response.reports
        ]
        answers.append(dict(seen, message_id_matches=response.message_id == request.message_id, reports=reports))
        args["timeout"] = args.get("settle", 1)
    return {"answered": bool(answers), "answers": answers}


def main():
    command = sys.argv[1]
    args = json.loads(sys.argv[2]) if len(sys.argv) > 2 else json.load(sys.stdin)
    if command == "publickey":
        key = PrivateKey(bytes.fromhex(args["secret"])).public_key
        result = {"compressed": compressed(key).hex(), "uncompressed": uncompressed(key).hex()}
    else:
        result = {"register": register, "query": query, "push": push}[command](args)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
