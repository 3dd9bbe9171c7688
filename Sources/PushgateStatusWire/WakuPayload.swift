import Crypto
import PushgateCore

/// The version-1 Waku payload (26/WAKU2-PAYLOAD, status-wire.md §2.3–2.5) as go-waku and status-go build
/// it: a frame of flags, a little-endian size field, the data, padding and an optional recoverable
/// signature; then sealed with ECIES (to a public key) or AES-256-GCM (with a topic's key).
public enum WakuPayload {
    /// Why a frame or an envelope cannot be read (or a key is unusable).
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// Too short, or a size field that runs past the data's room.
        case malformed
        /// The signature bit is set but no key recovers from the signature.
        case badSignature
        /// A symmetric key that is not 32 bytes or is all zero.
        case badKey
        /// The AES-GCM tag does not match: not for this key, or altered.
        case authenticationFailed

        public var description: String {
            switch self {
            case .malformed: "not a Waku version-1 payload frame"
            case .badSignature: "the Waku payload's signature does not recover a key"
            case .badKey: "a Waku symmetric key must be 32 bytes and not all zero"
            case .authenticationFailed: "the Waku payload does not open with this key"
            }
        }
    }

    /// The flag bit for a signature.
    static let signedFlag: UInt8 = 0x04
    /// The flag bits holding the size field's length.
    static let sizeMask: UInt8 = 0x03
    /// Padding rounds the frame (signature included) up to a multiple of this.
    static let paddingBlock = 256
    static let signatureLength = 65

    /// The plaintext frame for `data`: flags (size-field length in bits 0–1, bit 2 when signed), the size
    /// in the fewest little-endian bytes, the data, padding so that the whole frame with its signature is a
    /// multiple of 256 (1–256 random bytes), and, when `signer` is given, its recoverable signature over
    /// the Keccak-256 of everything before it (flag bit 2 already set).
    /// - Parameter padding: fixed padding instead of the rule (test vectors only; empty means the rule,
    ///   as in go-waku).
    public static func encode(data: [UInt8], signer: Secp256k1.PrivateKey?, padding: [UInt8]? = nil) -> [UInt8] {
        var size = data.count
        var sizeField: [UInt8] = []
        repeat {
            sizeField.append(UInt8(truncatingIfNeeded: size))
            size >>= 8
        } while size > 0
        let signatureLength = signer == nil ? 0 : Self.signatureLength
        var frame: [UInt8] = []
        frame.reserveCapacity(1 + sizeField.count + data.count + Self.paddingBlock + signatureLength)
        // A 4-byte size field (16 MiB and more) would spill into the signature bit, as go-waku's does.
        frame.append(UInt8(sizeField.count) | (signer == nil ? 0 : Self.signedFlag))
        frame += sizeField
        frame += data
        if let padding, !padding.isEmpty {
            frame += padding
        } else {
            let unpadded = frame.count + signatureLength
            frame += SecureRandomPool.shared.bytes(Self.paddingBlock - unpadded % Self.paddingBlock)
        }
        if let signer {
            frame += signer.signRecoverable(hash32: Keccak.keccak256(frame))
        }
        return frame
    }

    /// The data of a frame and who signed it (nil when unsigned), by go-waku's `validateAndParse`: when
    /// bit 2 is set the last 65 bytes are the signature, at least 2 bytes must precede it and the signer
    /// must recover from the Keccak-256 of those; a size-field length (`flags & 3`) of 0 means no data;
    /// the data must fit before the signature; what follows it is padding; other flag bits are ignored.
    public static func decode(_ frame: [UInt8]) throws(Failure) -> (data: [UInt8], signer: Secp256k1.PublicKey?) {
        guard let flags = frame.first else { throw .malformed }
        var end = frame.count
        var signer: Secp256k1.PublicKey?
        if flags & Self.signedFlag != 0 {
            end -= Self.signatureLength
            guard end > 1 else { throw .malformed }
            guard let key = try? Secp256k1.recover(signature65: Array(frame[end...]), hash32: Keccak.keccak256(frame[..<end])) else {
                throw .badSignature
            }
            signer = key
        }
        let sizeLength = Int(flags & Self.sizeMask)
        guard sizeLength > 0 else { return ([], signer) }
        let start = 1 + sizeLength
        guard start <= end else { throw .malformed }
        var size = 0
        for index in (1..<start).reversed() { size = size << 8 | Int(frame[index]) }
        guard size <= end - start else { throw .malformed }
        return (Array(frame[start..<(start + size)]), signer)
    }

    /// ECIES around a frame, to `recipient` (go-waku's asymmetric encryption; status-wire.md §2.5).
    /// - Throws: ``Secp256k1/Unavailable`` without libsecp256k1.
    public static func sealAsymmetric(_ frame: [UInt8], to recipient: Secp256k1.PublicKey) throws -> [UInt8] {
        try ECIES.encrypt(frame, to: recipient)
    }

    /// Opens what ``sealAsymmetric(_:to:)`` made for `privateKey`, giving the frame back.
    /// - Throws: ``ECIES/Failure`` when it is not for this key or was altered.
    public static func openAsymmetric(_ sealed: [UInt8], with privateKey: Secp256k1.PrivateKey) throws -> [UInt8] {
        try ECIES.decrypt(sealed, with: privateKey)
    }

    /// AES-256-GCM with a topic's `key` and no associated data, laid out as go-waku does: ciphertext ‖
    /// 16-byte tag ‖ 12-byte nonce (the nonce at the END).
    /// - Parameter nonce: fixed for test vectors; random when nil.
    /// - Throws: ``Failure/badKey`` for a key that is not 32 bytes or is all zero.
    public static func sealSymmetric(_ frame: [UInt8], key: [UInt8], nonce: [UInt8]? = nil) throws -> [UInt8] {
        guard key.count == 32, key.contains(where: { $0 != 0 }) else { throw Failure.badKey }
        let gcmNonce = try AES.GCM.Nonce(data: nonce ?? SecureRandomPool.shared.bytes(12))
        let box = try AES.GCM.seal(frame, using: SymmetricKey(data: key), nonce: gcmNonce)
        return Array(box.ciphertext) + Array(box.tag) + Array(gcmNonce)
    }

    /// Opens what ``sealSymmetric(_:key:nonce:)`` (or go-waku) made, giving the frame back.
    /// - Throws: ``Failure/badKey``, ``Failure/malformed`` (shorter than nonce and tag), or
    ///   ``Failure/authenticationFailed``.
    public static func openSymmetric(_ sealed: [UInt8], key: [UInt8]) throws -> [UInt8] {
        guard key.count == 32, key.contains(where: { $0 != 0 }) else { throw Failure.badKey }
        guard sealed.count >= 12 + 16 else { throw Failure.malformed }
        let nonceStart = sealed.count - 12
        let tagStart = nonceStart - 16
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: sealed[nonceStart...]), ciphertext: sealed[..<tagStart], tag: sealed[tagStart..<nonceStart])
            return Array(try AES.GCM.open(box, using: SymmetricKey(data: key)))
        } catch {
            throw Failure.authenticationFailed
        }
    }
}
