import X509

/// Finds the topic Apple writes into push certificates: the subject's UID attribute
/// (OID 0.9.2342.19200300.100.1.1).
enum CertificateTopic {
    static let userIDPrefixes = ["UID=", "0.9.2342.19200300.100.1.1="]

    /// The subject's UID, or nil when it has none.
    static func userID(of certificate: Certificate) -> String? {
        for relativeName in certificate.subject {
            for attribute in relativeName {
                let text = String(describing: attribute)
                for prefix in Self.userIDPrefixes where text.hasPrefix(prefix) {
                    let value = String(describing: attribute.value)
                    return value.isEmpty ? nil : value
                }
            }
        }
        return nil
    }
}
