import Crypto
import CryptoExtras
import PushgateCore

/// Status's topic names and their Waku content topics (status-wire.md §1.2): the partitioned topic of a
/// key, the personal topic of a key, the public query topic of a registered key, the 4-byte topic and
/// content topic of a name, and the symmetric key of a public topic.
public enum StatusTopic {
    /// How many partitioned topics there are (status-go's `nPartitions`).
    public static let partitions = 5000

    /// `contact-discovery-` + the decimal of (X mod 5000), X read as a 256-bit big-endian integer.
    public static func partitionedName(for key: Secp256k1.PublicKey) -> String {
        var remainder = 0
        for byte in key.x { remainder = (remainder * 256 + Int(byte)) % Self.partitions }
        return "contact-discovery-\(remainder)"
    }

    /// `contact-discovery-` + lowercase hex of the 65-byte uncompressed key (a server's registration topic).
    public static func personalName(for key: Secp256k1.PublicKey) -> String {
        "contact-discovery-" + Hex.lowercase(key.uncompressed)
    }

    /// The query topic of a registered key: lowercase hex (no `0x`) of its 64-byte SHAKE-256 hash
    /// (``keyHash(_:)``), 128 characters.
    public static func queryName(forKeyHash hash: [UInt8]) -> String {
        Hex.lowercase(hash)
    }

    /// The SHAKE-256 (64 bytes) of a key's compressed form: how registrations, queries and notifications
    /// name a key.
    public static func keyHash(_ key: Secp256k1.PublicKey) -> [UInt8] {
        Keccak.shake256(key.compressed, outputCount: 64)
    }

    /// The 4-byte topic of a name: the first 4 bytes of Keccak-256 of its UTF-8 bytes.
    public static func topicBytes(forName name: String) -> [UInt8] {
        Array(Keccak.keccak256(Array(name.utf8)).prefix(4))
    }

    /// `/waku/1/0x<8 lowercase hex digits of the 4-byte topic>/rfc26`.
    public static func contentTopic(forName name: String) -> String {
        Self.contentTopic(forTopic: Self.topicBytes(forName: name))
    }

    /// The content topic of 4 topic bytes; shorter input is padded with zero bytes and longer input cut
    /// to 4, as status-go's `BytesToTopic` does.
    public static func contentTopic(forTopic bytes: [UInt8]) -> String {
        "/waku/1/0x" + Hex.lowercase(Self.fourBytes(bytes)) + "/rfc26"
    }

    /// The 4 topic bytes of a Status content topic, or nil when it is not one: exactly
    /// `/waku/1/0x<hex>/rfc26` (status-go's `ExtractTopicFromContentTopic`; the hex is padded or cut to 4
    /// bytes as ``contentTopic(forTopic:)`` does).
    public static func topic(fromContentTopic contentTopic: String) -> [UInt8]? {
        let parts = contentTopic.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "waku", parts[2] == "1", parts[4] == "rfc26" else { return nil }
        let hex = parts[3]
        guard hex.hasPrefix("0x") || hex.hasPrefix("0X"), let bytes = Hex.decode(String(hex.dropFirst(2))) else { return nil }
        return Self.fourBytes(bytes)
    }

    private static func fourBytes(_ bytes: [UInt8]) -> [UInt8] {
        Array(bytes.prefix(4)) + [UInt8](repeating: 0, count: max(0, 4 - bytes.count))
    }

    /// PBKDF2 rounds for a public topic's key: 65 356 (status-go's number, not 65 536).
    public static let symmetricKeyRounds = 65_356

    /// The AES-256-GCM key of a public topic: PBKDF2-HMAC-SHA-256 of the UTF-8 name with an EMPTY salt and
    /// 65 356 rounds, 32 bytes. Costs tens of milliseconds: derive once per name and keep it.
    public static func symmetricKey(forName name: String) -> [UInt8] {
        // swift-crypto's PBKDF2 accepts an empty salt (BoringSSL's PKCS5_PBKDF2_HMAC does); the Python
        // cross-check pins the result.
        guard
            let key = try? KDF.Insecure.PBKDF2.deriveKey(
                from: Array(name.utf8), salt: [UInt8](), using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: Self.symmetricKeyRounds
            )
        else { return Self.pbkdf2SHA256(password: Array(name.utf8), salt: [], rounds: Self.symmetricKeyRounds, count: 32) }
        return key.withUnsafeBytes { Array($0) }
    }

    /// PBKDF2-HMAC-SHA-256 on swift-crypto's HMAC (RFC 8018 §5.2), the fallback should the platform's
    /// PBKDF2 refuse an empty salt.
    static func pbkdf2SHA256(password: [UInt8], salt: [UInt8], rounds: Int, count: Int) -> [UInt8] {
        let key = SymmetricKey(data: password)
        var output: [UInt8] = []
        var block: UInt32 = 1
        while output.count < count {
            var u = Array(HMAC<SHA256>.authenticationCode(for: salt + [UInt8(block >> 24), UInt8(truncatingIfNeeded: block >> 16), UInt8(truncatingIfNeeded: block >> 8), UInt8(truncatingIfNeeded: block)], using: key))
            var t = u
            for _ in 1..<max(rounds, 1) {
                u = Array(HMAC<SHA256>.authenticationCode(for: u, using: key))
                for index in t.indices { t[index] ^= u[index] }
            }
            output += t
            block += 1
        }
        return Array(output.prefix(count))
    }
}
