import Crypto
import Foundation

/// The content encryption key and nonce of one `aes128gcm` Web Push record, derived as RFC 8291 §3.4 prescribes.
///
/// Every HKDF in that derivation produces at most one SHA-256 block, so each step is a single HMAC-SHA-256,
/// computed with ``HMACSHA256`` (the PRK's padded key absorbed once for both the key and the nonce) rather
/// than through the generic HKDF API:
///
/// ```
/// PRK_key = HMAC(auth_secret, ecdh_secret)
/// IKM     = HMAC(PRK_key, "WebPush: info" ‖ 0x00 ‖ ua_public ‖ as_public ‖ 0x01)
/// PRK     = HMAC(salt, IKM)
/// CEK     = HMAC(PRK, "Content-Encoding: aes128gcm" ‖ 0x00 ‖ 0x01)[0..<16]
/// NONCE   = HMAC(PRK, "Content-Encoding: nonce" ‖ 0x00 ‖ 0x01)[0..<12]
/// ```
///
/// Both the encrypting side and the decrypting side of ``WebPushEncryption`` use it.
struct WebPushContentKeys {
    /// The 16-byte AES-128-GCM content encryption key (CEK).
    let contentEncryptionKey: SymmetricKey
    /// The 12-byte nonce of the message's only record (NONCE; the record sequence number is 0).
    let nonce: AES.GCM.Nonce

    /// `"WebPush: info" ‖ 0x00`, the start of `key_info`.
    private static let keyInfoPrefix: [UInt8] = Array("WebPush: info\0".utf8)
    /// The HKDF-Expand block counter of the first (and only) output block.
    private static let firstBlockCounter: [UInt8] = [0x01]
    /// `cek_info` followed by the first block counter.
    private static let contentKeyInfoBlock: [UInt8] = Array("Content-Encoding: aes128gcm\0".utf8) + [0x01]
    /// `nonce_info` followed by the first block counter.
    private static let nonceInfoBlock: [UInt8] = Array("Content-Encoding: nonce\0".utf8) + [0x01]

    /// Derives the key and nonce with the auth secret's HMAC key prepared beforehand (a subscription
    /// keeps it: ``WebPushSubscription/authKey``).
    /// - Parameters:
    ///   - ecdhSecret: the 32-byte ECDH shared secret between the sender key and the user agent key.
    ///   - authKey: HMAC-SHA-256 keyed with the subscription's 16-byte auth secret.
    ///   - userAgentPublicKey: the user agent's public key (`p256dh`), uncompressed (65 bytes).
    ///   - senderPublicKey: the sender's ephemeral public key, uncompressed (65 bytes).
    ///   - salt: the message's 16-byte salt.
    init(
        ecdhSecret: some ContiguousBytes,
        authKey: HMACSHA256,
        userAgentPublicKey: [UInt8],
        senderPublicKey: [UInt8],
        salt: [UInt8]
    ) throws {
        let prkKey = authKey.authenticationCode(ecdhSecret)
        let ikm = HMACSHA256(key: prkKey).authenticationCode(Self.keyInfoPrefix, userAgentPublicKey, senderPublicKey, Self.firstBlockCounter)
        let prk = HMACSHA256(key: HMACSHA256(key: salt).authenticationCode(ikm))
        let contentKeyBlock = prk.authenticationCode(Self.contentKeyInfoBlock)
        self.contentEncryptionKey = contentKeyBlock.withUnsafeBytes { SymmetricKey(data: UnsafeRawBufferPointer(rebasing: $0.prefix(16))) }
        let nonceBlock = prk.authenticationCode(Self.nonceInfoBlock)
        self.nonce = try nonceBlock.withUnsafeBytes { try AES.GCM.Nonce(data: UnsafeRawBufferPointer(rebasing: $0.prefix(12))) }
    }
}
