import Crypto
import Foundation
import PushgateProviderSupport
public import PushgateCore
import SwiftASN1
import X509

extension APNsConfiguration {
    /// What the app's credentials say about themselves: the client certificate's subject, serial and
    /// `notAfter`, or the signing key's key id, team and public-key fingerprint; and the `ca_file`'s
    /// certificates. Reads the certificate file again (their content was checked when the configuration was read).
    public func credentials() -> [ProviderCredential] {
        var credentials: [ProviderCredential] = []
        switch self.authentication {
        case .token(let key, let keyID, let teamID):
            credentials.append(
                ProviderCredential(
                    appID: self.appID, kind: .apnsKey, file: nil,
                    identity: "key id \(keyID), team \(teamID), key \(ProviderCredential.fingerprint(of: key.publicKey.derRepresentation))",
                    notAfter: nil
                )
            )
        case .certificate(let file):
            if let certificate = Self.clientCertificate(in: file) {
                let serial = certificate.serialNumber.bytes.map { String(format: "%02x", $0) }.joined()
                let der = (try? certificate.serializeAsPEM().derBytes) ?? []
                credentials.append(
                    ProviderCredential(
                        appID: self.appID, kind: .apnsCertificate, file: file,
                        identity: "subject \(Self.subjectText(certificate)), serial \(serial), \(ProviderCredential.fingerprint(of: der))",
                        notAfter: certificate.notValidAfter
                    )
                )
            }
        }
        if let trustRoots = TrustRootsCredential.describe(appID: self.appID, certificates: self.additionalTrustRoots, file: nil) {
            credentials.append(trustRoots)
        }
        return credentials
    }

    /// The subject as `UID=…, CN=…, O=…`, with the names Apple's push certificates use (other
    /// attributes by their OID).
    private static func subjectText(_ certificate: Certificate) -> String {
        let names: [ASN1ObjectIdentifier: String] = [
            CertificateTopic.userIDAttributeType: "UID", .RDNAttributeType.commonName: "CN", .RDNAttributeType.organizationName: "O",
            .RDNAttributeType.organizationalUnitName: "OU", .RDNAttributeType.countryName: "C",
        ]
        return certificate.subject.flatMap { relativeName in
            relativeName.map { attribute in "\(names[attribute.type] ?? "\(attribute.type)")=\(String(attribute.value) ?? "?")" }
        }.joined(separator: ", ")
    }

    private static func clientCertificate(in file: String) -> Certificate? {
        guard let pem = try? String(contentsOfFile: file, encoding: .utf8),
            let document = try? PEMDocument.parseMultiple(pemString: pem).first(where: { $0.discriminator == "CERTIFICATE" })
        else { return nil }
        return try? Certificate(pemDocument: document)
    }
}
