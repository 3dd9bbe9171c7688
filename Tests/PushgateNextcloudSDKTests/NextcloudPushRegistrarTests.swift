import Crypto
import CryptoExtras
import Foundation
import PushgateNextcloudSDK
import PushgateTestSupport
import Testing

/// Registration and unregistration over `URLSession` against ``NextcloudEmulator``.
@Suite("Registration over HTTP")
struct NextcloudPushRegistrarTests {
    /// A push token with every character form encoding can get wrong.
    static let pushToken = "fcm:APA91b+x/y=z&w 1~ü%41"
    static let userAgent = "Mozilla/5.0 (Android) Nextcloud-android/3.30.0"

    func credentials(_ emulator: NextcloudEmulator, port: Int, appPassword: String? = nil) -> NextcloudCredentials {
        NextcloudCredentials(
            server: URL(string: "http://127.0.0.1:\(port)\(NextcloudEmulator.basePath)/")!, login: emulator.login,
            appPassword: appPassword ?? emulator.appPassword
        )
    }

    @Test func registersAtTheServerAndTheProxyThenUnregisters() async throws {
        let emulator = try await NextcloudEmulator()
        let deviceKey = try await OffPool.run { try NextcloudDeviceKey() }
        try await emulator.serve { port in
            let credentials = self.credentials(emulator, port: port)
            let proxy = URL(string: "http://localhost:\(port)/")!
            let registrar = NextcloudPushRegistrar(userAgent: Self.userAgent)

            let registration = try await registrar.register(pushToken: Self.pushToken, deviceKey: deviceKey, proxyServer: proxy, credentials: credentials)
            #expect(registration.userPublicKey == emulator.userPublicKeyPEM)
            #expect(registration.deviceIdentifier == emulator.deviceIdentifier)
            #expect(registration.deviceIdentifierSignature == emulator.deviceIdentifierSignature)
            #expect(registration.proxyServer == proxy)

            // The server saw basic auth, the OCS marker, the user agent and the three form fields.
            let ocs = try #require(emulator.requests("POST", NextcloudEmulator.pushPath).first)
            #expect(ocs.query == "format=json")
            #expect(ocs.headers["user-agent"] == Self.userAgent)
            #expect(ocs.headers["ocs-apirequest"] == "true")
            #expect(ocs.fields == [
                "pushTokenHash": pushTokenHash(Self.pushToken),
                "devicePublicKey": deviceKey.publicKeyPEM(),
                "proxyServer": "http://localhost:\(port)/",
            ])

            // The proxy got the four fields byte for byte: `+`, `/`, `=` of base64 and the PEM's newlines.
            let devices = try #require(emulator.requests("POST", "/devices").first)
            #expect(devices.headers["content-type"]?.hasPrefix("application/x-www-form-urlencoded") == true)
            #expect(devices.headers["user-agent"] == Self.userAgent)
            #expect(devices.fields == [
                "pushToken": Self.pushToken,
                "deviceIdentifier": emulator.deviceIdentifier,
                "deviceIdentifierSignature": emulator.deviceIdentifierSignature,
                "userPublicKey": emulator.userPublicKeyPEM,
            ])
            for encoded in ["%2B", "%2F", "%3D", "%0A", "%20", "%26", "%25", "%C3%BC"] {
                #expect(devices.body.contains(encoded))
            }
            #expect(!devices.body.contains("+"))
            #expect(!devices.body.contains("/"))

            // Registering the same again: the server answers 200, and the device still goes to the proxy.
            _ = try await registrar.register(pushToken: Self.pushToken, deviceKey: deviceKey, proxyServer: proxy, credentials: credentials)
            #expect(emulator.requests("POST", "/devices").count == 2)
            // The 450-byte form is accepted too.
            _ = try await registrar.register(
                pushToken: Self.pushToken, deviceKey: deviceKey, proxyServer: proxy, credentials: credentials, publicKeyTrailingNewline: false
            )
            #expect(emulator.requests("POST", NextcloudEmulator.pushPath).last?.fields?["devicePublicKey"] == deviceKey.publicKeyPEM(trailingNewline: false))

            // A push the emulated server makes for this registration decodes with what the device kept.
            let plaintext = #"{"nid":42,"app":"spreed","subject":"Hi","type":"chat","id":"t0k3n"}"#
            let ciphertext = try _RSA.Encryption.PublicKey(pemRepresentation: deviceKey.publicKeyPEM()).encrypt(Data(plaintext.utf8), padding: .PKCS1_OAEP)
            let signature = try emulator.userKey.signature(for: SHA512.hash(data: ciphertext), padding: .insecurePKCS1v1_5)
            let account = try NextcloudPushAccount(identifier: "alice", registration: registration, deviceKey: deviceKey)
            let push = try NextcloudPushDecoder(accounts: [account]).decode(
                subject: ciphertext.base64EncodedString(), signature: signature.rawRepresentation.base64EncodedString()
            )
            #expect(push.message == .notification(.init(app: "spreed", type: "chat", subject: "Hi", id: "t0k3n", nid: 42)))

            // Unregistering: the server deletes (202), then the proxy gets DELETE with the three fields in the body.
            #expect(try await registrar.unregister(registration: registration, credentials: credentials) == .deleted)
            let deleted = try #require(emulator.requests("DELETE", "/devices").first)
            #expect(deleted.fields == [
                "deviceIdentifier": emulator.deviceIdentifier,
                "deviceIdentifierSignature": emulator.deviceIdentifierSignature,
                "userPublicKey": emulator.userPublicKeyPEM,
            ])
            #expect(emulator.requests("DELETE", NextcloudEmulator.pushPath).first?.headers["ocs-apirequest"] == "true")
            // Nothing registered any more: the server answers 200, which is fine too.
            #expect(try await registrar.unregister(registration: registration, credentials: credentials) == .notRegistered)
            #expect(emulator.requests("DELETE", "/devices").count == 2)
        }
    }

    @Test func theStoredRegistrationSurvivesCoding() throws {
        let registration = NextcloudPushRegistration(
            userPublicKey: "-----BEGIN PUBLIC KEY-----\nAB+/\n-----END PUBLIC KEY-----\n", deviceIdentifier: "a+b/c==",
            deviceIdentifierSignature: "s+/=", proxyServer: URL(string: "https://push.example.com/")!
        )
        let decoded = try JSONDecoder().decode(NextcloudPushRegistration.self, from: JSONEncoder().encode(registration))
        #expect(decoded == registration)
    }

    @Test func aWrongAppPasswordIsUnauthorizedAndTheProxyIsNotAsked() async throws {
        let emulator = try await NextcloudEmulator()
        let deviceKey = try await OffPool.run { try NextcloudDeviceKey() }
        try await emulator.serve { port in
            let error = await #expect(throws: NextcloudRegistrationError.self) {
                try await NextcloudPushRegistrar().register(
                    pushToken: Self.pushToken, deviceKey: deviceKey, proxyServer: URL(string: "https://push.example.com")!,
                    credentials: self.credentials(emulator, port: port, appPassword: "wrong")
                )
            }
            guard case .unauthorized = error else {
                Issue.record("expected unauthorized, got \(String(describing: error))")
                return
            }
            #expect(emulator.requests("POST", "/devices").isEmpty)
        }
    }

    @Test func aServerRefusalCarriesTheOCSMessage() async throws {
        let emulator = try await NextcloudEmulator()
        let deviceKey = try await OffPool.run { try NextcloudDeviceKey() }
        try await emulator.serve { port in
            let registrar = NextcloudPushRegistrar()
            // Plain http needs a '/' after host and port; the server refuses the URL without it.
            let refusedProxy = await #expect(throws: NextcloudRegistrationError.self) {
                try await registrar.register(
                    pushToken: Self.pushToken, deviceKey: deviceKey, proxyServer: URL(string: "http://localhost:\(port)")!,
                    credentials: self.credentials(emulator, port: port)
                )
            }
            guard case .rejectedByServer(400, "INVALID_PROXY_SERVER") = refusedProxy else {
                Issue.record("expected INVALID_PROXY_SERVER, got \(String(describing: refusedProxy))")
                return
            }

            emulator.configure { $0.forcedRefusal = "INVALID_PUSHTOKEN_HASH" }
            let refusedHash = await #expect(throws: NextcloudRegistrationError.self) {
                try await registrar.register(
                    pushToken: Self.pushToken, deviceKey: deviceKey, proxyServer: URL(string: "https://push.example.com/")!,
                    credentials: self.credentials(emulator, port: port)
                )
            }
            guard case .rejectedByServer(400, "INVALID_PUSHTOKEN_HASH") = refusedHash else {
                Issue.record("expected INVALID_PUSHTOKEN_HASH, got \(String(describing: refusedHash))")
                return
            }
            #expect(emulator.requests("POST", "/devices").isEmpty)
        }
    }

    @Test(arguments: [400, 403, 409, 201, 204, 500])
    func anythingButExactly200FromTheProxyIsAnError(status: Int) async throws {
        let emulator = try await NextcloudEmulator()
        emulator.configure { $0.proxyStatus = status }
        let deviceKey = try await OffPool.run { try NextcloudDeviceKey() }
        try await emulator.serve { port in
            let registrar = NextcloudPushRegistrar()
            let credentials = self.credentials(emulator, port: port)
            let proxy = URL(string: "http://localhost:\(port)/")!
            let registering = await #expect(throws: NextcloudRegistrationError.self) {
                try await registrar.register(pushToken: Self.pushToken, deviceKey: deviceKey, proxyServer: proxy, credentials: credentials)
            }
            guard case .rejectedByProxy(status) = registering else {
                Issue.record("expected rejectedByProxy(\(status)), got \(String(describing: registering))")
                return
            }
            let registration = NextcloudPushRegistration(
                userPublicKey: emulator.userPublicKeyPEM, deviceIdentifier: emulator.deviceIdentifier,
                deviceIdentifierSignature: emulator.deviceIdentifierSignature, proxyServer: proxy
            )
            let unregistering = await #expect(throws: NextcloudRegistrationError.self) {
                try await registrar.unregister(registration: registration, credentials: credentials)
            }
            guard case .rejectedByProxy(status) = unregistering else {
                Issue.record("expected rejectedByProxy(\(status)), got \(String(describing: unregistering))")
                return
            }
        }
    }
}
