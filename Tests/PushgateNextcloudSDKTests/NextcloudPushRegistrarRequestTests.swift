import Foundation
import PushgateNextcloudSDK
import PushgateTestSupport
import Synchronization
import Testing

/// The exact requests the registrar builds, and how it reads answers, through a recording transport.
@Suite("Registration requests")
struct NextcloudPushRegistrarRequestTests {
    /// Answers with canned responses, in order, and keeps the requests.
    final class RecordingTransport: NextcloudHTTPTransport {
        private let state: Mutex<(answers: [NextcloudHTTPResponse], requests: [NextcloudHTTPRequest])>

        init(_ answers: [NextcloudHTTPResponse]) {
            self.state = Mutex((answers, []))
        }

        var requests: [NextcloudHTTPRequest] { self.state.withLock { $0.requests } }

        func send(_ request: NextcloudHTTPRequest) async throws -> NextcloudHTTPResponse {
            try self.state.withLock { state in
                state.requests.append(request)
                guard !state.answers.isEmpty else { throw URLError(.cannotConnectToHost) }
                return state.answers.removeFirst()
            }
        }
    }

    static let userPublicKey = "-----BEGIN PUBLIC KEY-----\n" + "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA" + "\n-----END PUBLIC KEY-----\n"

    static func ocs(_ status: Int, _ data: String) -> NextcloudHTTPResponse {
        NextcloudHTTPResponse(
            status: status, headers: ["Content-Type": "application/json"],
            body: Data(#"{"ocs":{"meta":{"status":"ok","statuscode":\#(status),"message":"OK"},"data":\#(data)}}"#.utf8)
        )
    }

    static func validData(_ userPublicKey: String) -> String {
        let escaped = userPublicKey.replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "/", with: "\\/")
        return #"{"publicKey":"\#(escaped)","deviceIdentifier":"M+sWk4m3\/Q==","signature":"c2ln+\/=="}"#
    }

    @Test func buildsTheDocumentedRequests() async throws {
        let deviceKey = try await OffPool.run { try NextcloudDeviceKey() }
        let userKey = try await OffPool.run { try NextcloudDeviceKey() }.publicKeyPEM()
        let transport = RecordingTransport([Self.ocs(201, Self.validData(userKey)), NextcloudHTTPResponse(status: 200)])
        let registrar = NextcloudPushRegistrar(transport: transport, userAgent: "Mozilla/5.0 (iOS) Nextcloud-Talk v20.0.0 (Strict VoIP)")
        let credentials = NextcloudCredentials(server: URL(string: "https://cloud.example.com/nextcloud/")!, login: "alice@example.com", appPassword: "p@ss:w0rd")
        let registration = try await registrar.register(
            pushToken: "AB12 CD34", deviceKey: deviceKey, proxyServer: URL(string: "https://push.example.com/proxy/")!, credentials: credentials
        )
        #expect(registration == NextcloudPushRegistration(
            userPublicKey: userKey, deviceIdentifier: "M+sWk4m3/Q==", deviceIdentifierSignature: "c2ln+/==",
            proxyServer: URL(string: "https://push.example.com/proxy/")!
        ))

        let requests = transport.requests
        try #require(requests.count == 2)
        let ocs = requests[0]
        #expect(ocs.method == "POST")
        #expect(ocs.url.absoluteString == "https://cloud.example.com/nextcloud/ocs/v2.php/apps/notifications/api/v2/push?format=json")
        #expect(ocs.headers["Authorization"] == "Basic " + Data("alice@example.com:p@ss:w0rd".utf8).base64EncodedString())
        #expect(ocs.headers["OCS-APIRequest"] == "true")
        #expect(ocs.headers["Accept"] == "application/json")
        #expect(ocs.headers["User-Agent"] == "Mozilla/5.0 (iOS) Nextcloud-Talk v20.0.0 (Strict VoIP)")
        #expect(ocs.headers["Content-Type"] == "application/x-www-form-urlencoded")
        let pem = deviceKey.publicKeyPEM()
            .replacingOccurrences(of: "\n", with: "%0A").replacingOccurrences(of: "+", with: "%2B")
            .replacingOccurrences(of: "/", with: "%2F").replacingOccurrences(of: "=", with: "%3D").replacingOccurrences(of: " ", with: "%20")
        #expect(String(decoding: ocs.body ?? Data(), as: UTF8.self)
            == "pushTokenHash=\(pushTokenHash("AB12 CD34"))&devicePublicKey=\(pem)&proxyServer=https%3A%2F%2Fpush.example.com%2Fproxy%2F")

        let proxy = requests[1]
        #expect(proxy.method == "POST")
        #expect(proxy.url.absoluteString == "https://push.example.com/proxy/devices")
        #expect(proxy.headers["Authorization"] == nil)
        #expect(proxy.headers["User-Agent"] == "Mozilla/5.0 (iOS) Nextcloud-Talk v20.0.0 (Strict VoIP)")
        let userKeyEncoded = userKey
            .replacingOccurrences(of: "\n", with: "%0A").replacingOccurrences(of: "+", with: "%2B")
            .replacingOccurrences(of: "/", with: "%2F").replacingOccurrences(of: "=", with: "%3D").replacingOccurrences(of: " ", with: "%20")
        #expect(String(decoding: proxy.body ?? Data(), as: UTF8.self)
            == "pushToken=AB12%20CD34&deviceIdentifier=M%2BsWk4m3%2FQ%3D%3D&deviceIdentifierSignature=c2ln%2B%2F%3D%3D&userPublicKey=\(userKeyEncoded)")
    }

    @Test func unregistersWithDeleteRequests() async throws {
        let transport = RecordingTransport([Self.ocs(202, "[]"), NextcloudHTTPResponse(status: 200)])
        let registration = NextcloudPushRegistration(
            userPublicKey: "K\n", deviceIdentifier: "I+/=", deviceIdentifierSignature: "S", proxyServer: URL(string: "https://push.example.com")!
        )
        let credentials = NextcloudCredentials(server: URL(string: "https://cloud.example.com")!, login: "alice", appPassword: "secret")
        let outcome = try await NextcloudPushRegistrar(transport: transport).unregister(registration: registration, credentials: credentials)
        #expect(outcome == .deleted)
        let requests = transport.requests
        try #require(requests.count == 2)
        #expect(requests[0].method == "DELETE")
        #expect(requests[0].url.absoluteString == "https://cloud.example.com/ocs/v2.php/apps/notifications/api/v2/push?format=json")
        #expect(requests[0].headers["OCS-APIRequest"] == "true")
        #expect(requests[0].headers["User-Agent"] == NextcloudPushRegistrar.defaultUserAgent)
        #expect(requests[1].method == "DELETE")
        #expect(requests[1].url.absoluteString == "https://push.example.com/devices")
        #expect(String(decoding: requests[1].body ?? Data(), as: UTF8.self) == "deviceIdentifier=I%2B%2F%3D&deviceIdentifierSignature=S&userPublicKey=K%0A")
    }

    @Test func theServerStepMustSucceedBeforeTheProxyIsAsked() async throws {
        let credentials = NextcloudCredentials(server: URL(string: "https://cloud.example.com")!, login: "alice", appPassword: "secret")
        let registration = NextcloudPushRegistration(userPublicKey: "K", deviceIdentifier: "I", deviceIdentifierSignature: "S", proxyServer: URL(string: "https://p.example")!)
        let answers: [(NextcloudHTTPResponse, String)] = [
            (NextcloudHTTPResponse(status: 401), "unauthorized"),
            (Self.ocs(400, #"{"message":"INVALID_SESSION_TOKEN"}"#), "rejectedByServer(400, INVALID_SESSION_TOKEN)"),
            (NextcloudHTTPResponse(status: 503, body: Data("<html>maintenance</html>".utf8)), "rejectedByServer(503, nil)"),
        ]
        for (answer, expected) in answers {
            let transport = RecordingTransport([answer, NextcloudHTTPResponse(status: 200)])
            let error = await #expect(throws: NextcloudRegistrationError.self) {
                try await NextcloudPushRegistrar(transport: transport).unregister(registration: registration, credentials: credentials)
            }
            #expect(error.map(Self.summary) == expected)
            #expect(transport.requests.count == 1)
        }
    }

    @Test func unusableSuccessAnswersAreTypedErrors() async throws {
        let deviceKey = try await OffPool.run { try NextcloudDeviceKey() }
        let userKey = try await OffPool.run { try NextcloudDeviceKey() }.publicKeyPEM()
        let credentials = NextcloudCredentials(server: URL(string: "https://cloud.example.com")!, login: "alice", appPassword: "secret")
        let bodies = [
            Self.ocs(201, "[]"),
            Self.ocs(201, #"{"deviceIdentifier":"I","signature":"S"}"#),
            Self.ocs(201, #"{"publicKey":"not a key","deviceIdentifier":"I","signature":"S"}"#),
            Self.ocs(200, Self.validData(userKey).replacingOccurrences(of: #""deviceIdentifier":"M+sWk4m3\/Q==","#, with: "")),
            Self.ocs(201, Self.validData(userKey).replacingOccurrences(of: #","signature":"c2ln+\/==""#, with: "")),
            NextcloudHTTPResponse(status: 201, body: Data("<html></html>".utf8)),
        ]
        for body in bodies {
            let transport = RecordingTransport([body, NextcloudHTTPResponse(status: 200)])
            let error = await #expect(throws: NextcloudRegistrationError.self) {
                try await NextcloudPushRegistrar(transport: transport).register(
                    pushToken: "t", deviceKey: deviceKey, proxyServer: URL(string: "https://p.example/")!, credentials: credentials
                )
            }
            guard case .invalidServerResponse(body.status, _) = error else {
                Issue.record("expected invalidServerResponse, got \(String(describing: error))")
                continue
            }
            #expect(transport.requests.count == 1)
        }
    }

    @Test func aMissingResponseIsATransportError() async throws {
        let deviceKey = try await OffPool.run { try NextcloudDeviceKey() }
        let credentials = NextcloudCredentials(server: URL(string: "http://127.0.0.1:1")!, login: "alice", appPassword: "secret")
        let error = await #expect(throws: NextcloudRegistrationError.self) {
            try await NextcloudPushRegistrar().register(pushToken: "t", deviceKey: deviceKey, proxyServer: URL(string: "https://p.example/")!, credentials: credentials)
        }
        guard case .transport = error else {
            Issue.record("expected a transport error, got \(String(describing: error))")
            return
        }
    }

    @Test func credentialsDoNotShowThePassword() {
        let credentials = NextcloudCredentials(server: URL(string: "https://cloud.example.com")!, login: "alice", appPassword: "Xq8pL-2mWzR")
        var dumped = ""
        dump(credentials, to: &dumped)
        for text in [String(describing: credentials), String(reflecting: credentials), dumped] {
            #expect(!text.contains("Xq8pL-2mWzR"))
            #expect(text.contains("alice"))
        }
    }

    static func summary(_ error: NextcloudRegistrationError) -> String {
        switch error {
        case .unauthorized: "unauthorized"
        case .rejectedByServer(let status, let message): "rejectedByServer(\(status), \(message ?? "nil"))"
        default: "\(error)"
        }
    }
}
