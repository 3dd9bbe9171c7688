import SwiftASN1
import X509

/// Finds the topic Apple writes into push certificates: the subject's UID attribute
/// (OID 0.9.2342.19200300.100.1.1).
enum CertificateTopic {
    static let userIDAttributeType: ASN1ObjectIdentifier = [0, 9, 2342, 19_200_300, 100, 1, 1]

    /// The subject's UID, or nil when it has none.
    static func userID(of certificate: Certificate) -> String? {
        for relativeName in certificate.subject {
            for attribute in relativeName where attribute.type == Self.userIDAttributeType {
                if let value = String(attribute.value), !value.isEmpty { return value }
            }
        }
        return nil
    }
}
