public import Crypto
import Foundation

/// The user agent's side of RFC 8291: decrypts an `aes128gcm` Web Push message with the subscription's
/// private key and auth secret, as a browser does.
public enum WebPushDecryption {
    /// Why a message could not be decrypted.
    public struct Failure: Error, Equatable, Sendable {
        /// What was wrong.
        public let reason: String
    }

    /// Decrypts `body`.
    /// - Parameters:
    ///   - body: the request body (RFC 8188 header and one record).
    ///   - privateKey: the subscription's P-256 key (its public half is the `p256dh` the sender used).
    ///   - authSecret: the subscription's 16-byte auth secret.
    public static func decrypt(_ body: [UInt8], privateKey: P256.KeyAgreement.PrivateKey, authSecret: [UInt8]) throws(Failure) -> [UInt8] {
        try Self.decrypt(body, privateKey: privateKey, publicKeyBytes: Array(privateKey.publicKey.x963Representation), authSecret: authSecret)
    }

    /// ``decrypt(_:privateKey:authSecret:)`` with the key's public point (x9.63) already at hand.
    static func decrypt(_ body: [UInt8], privateKey: P256.KeyAgreement.PrivateKey, publicKeyBytes: [UInt8], authSecret: [UInt8]) throws(Failure) -> [UInt8] {
        guard body.count > 21 else { throw Failure(reason: "body shorter than the aes128gcm header") }
        let salt = Array(body[0..<16])
        let recordSize = body[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let keyIDLength = Int(body[20])
        guard keyIDLength == 65, body.count > 21 + keyIDLength + 16 else { throw Failure(reason: "the key id is not an uncompressed P-256 key") }
        let senderKeyBytes = Array(body[21..<(21 + keyIDLength)])
        let record = Array(body[(21 + keyIDLength)...])
        guard record.count <= recordSize else { throw Failure(reason: "more than one record") }
        let senderKey: P256.KeyAgreement.PublicKey
        let shared: SharedSecret
        do {
            senderKey = try P256.KeyAgreement.PublicKey(x963Representation: senderKeyBytes)
            shared = try privateKey.sharedSecretFromKeyAgreement(with: senderKey)
        } catch {
            throw Failure(reason: "invalid sender key")
        }
        let receiverPublic = publicKeyBytes
        let ecdh = shared.withUnsafeBytes { Array($0) }
        let keyInfo = Array("WebPush: info\0".utf8) + receiverPublic + senderKeyBytes
        let prkKey = HKDF<SHA256>.extract(inputKeyMaterial: SymmetricKey(data: ecdh), salt: authSecret)
        let ikm = HKDF<SHA256>.expand(pseudoRandomKey: prkKey, info: keyInfo, outputByteCount: 32)
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: salt)
        let contentKey = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("Content-Encoding: aes128gcm\0".utf8), outputByteCount: 16)
        let nonceKey = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("Content-Encoding: nonce\0".utf8), outputByteCount: 12)
        let nonceBytes = nonceKey.withUnsafeBytes { Array($0) }
        let padded: [UInt8]
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: nonceBytes), ciphertext: record.dropLast(16), tag: record.suffix(16)
            )
            padded = Array(try AES.GCM.open(box, using: contentKey))
        } catch {
            throw Failure(reason: "the record does not decrypt")
        }
        // The last record ends with a 0x02 delimiter followed by zero padding.
        guard let delimiter = padded.lastIndex(where: { $0 != 0 }), padded[delimiter] == 2 else {
            throw Failure(reason: "no last-record delimiter")
        }
        return Array(padded[..<delimiter])
    }
}
