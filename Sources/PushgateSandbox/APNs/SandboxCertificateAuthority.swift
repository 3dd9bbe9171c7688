import Crypto
public import Foundation
public import NIOSSL
import SwiftASN1
import X509

/// A throw-away certificate authority for the emulators: a P-256 CA and a server certificate for
/// `127.0.0.1` and `localhost` signed by it, made at start-up with swift-certificates.
///
/// Clients trust ``caCertificatePEM`` (Pushgate's `ca_file`); the emulator serves
/// ``serverCertificatePEM`` with ``serverPrivateKeyPEM`` (see ``makeServerTLSConfiguration()``).
public struct SandboxCertificateAuthority: Sendable {
    /// The CA certificate, PEM: the trust anchor clients add.
    public let caCertificatePEM: String
    /// The server certificate (SANs `localhost` and `127.0.0.1`), PEM.
    public let serverCertificatePEM: String
    /// The server's private key, PKCS#8 PEM.
    public let serverPrivateKeyPEM: String

    /// Generates a CA valid for `validity` (from an hour ago) and a server certificate it signed.
    /// - Parameter commonName: the CA's common name.
    public init(commonName: String = "Pushgate Sandbox CA", validity: TimeInterval = 7 * 24 * 3600) throws {
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

        self.caCertificatePEM = try caCertificate.serializeAsPEM().pemString
        self.serverCertificatePEM = try serverCertificate.serializeAsPEM().pemString
        self.serverPrivateKeyPEM = serverKey.pemRepresentation
    }

    /// A NIOSSL server configuration presenting the server certificate.
    public func makeServerTLSConfiguration() throws -> TLSConfiguration {
        let certificates = try NIOSSLCertificate.fromPEMBytes(Array(self.serverCertificatePEM.utf8))
        let key = try NIOSSLPrivateKey(bytes: Array(self.serverPrivateKeyPEM.utf8), format: .pem)
        return TLSConfiguration.makeServerConfiguration(
            certificateChain: certificates.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
    }
}
