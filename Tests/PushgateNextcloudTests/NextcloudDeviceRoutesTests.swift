import _CryptoExtras
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PushgateConfig
import PushgateHTTP
import PushgateNextcloud
import PushgateServer
import PushgateStore
import PushgateStoreSQLite
import PushgateTestSupport
import Testing

/// A Nextcloud user's key and a device identifier, made exactly as nextcloud/notifications makes them:
/// the identifier is base64(SHA-512(raw JSON)) and the signature is PKCS#1 v1.5 / SHA-512 over the raw JSON.
///
/// Every user has a key of its own, generated with ``OffPool`` away from the pool that runs the tests' servers.
struct NextcloudUser {
    let key: _RSA.Signing.PrivateKey
    let raw: String

    init(cloudID: String = "alice@cloud.example.com", tokenID: Int = 4242) async throws {
        self.key = try await OffPool.run { try _RSA.Signing.PrivateKey(keySize: .bits2048) }
        self.raw = #"["\#(cloudID)",\#(tokenID)]"#
    }

    /// The identifier `cloudID` and `tokenID` make, signed with `other`'s key: what anyone can send for
    /// an identifier they can guess.
    init(cloudID: String, tokenID: Int, key other: NextcloudUser) {
        self.key = other.key
        self.raw = #"["\#(cloudID)",\#(tokenID)]"#
    }

    var deviceIdentifier: String { Data(SHA512.hash(data: Data(self.raw.utf8))).base64EncodedString() }
    var signature: String {
        (try? self.key.signature(for: SHA512.hash(data: Data(self.raw.utf8)), padding: .insecurePKCS1v1_5).rawRepresentation.base64EncodedString()) ?? ""
    }
    var publicKey: String { self.key.publicKey.pemRepresentation }

    /// The form a client posts; `+`, `/` and `=` percent-encoded as HTTP libraries do.
    func form(pushToken: String? = nil, signature: String? = nil, extra: [String: String] = [:]) -> String {
        var fields = ["deviceIdentifier": self.deviceIdentifier, "deviceIdentifierSignature": signature ?? self.signature, "userPublicKey": self.publicKey]
        if let pushToken { fields["pushToken"] = pushToken }
        fields.merge(extra) { _, new in new }
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
            .joined(separator: "&")
    }
}

@Suite("Nextcloud /devices")
struct NextcloudDeviceRoutesTests {
    static let quiet: Logger = {
        var logger = Logger(label: "pushgate.tests")
        logger.logLevel = .critical
        return logger
    }()

    static let settings: NextcloudSettings = {
        let configuration = try! GatewayConfiguration(yaml: """
            nextcloud:
              fcm_app: files.android
              apns_app: files.ios
              apns_voip_app: files.ios.voip
              routes:
                - {user_agent: '\\(iOS\\) Nextcloud-Talk', app: talk.ios, voip_app: talk.ios.voip}
                - {user_agent: 'Nextcloud-android/', app: files.android.routed}
            """)
        return configuration.nextcloud
    }()

    static func withProxy(
        identityProof: NextcloudSettings.IdentityProof = .init(),
        _ body: @Sendable (any TestClientProtocol, any PushStore) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        let store = try await SQLiteStore.open(path: directory.path("store.sqlite"), logger: Self.quiet)
        let routes = NextcloudDeviceRoutes(
            store: store, router: NextcloudAppRouter(settings: Self.settings), pathPrefix: "",
            identityProof: NextcloudIdentityProof(settings: identityProof), logger: Self.quiet
        )
        let router = GatewayRouterBuilder.build(routes: routes.routes, metrics: GatewayMetrics(), maxRequestBodySize: 1 << 20)
        var app = Application(router: router, logger: Self.quiet)
        app.addServices(store)
        try await app.test(.router) { client in try await body(client, store) }
    }

    static func post(_ client: any TestClientProtocol, _ form: String, userAgent: String = "Mozilla/5.0 (Android) Nextcloud-Talk v18.0.0") async throws -> HTTPResponse.Status {
        try await client.execute(
            uri: "/devices?format=json", method: .post,
            headers: [.contentType: "application/x-www-form-urlencoded", .userAgent: userAgent], body: ByteBuffer(string: form)
        ).status
    }

    /// `'Nextcloud-Talk'` matches Talk Android's User-Agent as well as Talk iOS's: a route to an APNs app
    /// is passed over for an FCM token (and the other way round), which goes to the default app of its
    /// platform. Stored under the APNs app, its first push would find it invalid, and the device would be
    /// deleted and reported unknown to its server.
    @Test func aRouteIsTakenOnlyByTokensOfItsAppsPlatform() throws {
        let settings = try GatewayConfiguration(yaml: """
            apps:
              talk.ios: {type: apns, topic: com.example.talk, keyfile: k, key_id: K, team_id: T}
              talk.android: {type: gcm, project_id: p, service_account_file: s}
              files.android: {type: gcm, project_id: p, service_account_file: s}
            nextcloud:
              fcm_app: files.android
              routes:
                - {user_agent: 'Nextcloud-Talk', app: talk.ios}
                - {user_agent: 'Nextcloud-Talk', app: talk.android}
            """).nextcloud
        let router = NextcloudAppRouter(settings: settings, apnsApps: ["talk.ios"])
        #expect(router.choose(userAgent: "Mozilla/5.0 (Android) Nextcloud-Talk v18.0.0", pushToken: "fGx1:APA91bH-example")?.app == "talk.android")
        #expect(router.choose(userAgent: "Mozilla/5.0 (iOS) Nextcloud-Talk v20.1", pushToken: "AB12CD34")?.app == "talk.ios")
        let onlyIOSRoute = try GatewayConfiguration(yaml: """
            apps:
              talk.ios: {type: apns, topic: com.example.talk, keyfile: k, key_id: K, team_id: T}
              files.android: {type: gcm, project_id: p, service_account_file: s}
            nextcloud:
              fcm_app: files.android
              routes: [{user_agent: 'Nextcloud-Talk', app: talk.ios}]
            """).nextcloud
        #expect(
            NextcloudAppRouter(settings: onlyIOSRoute, apnsApps: ["talk.ios"]).choose(userAgent: "Mozilla/5.0 (Android) Nextcloud-Talk v18.0.0", pushToken: "fGx1:APA91bH-example")?.app
                == "files.android")
    }

    @Test func registrationStoresTheDeviceWithTheAppItsTokenAndClientCallFor() async throws {
        let user = try await NextcloudUser()
        try await Self.withProxy { client, store async throws in
            let fcmToken = "fGx1:APA91bH-example_token"
            #expect(try await Self.post(client, user.form(pushToken: fcmToken, extra: ["http.useragent": "matches no route"])) == .ok)
            let stored = try #require(try await store.device(namespace: "nextcloud", deviceID: user.deviceIdentifier))
            #expect(stored.appID == "files.android")
            #expect(stored.pushToken == fcmToken)
            #expect(stored.publicKey == user.publicKey)

            // Talk iOS: "<APNs hex> <PushKit hex>", routed by its User-Agent; the token is kept exactly.
            let talk = try await NextcloudUser(cloudID: "bob@cloud.example.com", tokenID: 7)
            let pair = "AB12CD34 EF56AB78"
            #expect(try await Self.post(client, talk.form(pushToken: pair), userAgent: "Mozilla/5.0 (iOS) Nextcloud-Talk v20.1 (Strict VoIP)") == .ok)
            let talkDevice = try #require(try await store.device(namespace: "nextcloud", deviceID: talk.deviceIdentifier))
            #expect(talkDevice.appID == "talk.ios")
            #expect(talkDevice.attributes["voip_app"] == "talk.ios.voip")
            #expect(talkDevice.pushToken == pair)

            // iOS Files: one hex token, default APNs app, no VoIP.
            let files = try await NextcloudUser(cloudID: "carol@cloud.example.com", tokenID: 9)
            #expect(try await Self.post(client, files.form(pushToken: "0A1B2C3D"), userAgent: "Mozilla/5.0 (iOS) Nextcloud-iOS/5.0  (Strict VoIP)") == .ok)
            let filesDevice = try #require(try await store.device(namespace: "nextcloud", deviceID: files.deviceIdentifier))
            #expect(filesDevice.appID == "files.ios")
            #expect(filesDevice.attributes["voip_app"] == nil)

            // The same user key may register again with a new token.
            #expect(try await Self.post(client, user.form(pushToken: "new:token")) == .ok)
            #expect(try await store.device(namespace: "nextcloud", deviceID: user.deviceIdentifier)?.pushToken == "new:token")
        }
    }

    /// Android Files sends its User-Agent as a form field, `http.useragent`, and its HTTP library's as the
    /// header (android-library's `RegisterAccountDeviceForProxyOperation`): a route for it matches the
    /// field; a route the header matches wins.
    @Test func androidFilesIsRoutedByTheUserAgentItSendsAsAFormField() async throws {
        let files = try await NextcloudUser(cloudID: "dora@cloud.example.com", tokenID: 11)
        let talk = try await NextcloudUser(cloudID: "emil@cloud.example.com", tokenID: 12)
        try await Self.withProxy { client, store async throws in
            let field = ["http.useragent": "Mozilla/5.0 (Android) Nextcloud-android/3.30.0"]
            #expect(try await Self.post(client, files.form(pushToken: "fcm:files", extra: field), userAgent: "Jakarta Commons-HttpClient/3.1") == .ok)
            #expect(try await store.device(namespace: "nextcloud", deviceID: files.deviceIdentifier)?.appID == "files.android.routed")
            #expect(try await Self.post(client, talk.form(pushToken: "AB12 CD34", extra: field), userAgent: "Mozilla/5.0 (iOS) Nextcloud-Talk v20.1") == .ok)
            #expect(try await store.device(namespace: "nextcloud", deviceID: talk.deviceIdentifier)?.appID == "talk.ios")
        }
    }

    @Test func forgedOrMalformedRegistrationsChangeNothing() async throws {
        let user = try await NextcloudUser()
        let intruder = try await NextcloudUser(cloudID: "mallory@evil.example", tokenID: 1)
        try await Self.withProxy { client, store async throws in
            #expect(try await Self.post(client, user.form(pushToken: "owner:token")) == .ok)
            // A replayed foreign identifier with the intruder's own key and signature.
            let foreign = intruder.form(pushToken: "intruder:token").replacingOccurrences(
                of: "deviceIdentifier=" + (intruder.deviceIdentifier.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""),
                with: "deviceIdentifier=" + (user.deviceIdentifier.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            )
            // The intruder cannot sign the owner's identifier: refused as a bad signature.
            #expect(try await Self.post(client, foreign) == .badRequest)
            let otherSignature = try await NextcloudUser()
            #expect(try await Self.post(client, user.form(pushToken: "x:y", signature: otherSignature.signature)) == .badRequest)
            #expect(try await Self.post(client, "deviceIdentifier=abc&pushToken=t") == .badRequest)
            #expect(try await Self.post(client, user.form(pushToken: "")) == .badRequest)
            #expect(try await Self.post(client, "%%%") == .badRequest)
            // A token no provider issues: a NUL (PostgreSQL's text refuses it), or over 1,024 bytes.
            #expect(try await Self.post(client, user.form(pushToken: "owner\u{0}token")) == .badRequest)
            #expect(try await Self.post(client, user.form(pushToken: String(repeating: "t", count: 1_025))) == .badRequest)
            #expect(try await Self.post(client, user.form(pushToken: String(repeating: "t", count: 1_024))) == .ok)
            #expect(try await Self.post(client, user.form(pushToken: "owner:token")) == .ok)
            #expect(try await store.device(namespace: "nextcloud", deviceID: user.deviceIdentifier)?.pushToken == "owner:token")
            #expect(try await store.deviceCount(namespace: "nextcloud") == 1)
        }
    }

    @Test func anIdentifierRegisteredUnderAnotherKeyIsAConflict() async throws {
        // Same raw identifier (same cloud id and token id), two different user keys: a reinstalled app.
        let first = try await NextcloudUser(cloudID: "dave@cloud.example.com", tokenID: 1)
        let second = try await NextcloudUser(cloudID: "dave@cloud.example.com", tokenID: 1)
        #expect(first.deviceIdentifier == second.deviceIdentifier)
        try await Self.withProxy { client, store async throws in
            #expect(try await Self.post(client, first.form(pushToken: "first:token")) == .ok)
            #expect(try await Self.post(client, second.form(pushToken: "second:token")) == .conflict)
            #expect(try await store.device(namespace: "nextcloud", deviceID: first.deviceIdentifier)?.pushToken == "first:token")
        }
    }

    @Test func unregisteringTakesTheQueryStringOrABodyAndTheOwnersKey() async throws {
        let user = try await NextcloudUser()
        let other = try await NextcloudUser(cloudID: "alice@cloud.example.com", tokenID: 4242)
        try await Self.withProxy { client, store async throws in
            #expect(try await Self.post(client, user.form(pushToken: "t:1")) == .ok)
            // Another key for the same identifier: 403, still registered.
            #expect(try await client.execute(uri: "/devices?" + other.form(), method: .delete).status == .forbidden)
            #expect(try await store.device(namespace: "nextcloud", deviceID: user.deviceIdentifier) != nil)
            // Talk clients send the fields as a query string.
            #expect(try await client.execute(uri: "/devices?" + user.form(), method: .delete).status == .ok)
            #expect(try await store.device(namespace: "nextcloud", deviceID: user.deviceIdentifier) == nil)
            // Gone now: 403. Android Files sends a form body on DELETE.
            #expect(try await client.execute(
                uri: "/devices", method: .delete, headers: [.contentType: "application/x-www-form-urlencoded"], body: ByteBuffer(string: user.form())
            ).status == .forbidden)
            #expect(try await client.execute(uri: "/devices?deviceIdentifier=zzz", method: .delete).status == .badRequest)
        }
    }
}
