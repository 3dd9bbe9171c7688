import Crypto
import CryptoExtras
import Foundation

/// Status's topic names and their Waku content topics (status-wire.md §1.2): the partitioned topic of a
/// key, the personal topic of a key, the public query topic of a registered key, and the symmetric key of
/// a public topic.
public enum StatusTopic {
    /// `contact-discovery-` + the decimal of (X mod 5000).
    public static func partitionedName(for key: Secp256k1.PublicKey) -> String {
        var remainder = 0
        for byte in key.x { remainder = (remainder * 256 + Int(byte)) % 5000 }
        return "contact-discovery-\(remainder)"
    }

    /// `contact-discovery-` + lowercase hex of the 65-byte uncompressed key.
    public static func personalName(for key: Secp256k1.PublicKey) -> String {
        "contact-discovery-" + StatusHex.encode(key.uncompressed)
    }

    /// The query topic of a registered key: lowercase hex (no `0x`) of its SHAKE-256 hash.
    public static func queryName(forKeyHash hash: [UInt8]) -> String {
        StatusHex.encode(hash)
    }

    /// The SHAKE-256 (64 bytes) of a key's compressed form: how registrations and queries name a key.
    public static func keyHash(_ key: Secp256k1.PublicKey) -> [UInt8] {
        Keccak.shake256(key.compressed, outputCount: 64)
    }

    /// The 4-byte topic of a name: the first 4 bytes of Keccak-256 of its UTF-8 bytes.
    public static func topicBytes(forName name: String) -> [UInt8] {
        Array(Keccak.keccak256(Array(name.utf8)).prefix(4))
    }

    /// `/waku/1/0x<8 hex digits of the 4-byte topic>/rfc26`.
    public static func contentTopic(forName name: String) -> String {
        "/waku/1/0x" + StatusHex.encode(Self.topicBytes(forName: name)) + "/rfc26"
    }

    /// The AES-256-GCM key of a public topic: PBKDF2-HMAC-SHA-256 of the name with an empty salt and
    /// 65,356 rounds (status-go's number), 32 bytes.
    public static func symmetricKey(forName name: String) -> [UInt8] {
        let key = try? KDF.Insecure.PBKDF2.deriveKey(
            from: Array(name.utf8), salt: [UInt8](), using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: 65_356
        )
        return key.map { $0.withUnsafeBytes { Array($0) } } ?? []
    }
}

/// Status message ids and Waku message hashes.
public enum StatusMessageID {
    /// Keccak-256(65-byte uncompressed author key ‖ data); Keccak-256(data) when there is no author.
    public static func compute(author: Secp256k1.PublicKey?, data: [UInt8]) -> [UInt8] {
        Keccak.keccak256((author?.uncompressed ?? []) + data)
    }
}

/// The 14/WAKU2-MESSAGE deterministic hash.
public enum WakuMessageHash {
    /// SHA-256(pubsub topic ‖ payload ‖ content topic ‖ meta ‖ timestamp as 8 bytes big-endian).
    public static func compute(pubsubTopic: String, payload: [UInt8], contentTopic: String, meta: [UInt8], timestampNanoseconds: Int64) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: Array(pubsubTopic.utf8))
        hasher.update(data: payload)
        hasher.update(data: Array(contentTopic.utf8))
        hasher.update(data: meta)
        let timestamp = UInt64(bitPattern: timestampNanoseconds)
        hasher.update(data: (0..<8).map { UInt8(truncatingIfNeeded: timestamp >> (56 - 8 * $0)) })
        return Array(hasher.finalize())
    }
}

/// The registration blob: AES-256-GCM under the X-only ECDH secret, laid out nonce ‖ ciphertext ‖ tag.
public enum RegistrationCipher {
    /// Encrypts a marshalled registration. - Parameter nonce: fixed for test vectors; random when nil.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8]? = nil) throws -> [UInt8] {
        let gcmNonce = try nonce.map { try AES.GCM.Nonce(data: $0) } ?? AES.GCM.Nonce()
        let box = try AES.GCM.seal(plaintext, using: SymmetricKey(data: key), nonce: gcmNonce)
        return Array(gcmNonce) + Array(box.ciphertext) + Array(box.tag)
    }

    /// Decrypts a registration blob.
    public static func open(_ sealed: [UInt8], key: [UInt8]) throws -> [UInt8] {
        guard key.count == 32, sealed.count >= 12 + 16 else { throw WakuPayload.Failure.malformed }
        let box = try AES.GCM.SealedBox(combined: sealed)
        return Array(try AES.GCM.open(box, using: SymmetricKey(data: key)))
    }
}

/// A registration's grant: the client's recoverable signature of Keccak-256(client key ‖ server key ‖
/// access token), both keys compressed.
public enum StatusGrant {
    /// The signed material.
    public static func material(clientKey: Secp256k1.PublicKey, serverKey: Secp256k1.PublicKey, accessToken: String) -> [UInt8] {
        Keccak.keccak256(clientKey.compressed + serverKey.compressed + Array(accessToken.utf8))
    }

    /// Whether `grant` is the client's signature of the material.
    public static func verify(grant: [UInt8], clientKey: Secp256k1.PublicKey, serverKey: Secp256k1.PublicKey, accessToken: String) -> Bool {
        let material = Self.material(clientKey: clientKey, serverKey: serverKey, accessToken: accessToken)
        return (try? Secp256k1.recover(signature65: grant, hash32: material)) == clientKey
    }
}
