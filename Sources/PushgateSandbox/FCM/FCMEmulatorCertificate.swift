import Crypto
public import Foundation
public import NIOSSL
import SwiftASN1
import X509

/// A self-signed certificate for `localhost`, so the FCM emulator can serve HTTPS that clients trust by
/// adding ``pem`` to their roots (Pushgate's `ca_file`).
public struct FCMEmulatorCertificate: Sendable {
    /// The certificate, PEM.
    public let pem: String
    /// Its P-256 private key, PEM.
    public let privateKeyPEM: String

    /// Generates a certificate valid for a year, for the DNS name `localhost`.
    public init(commonName: String = "Pushgate sandbox FCM", now: Date = Date()) throws {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName(commonName) }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(365 * 24 * 3600),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                KeyUsage(digitalSignature: true, keyCertSign: true)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost")])
            },
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        self.pem = try certificate.serializeAsPEM().pemString
        self.privateKeyPEM = key.pemRepresentation
    }

    /// Writes ``pem`` to `path`, for a client's `ca_file`.
    public func writeCertificate(to path: String) throws {
        try Data(self.pem.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// A server TLS configuration presenting this certificate.
    public func serverTLSConfiguration() throws -> TLSConfiguration {
        let certificate = try NIOSSLCertificate(bytes: Array(self.pem.utf8), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(self.privateKeyPEM.utf8), format: .pem)
        return TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
    }
}
