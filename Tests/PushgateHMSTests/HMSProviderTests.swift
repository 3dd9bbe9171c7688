import Foundation
import Hummingbird
import Logging
import PushgateConfig
import PushgateCore
@testable import PushgateHMS
import PushgateSandbox
import PushgateTestSupport
import Synchronization
import Testing

/// The HMS back end against the sandbox's Huawei Push Kit emulator over real HTTP: the OAuth grant and
/// its cache, the message shape, and each result code's outcome.
@Suite("HMS back end against the emulator")
struct HMSProviderTests {
    static let quiet: Logger = {
        var logger = Logger(label: "pushgate.hms.tests")
        logger.logLevel = .critical
        return logger
    }()

    final class PortBox: Sendable {
        private let stored = Mutex(0)
        var value: Int {
            get { self.stored.withLock { $0 } }
            set { self.stored.withLock { $0 = newValue } }
        }
    }

    static func configuration(_ yaml: String) throws -> HMSConfiguration {
        try HMSConfiguration(settings: try #require(try GatewayConfiguration(yaml: yaml).apps.first))
    }

    /// Runs `body` with a live emulator and a provider pointed at it.
    static func run(secret: String? = nil, _ body: @Sendable (HMSEmulator, HMSProvider, SandboxDeliveryLog) async throws -> Void) async throws {
        let log = SandboxDeliveryLog(capacity: 100)
        let emulator = HMSEmulator(appID: "10203040", appSecret: "s3cret", log: log)
        let router = Router()
        emulator.addRoutes(to: router)
        let port = PortBox()
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in port.value = channel.localAddress?.port ?? 0 }, logger: Self.quiet
        )
        try await RunningServices.with([application]) {
            while port.value == 0 { try await Task.sleep(for: .milliseconds(10)) }
            let configuration = try Self.configuration("""
                apps:
                  com.example.huawei:
                    type: hms
                    app_id: '10203040'
                    app_secret: \(secret ?? "s3cret")
                    base_url: http://127.0.0.1:\(port.value)
                    token_url: http://127.0.0.1:\(port.value)/oauth2/v3/token
                """)
            let provider = HMSProvider(configuration: configuration, logger: Self.quiet)
            try await body(emulator, provider, log)
            try await provider.shutdown()
        }
    }

    static let alert = PushNotification(
        priority: .high, payload: ["android": ["notification": ["title": "T", "body": "B", "click_action": ["type": 3]]], "data": "{\"k\":1}"]
    )

    /// What the front end left out is not added: no `android.urgency` (nor an `android` section) without a
    /// stated priority, and the payload's own `urgency` wins over a stated one.
    @Test func nothingTheFrontEndLeftOutIsAdded() {
        #expect(
            HMSMessage.body(notification: PushNotification(payload: ["data": "{}"]), token: "d")
                == ["validate_only": false, "message": ["data": "{}", "token": ["d"]]]
        )
        #expect(
            HMSMessage.body(notification: PushNotification(priority: .normal, payload: ["data": "{}"], timeToLive: 60), token: "d")
                == ["validate_only": false, "message": ["data": "{}", "android": ["urgency": "NORMAL", "ttl": "60s"], "token": ["d"]]]
        )
        #expect(
            HMSMessage.body(notification: PushNotification(priority: .high, payload: ["android": ["urgency": "NORMAL"]]), token: "d")
                == ["validate_only": false, "message": ["android": ["urgency": "NORMAL"], "token": ["d"]]]
        )
    }

    @Test func eachResultCodeBecomesItsOutcome() async throws {
        try await Self.run { emulator, provider, log in
            let deadline = ContinuousClock.now + .seconds(30)
            #expect(await provider.deliver(Self.alert, to: "device-1", deadline: deadline) == .delivered)
            let sent = try #require(log.all.last)
            #expect(sent.token == "device-1")
            #expect(try JSONParser.parse(Array(sent.body.utf8)) == JSONParser.parse(Array(#"""
                {"android":{"notification":{"title":"T","body":"B","click_action":{"type":3}},"urgency":"HIGH"},"data":"{\"k\":1}","token":["device-1"]}
                """#.utf8)))
            #expect(sent.headers["content-type"] == "application/json;charset=utf-8")
            guard case .invalidToken = await provider.deliver(Self.alert, to: "invalid-1", deadline: deadline) else {
                Issue.record("80300007 is not an invalid token")
                return
            }
            guard case .retryLater(let after, _) = await provider.deliver(Self.alert, to: "busy-1", deadline: deadline) else {
                Issue.record("429 is not retry-later")
                return
            }
            #expect(after == .seconds(3))
            guard case .retryLater = await provider.deliver(Self.alert, to: "internal-1", deadline: deadline) else {
                Issue.record("81000001 is not retry-later")
                return
            }
            // A notification without the click action Huawei requires is refused, not retried.
            let bare = PushNotification(payload: ["android": ["notification": ["body": "B"]]])
            guard case .rejected(let reason) = await provider.deliver(bare, to: "device-2", deadline: deadline) else {
                Issue.record("a malformed message is not rejected")
                return
            }
            #expect(reason.hasPrefix("80100001"))
            // A topic send carries the topic and no token.
            #expect(await provider.deliver(PushNotification(payload: ["topic": "news", "data": "x"]), to: "news", deadline: deadline) == .delivered)
            #expect(log.all.last?.token == "/topics/news")
            // One access token served every request.
            #expect(provider.accessTokenFetches == 1)
            // A refused access token is renewed once, and the send goes through.
            emulator.revokeAccessTokens()
            #expect(await provider.deliver(Self.alert, to: "device-3", deadline: deadline) == .delivered)
            #expect(provider.accessTokenFetches == 2)
        }
    }

    @Test func aWrongSecretIsACredentialsRefusalWithoutShowingIt() async throws {
        try await Self.run(secret: "not-the-secret") { _, provider, log in
            guard case .credentialsRefused(let reason) = await provider.deliver(Self.alert, to: "device-1", deadline: .now + .seconds(30)) else {
                Issue.record("a refused grant is not a credentials refusal")
                return
            }
            #expect(reason.contains("HTTP 400"))
            #expect(!reason.contains("not-the-secret"))
            #expect(log.all.isEmpty)
        }
    }

    @Test func settingsAreCheckedAndNamed() throws {
        #expect(throws: ConfigurationError.self) { try Self.configuration("apps: {h: {type: hms, app_secret: x}}") }
        #expect(throws: ConfigurationError.self) { try Self.configuration("apps: {h: {type: hms, app_id: '1'}}") }
        #expect(throws: ConfigurationError.self) { try Self.configuration("apps: {h: {type: hms, app_id: '1', app_secret: x, base_url: 'ftp://x'}}") }
        for appID in ["'1/2'", "'1?x'", "'1#x'", "'1 2'", "'1%2F'"] {
            let error = #expect(throws: ConfigurationError.self) { try Self.configuration("apps: {h: {type: hms, app_id: \(appID), app_secret: x}}") }
            #expect(error?.key == "apps.h.app_id", "\(appID)")
        }
        // A secret given both ways is refused, naming the key, whether or not the file can be read.
        let both = #expect(throws: ConfigurationError.self) {
            try Self.configuration("apps: {h: {type: hms, app_id: '1', app_secret: x, app_secret_file: /nonexistent/secret}}")
        }
        #expect(both?.key == "apps.h.app_secret")
        #expect(both.map { !"\($0)".contains(": x") } ?? false)
        let configuration = try Self.configuration("apps: {h: {type: hms, app_id: '101', app_secret: x, color: red}}")
        #expect(configuration.sendURL == "https://push-api.cloud.huawei.com/v1/101/messages:send")
        #expect(configuration.tokenURL == HMS.defaultTokenURL)
        #expect(configuration.unknownKeys == ["apps.h.color"])
    }

    @Test(arguments: [
        (200, #"{"code":"80000000","msg":"Success"}"#, "delivered"),
        (400, #"{"code":"80300007","msg":"All the tokens are invalid"}"#, "invalid_token"),
        (200, #"{"code":"80100000","msg":"{\"success\":0,\"failure\":1,\"illegal_tokens\":[\"t\"]}"}"#, "invalid_token"),
        (400, #"{"code":"80300008","msg":"too large"}"#, "rejected"),
        (403, #"{"code":"80300002","msg":"no permission"}"#, "credentials_refused"),
        (500, #"{"code":"81000001","msg":"internal"}"#, "retry_later"),
        (502, "<html>bad gateway</html>", "retry_later"),
        (429, "", "retry_later"),
    ])
    func resultCodesMapToOutcomes(_ status: Int, _ body: String, _ label: String) {
        guard case .outcome(let outcome) = HMSResponseClassifier.classify(status: status, body: Data(body.utf8), retryAfter: nil) else {
            Issue.record("expected an outcome")
            return
        }
        #expect(outcome.label == label)
        // Huawei's msg can list tokens: reasons never carry it.
        if case .invalidToken(let reason) = outcome { #expect(!reason.contains("illegal_tokens\":[\"t")) }
    }

    @Test func tokenErrorsAskForANewAccessToken() {
        #expect(HMSResponseClassifier.classify(status: 401, body: Data(#"{"code":"80200003"}"#.utf8), retryAfter: nil) == .renewAccessTokenAndRetry)
        #expect(HMSResponseClassifier.classify(status: 401, body: Data(#"{"code":"80200001"}"#.utf8), retryAfter: nil) == .renewAccessTokenAndRetry)
    }
}
