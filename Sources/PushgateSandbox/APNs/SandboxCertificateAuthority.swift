import Crypto
public import Foundation
public import NIOSSL
import SwiftASN1
import X509

/// A throw-away certificate authority for the emulators: a P-256 CA and a server certificate for
/// `127.0.0.1` and `localhost` signed by it, made at start-up with swift-certificates.
///
/// Clients trust ``caCertificatePEM`` (Pushgate's `ca_file`); the emulator serves
/// ``serverCertificatePEM`` with ``serverPrivateKeyPEM`` (see ``makeServerTLSConfiguration()``), and
/// accepts client certificates it issued with ``issueClientCertificate(userID:)``.
public struct SandboxCertificateAuthority: Sendable {
    /// The CA certificate, PEM: the trust anchor clients add.
    public let caCertificatePEM: String
    /// The server certificate (SANs `localhost` and `127.0.0.1`), PEM.
    public let serverCertificatePEM: String
    /// The server's private key, PKCS#8 PEM.
    public let serverPrivateKeyPEM: String

    private let caKey: P256.Signing.PrivateKey
    private let caCertificate: Certificate
    private let validity: ClosedRange<Date>

    /// The UID attribute (OID 0.9.2342.19200300.100.1.1), where Apple puts an app's bundle id in push
    /// certificates.
    static let userIDAttributeType: ASN1ObjectIdentifier = [0, 9, 2342, 19_200_300, 100, 1, 1]

    /// Generates a CA valid for `validity` (from an hour ago) and a server certificate it signed.
    /// The default, a year, lies beyond the gateway's earliest expiry warning (30 days), so a gateway
    /// that trusts the sandbox's CA does not warn about it.
    /// - Parameter commonName: the CA's common name.
    public init(commonName: String = "Pushgate Sandbox CA", validity: TimeInterval = 365 * 24 * 3600) throws {
        let notBefore = Date().addingTimeInterval(-3600)
        let notAfter = notBefore.addingTimeInterval(validity + 3600)

        let caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName {
            OrganizationName("Pushgate")
            CommonName(commonName)
        }
        let caCertificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: .init(caKey.publicKey),
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: caName,
            subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(caKey)
        )

        let serverKey = P256.Signing.PrivateKey()
        let serverCertificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: .init(serverKey.publicKey),
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: caName,
            subject: try DistinguishedName {
                OrganizationName("Pushgate")
                CommonName("localhost")
            },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([
                    .dnsName("localhost"),
                    .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                ])
            },
            issuerPrivateKey: .init(caKey)
        )

        self.caKey = caKey
        self.caCertificate = caCertificate
        self.validity = notBefore...notAfter
        self.caCertificatePEM = try caCertificate.serializeAsPEM().pemString
        self.serverCertificatePEM = try serverCertificate.serializeAsPEM().pemString
        self.serverPrivateKeyPEM = serverKey.pemRepresentation
    }

    /// Issues a client certificate like Apple's push certificates: the subject's UID is `userID` (the
    /// bundle id). Returns the certificate's PEM followed by its key's PEM, the form of Sygnal's
    /// `certfile`.
    public func issueClientCertificate(userID: String) throws -> String {
        let key = P256.Signing.PrivateKey()
        let subject = DistinguishedName([
            RelativeDistinguishedName(RelativeDistinguishedName.Attribute(type: Self.userIDAttributeType, utf8String: userID)),
            RelativeDistinguishedName(RelativeDistinguishedName.Attribute(type: .RDNAttributeType.commonName, utf8String: "Apple Push Services: \(userID)")),
        ])
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: .init(key.publicKey),
            notValidBefore: self.validity.lowerBound,
            notValidAfter: self.validity.upperBound,
            issuer: self.caCertificate.subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.clientAuth])
            },
            issuerPrivateKey: .init(self.caKey)
        )
        return try certificate.serializeAsPEM().pemString + "\n" + key.pemRepresentation + "\n"
    }

    /// The UID in the subject of a DER certificate, or nil.
    static func userID(ofDER bytes: [UInt8]) -> String? {
        guard let certificate = try? Certificate(derEncoded: bytes) else { return nil }
        for relativeName in certificate.subject {
            for attribute in relativeName where attribute.type == Self.userIDAttributeType {
                return String(attribute.value)
            }
        }
        return nil
    }

    /// A NIOSSL server configuration presenting the server certificate.
    public func makeServerTLSConfiguration() throws -> TLSConfiguration {
        let certificates = try NIOSSLCertificate.fromPEMBytes(Array(self.serverCertificatePEM.utf8))
        let key = try NIOSSLPrivateKey(bytes: Array(self.serverPrivateKeyPEM.utf8), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: certificates.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
        // Client certificates are optional (token authentication has none) but must chain to this CA.
        configuration.certificateVerification = .optionalVerification
        configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(self.caCertificatePEM.utf8)))
        return configuration
    }
}
