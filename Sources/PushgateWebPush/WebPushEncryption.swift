import Crypto
import Foundation
import PushgateCore

/// The `aes128gcm` content encoding of Web Push messages (RFC 8291 over RFC 8188), in one record.
///
/// The body is `salt(16) ‖ rs(4, big-endian) ‖ idlen(1) = 65 ‖ sender public key(65) ‖ ciphertext ‖ tag`, where
/// the key and nonce come from an ECDH agreement between a fresh sender key and the subscriber's `p256dh`
/// key, mixed with the subscriber's auth secret (RFC 8291 §3.4).
public enum WebPushEncryption {
    /// Why a message cannot be encrypted or decrypted.
    public enum Failure: Error, Sendable, Equatable {
        /// The plaintext is over ``maximumPlaintextSize``.
        case payloadTooLarge(size: Int, limit: Int)
        /// The body is not a well-formed one-record `aes128gcm` message.
        case malformedBody(String)
        /// The authentication tag did not verify.
        case authenticationFailed
    }

    static let headerSize = 16 + 4 + 1 + 65

    /// The largest plaintext sent, 3993 bytes: a push service need not take a body over 4096 bytes (RFC
    /// 8030 §7.2; autopush refuses one with 413), and the body is the header, the plaintext, its delimiter
    /// and the tag (RFC 8291 §4).
    public static let maximumPlaintextSize = 4096 - Self.headerSize - 1 - 16

    /// Encrypts `plaintext` for `subscription` with a fresh salt and sender key.
    ///
    /// Every call draws a new 16-byte salt and a new ephemeral sender key (`WebPushSenderKey`), as
    /// RFC 8291 requires; the key and nonce come from `WebPushContentKeys`.
    /// - Throws: ``Failure/payloadTooLarge(size:limit:)`` when it does not fit one record.
    public static func encrypt(_ plaintext: [UInt8], for subscription: WebPushSubscription) throws -> [UInt8] {
        var salt = [UInt8](repeating: 0, count: 16)
        salt.withUnsafeMutableBytes { SecureRandomPool.shared.fill($0) }
        return try Self.encrypt(
            plaintext,
            userAgentPublicKey: subscription.userAgentPublicKey,
            userAgentPublicKeyBytes: subscription.userAgentPublicKeyBytes,
            authKey: subscription.authKey,
            salt: salt,
            senderKey: WebPushSenderKey.generate()
        )
    }

    /// Encrypts with a given salt and sender key (tests pass fixed ones).
    /// - Parameters:
    ///   - userAgentPublicKeyBytes: `userAgentPublicKey`'s x9.63 form, when the caller has it.
    ///   - authKey: HMAC-SHA-256 keyed with the subscription's auth secret (`HMACSHA256(key: authSecret)`).
    static func encrypt(
        _ plaintext: [UInt8],
        userAgentPublicKey: P256.KeyAgreement.PublicKey,
        userAgentPublicKeyBytes: [UInt8]? = nil,
        authKey: HMACSHA256,
        salt: [UInt8],
        senderKey: P256.KeyAgreement.PrivateKey
    ) throws -> [UInt8] {
        guard plaintext.count <= Self.maximumPlaintextSize else {
            throw Failure.payloadTooLarge(size: plaintext.count, limit: Self.maximumPlaintextSize)
        }
        precondition(salt.count == 16, "the aes128gcm salt is 16 bytes")
        let senderPublic = Array(senderKey.publicKey.x963Representation)
        let secret = try senderKey.sharedSecretFromKeyAgreement(with: userAgentPublicKey)
        let keys = try WebPushContentKeys(
            ecdhSecret: secret,
            authKey: authKey,
            userAgentPublicKey: userAgentPublicKeyBytes ?? Array(userAgentPublicKey.x963Representation),
            senderPublicKey: senderPublic,
            salt: salt
        )
        var padded = plaintext
        padded.append(0x02)
        let sealed = try AES.GCM.seal(padded, using: keys.contentEncryptionKey, nonce: keys.nonce)
        var body: [UInt8] = []
        body.reserveCapacity(Self.headerSize + padded.count + 16)
        body += salt
        let recordSize = UInt32(WebPush.recordSize)
        body += [UInt8(recordSize >> 24), UInt8((recordSize >> 16) & 0xff), UInt8((recordSize >> 8) & 0xff), UInt8(recordSize & 0xff)]
        body.append(UInt8(senderPublic.count))
        body += senderPublic
        body += sealed.ciphertext
        body += sealed.tag
        return body
    }

    /// Decrypts a one-record `aes128gcm` message addressed to `userAgentKey`, as a browser would; used by
    /// the tests and the sandbox.
    static func decrypt(_ body: [UInt8], userAgentKey: P256.KeyAgreement.PrivateKey, authSecret: [UInt8]) throws -> [UInt8] {
        guard body.count >= Self.headerSize + 16 + 1 else { throw Failure.malformedBody("body shorter than a header and a tag") }
        let salt = Array(body[0..<16])
        let recordSize = body[16..<20].reduce(0) { ($0 << 8) | Int($1) }
        let idLength = Int(body[20])
        guard idLength == 65 else { throw Failure.malformedBody("key id is not a 65-byte public key") }
        let senderPublic = Array(body[21..<86])
        let record = Array(body[86...])
        guard record.count <= recordSize else { throw Failure.malformedBody("more than one record") }
        let senderKey = try P256.KeyAgreement.PublicKey(x963Representation: senderPublic)
        let secret = try userAgentKey.sharedSecretFromKeyAgreement(with: senderKey)
        let keys = try WebPushContentKeys(
            ecdhSecret: secret,
            authKey: HMACSHA256(key: authSecret),
            userAgentPublicKey: Array(userAgentKey.publicKey.x963Representation),
            senderPublicKey: senderPublic,
            salt: salt
        )
        let box = try AES.GCM.SealedBox(nonce: keys.nonce, ciphertext: record.dropLast(16), tag: record.suffix(16))
        let padded: [UInt8]
        do {
            padded = Array(try AES.GCM.open(box, using: keys.contentEncryptionKey))
        } catch {
            throw Failure.authenticationFailed
        }
        guard let delimiter = padded.lastIndex(where: { $0 != 0 }), padded[delimiter] == 0x02 else {
            throw Failure.malformedBody("the last record has no 0x02 delimiter")
        }
        return Array(padded[..<delimiter])
    }
}
