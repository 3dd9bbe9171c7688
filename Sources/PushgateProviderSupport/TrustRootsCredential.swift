import Foundation
public import NIOSSL
public import PushgateCore

/// The ``ProviderCredential`` of a `ca_file`: how many certificates it holds and when the first of them
/// expires.
public enum TrustRootsCredential {
    /// Reads the PEM file at `path`; nil when it cannot be read (start-up has already refused such a file).
    public static func read(appID: String, path: String) -> ProviderCredential? {
        guard let certificates = try? NIOSSLCertificate.fromPEMFile(path) else { return nil }
        return Self.describe(appID: appID, certificates: certificates, file: path)
    }

    /// Describes certificates already loaded; nil when there are none.
    public static func describe(appID: String, certificates: [NIOSSLCertificate], file: String?) -> ProviderCredential? {
        guard let first = certificates.min(by: { $0.notValidAfter < $1.notValidAfter }) else { return nil }
        let fingerprint = (try? first.toDERBytes()).map { ProviderCredential.fingerprint(of: $0) } ?? "unknown"
        let count = certificates.count == 1 ? "1 certificate" : "\(certificates.count) certificates"
        return ProviderCredential(
            appID: appID, kind: .caFile, file: file,
            identity: "\(count), the first to expire \(fingerprint)",
            notAfter: Date(timeIntervalSince1970: TimeInterval(first.notValidAfter))
        )
    }
}
