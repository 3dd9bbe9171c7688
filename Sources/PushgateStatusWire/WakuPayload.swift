import Crypto
import Foundation

/// The version-1 Waku payload (26/WAKU2-PAYLOAD) as go-waku and status-go build it: a frame of flags,
/// a little-endian size field, the data, padding and an optional recoverable signature, then encrypted
/// with ECIES (to a public key) or AES-256-GCM (with a topic's key).
public enum WakuPayload {
    /// Why a frame or an envelope cannot be read.
    public enum Failure: Error, Equatable, Sendable {
        case malformed
        case badSignature
        case badKey
        case authenticationFailed
    }

    /// The frame's flag for a signature.
    static let signedFlag: UInt8 = 0x04

    /// The plaintext frame for `data`: flags (size-field length in bits 0–1, bit 2 when signed), the size
    /// in the fewest little-endian bytes, the data, padding so that the whole frame with its signature is
    /// a multiple of 256 (1–256 random bytes), and, when `signer` is given, its signature over the
    /// Keccak-256 of everything before it.
    /// - Parameter padding: fixed padding instead of the rule (test vectors only).
    public static func encode(data: [UInt8], signer: Secp256k1.PrivateKey?, padding: [UInt8]? = nil) -> [UInt8] {
        var size = data.count
        var sizeField: [UInt8] = []
        repeat {
            sizeField.append(UInt8(truncatingIfNeeded: size))
            size >>= 8
        } while size > 0
        var frame: [UInt8] = [UInt8(sizeField.count) | (signer == nil ? 0 : Self.signedFlag)]
        frame += sizeField
        frame += data
        if let padding {
            frame += padding
        } else {
            let raw = frame.count + (signer == nil ? 0 : 65)
            let count = 256 - raw % 256
            frame += SecureRandom.bytes(count)
        }
        if let signer {
            frame += signer.signRecoverable(hash32: Keccak.keccak256(frame))
        }
        return frame
    }

    /// The data of a frame and who signed it (nil when unsigned).
    /// - Throws: when the frame is malformed or its signature cannot be recovered.
    public static func decode(_ frame: [UInt8]) throws(Failure) -> (data: [UInt8], signer: Secp256k1.PublicKey?) {
        guard let flags = frame.first else { throw .malformed }
        var end = frame.count
        var signer: Secp256k1.PublicKey?
        if flags & Self.signedFlag != 0 {
            guard frame.count >= 1 + 65 else { throw .malformed }
            end = frame.count - 65
            guard let key = try? Secp256k1.recover(signature65: Array(frame[end...]), hash32: Keccak.keccak256(Array(frame[..<end]))) else {
                throw .badSignature
            }
            signer = key
        }
        let sizeLength = Int(flags & 0x03)
        guard sizeLength > 0 else { return ([], signer) }
        guard 1 + sizeLength <= end else { throw .malformed }
        var size = 0
        for index in (0..<sizeLength).reversed() { size = size << 8 | Int(frame[1 + index]) }
        let start = 1 + sizeLength
        guard size <= end - start else { throw .malformed }
        return (Array(frame[start..<(start + size)]), signer)
    }

    /// AES-256-GCM with `key`, laid out as Waku does: ciphertext ‖ 16-byte tag ‖ 12-byte nonce.
    /// - Parameter nonce: fixed for test vectors; random when nil.
    public static func sealSymmetric(_ frame: [UInt8], key: [UInt8], nonce: [UInt8]? = nil) throws -> [UInt8] {
        guard key.count == 32, key.contains(where: { $0 != 0 }) else { throw Failure.badKey }
        let gcmNonce = try nonce.map { try AES.GCM.Nonce(data: $0) } ?? AES.GCM.Nonce()
        let box = try AES.GCM.seal(frame, using: SymmetricKey(data: key), nonce: gcmNonce)
        return Array(box.ciphertext) + Array(box.tag) + Array(gcmNonce)
    }

    /// Opens what ``sealSymmetric(_:key:nonce:)`` made.
    public static func openSymmetric(_ sealed: [UInt8], key: [UInt8]) throws -> [UInt8] {
        guard key.count == 32, key.contains(where: { $0 != 0 }) else { throw Failure.badKey }
        guard sealed.count >= 12 + 16 else { throw Failure.malformed }
        let nonce = Array(sealed[(sealed.count - 12)...])
        let tag = Array(sealed[(sealed.count - 28)..<(sealed.count - 12)])
        let ciphertext = Array(sealed[..<(sealed.count - 28)])
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
            return Array(try AES.GCM.open(box, using: SymmetricKey(data: key)))
        } catch {
            throw Failure.authenticationFailed
        }
    }
}
