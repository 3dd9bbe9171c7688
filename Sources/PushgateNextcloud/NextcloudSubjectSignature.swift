import Crypto
import CryptoExtras
import Foundation
import Synchronization

/// Checks the `signature` of a pushed subject: RSASSA-PKCS1-v1_5 with SHA-512, by the user's key, over
/// the base64-decoded subject bytes (nextcloud/notifications `Push::encryptAndSign`).
///
/// Parsed keys are cached, since one user's key signs every push to each of their devices.
final class NextcloudSubjectSignature: Sendable {
    private let keys = Mutex<[String: _RSA.Signing.PublicKey]>([:])
    private let capacity: Int

    /// Creates a verifier that keeps up to `capacity` parsed keys.
    init(capacity: Int = 4096) {
        self.capacity = capacity
    }

    /// Whether `signature` (base64) signs `subject` (base64) under `publicKeyPEM`; false for any malformed
    /// input.
    func isValid(signature: String, subject: String, publicKeyPEM: String) -> Bool {
        guard let ciphertext = Data(base64Encoded: subject), !ciphertext.isEmpty,
            let signatureBytes = Data(base64Encoded: signature),
            let key = self.key(publicKeyPEM)
        else { return false }
        return key.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signatureBytes), for: SHA512.hash(data: ciphertext), padding: .insecurePKCS1v1_5
        )
    }

    private func key(_ pem: String) -> _RSA.Signing.PublicKey? {
        if let key = self.keys.withLock({ $0[pem] }) { return key }
        guard let key = try? _RSA.Signing.PublicKey(pemRepresentation: pem) else { return nil }
        self.keys.withLock { keys in
            if keys.count >= self.capacity { keys.removeAll(keepingCapacity: true) }
            keys[pem] = key
        }
        return key
    }
}
