import CoreMetrics
import Crypto
import Foundation
import Logging
import PushgateCore
import PushgateProviderSupport
import ServiceLifecycleTestKit
import Synchronization
@testable import PushgateWebPush
import PushgateTestSupport
import Testing

/// The provider against a push service on a real socket.
@Suite("Web Push provider")
struct WebPushProviderTests {
    struct Harness {
        let provider: WebPushProvider
        let vapidKey: P256.Signing.PrivateKey
        let logs: LogRecorder
        let port: Int
        let recorder: PushServiceStub.Recorder
    }

    static let payload: JSONValue = .object(["room_id": .string("!r:example.org"), "unread": .number(3), "event_id": .string("$e")])

    /// Runs `body` with a provider (run as a service, shut down afterwards) and a push service stub.
    static func withProvider(
        extra: [String] = ["allowed_endpoints: ['127.0.0.1:*']"], circuits: OriginCircuits.Settings = OriginCircuits.Settings(),
        metricsFactory: (any MetricsFactory)? = nil, _ body: @Sendable (Harness) async throws -> Void
    ) async throws {
        let directory = try TestFixtures.TemporaryDirectory()
        let (configuration, key) = try TestFixtures.configuration(in: directory, extra: extra)
        let logs = LogRecorder()
        let logger = logs.logger(label: "webpush-test")
        let provider = WebPushProvider(
            configuration: configuration, logger: logger, policy: PushEndpointPolicy(allowedEndpoints: configuration.allowedEndpoints), circuits: circuits,
            metricsFactory: metricsFactory
        )
        try await PushServiceStub.withService { port, recorder in
            try await testGracefulShutdown { trigger in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await provider.run() }
                    do {
                        try await body(Harness(provider: provider, vapidKey: key, logs: logs, port: port, recorder: recorder))
                    } catch {
                        trigger.triggerGracefulShutdown()
                        try await group.waitForAll()
                        throw error
                    }
                    trigger.triggerGracefulShutdown()
                    try await group.waitForAll()
                }
            }
        }
    }

    /// A safety net, not what these tests measure: long enough for a loaded machine.
    static func soon() -> ContinuousClock.Instant { .now + .seconds(60) }

    @Test func deliversAnEncryptedNotificationWithHeaders() async throws {
        try await Self.withProvider { harness in
            let subscriber = TestFixtures.Subscriber()
            let token = subscriber.token(endpoint: "http://127.0.0.1:\(harness.port)/sub/ok")
            let notification = PushNotification(kind: .alert, priority: .high, payload: Self.payload, timeToLive: 120, collapseID: "room-1")
            #expect(await harness.provider.deliver(notification, to: token, deadline: Self.soon()) == .delivered)

            let requests = await harness.recorder.requests
            let request = try #require(requests.first)
            #expect(requests.count == 1)
            #expect(request.path == "/sub/ok")
            #expect(request.headers["ttl"] == "120")
            #expect(request.headers["urgency"] == "high")
            #expect(request.headers["topic"] == "room-1")
            #expect(request.headers["content-encoding"] == "aes128gcm")
            #expect(request.headers["content-type"] == "application/octet-stream")
            let authorization = try #require(request.headers["authorization"])
            #expect(authorization.hasPrefix("vapid t="))
            #expect(authorization.hasSuffix(", k=" + Base64URL.encode(harness.vapidKey.publicKey.x963Representation)))
            let token64 = String(authorization.dropFirst("vapid t=".count).prefix { $0 != "," })
            let claims = try #require(Base64URL.decode(String(token64.split(separator: ".")[1])))
            let decoded = try #require(try JSONSerialization.jsonObject(with: Data(claims)) as? [String: Any])
            #expect(decoded["aud"] as? String == "http://127.0.0.1:\(harness.port)")
            #expect(decoded["sub"] as? String == "mailto:ops@example.org")

            let plaintext = try WebPushEncryption.decrypt(request.body, userAgentKey: subscriber.key, authSecret: subscriber.authSecret)
            #expect(plaintext == (try Self.payload.encoded()))
        }
    }

    /// A notification that states neither urgency nor priority gets no `Urgency` header (the push
    /// service's default, `normal`); `TTL` is the app's configured one.
    @Test func sendsNoUrgencyWhenNothingIsStated() async throws {
        try await Self.withProvider { harness in
            let token = TestFixtures.Subscriber().token(endpoint: "http://127.0.0.1:\(harness.port)/sub/ok")
            #expect(await harness.provider.deliver(PushNotification(kind: .background, payload: .object([:])), to: token, deadline: Self.soon()) == .delivered)
            let requests = await harness.recorder.requests
            try #require(requests.count == 1)
            #expect(requests[0].headers["ttl"] == "900")
            #expect(requests[0].headers["urgency"] == nil)
            #expect(requests[0].headers["topic"] == nil)
        }
    }

    @Test func defaultsTTLAndUrgencyWhenNotStated() async throws {
        try await Self.withProvider { harness in
            let token = TestFixtures.Subscriber().token(endpoint: "http://127.0.0.1:\(harness.port)/sub/ok")
            let background = PushNotification(kind: .background, priority: .normal, payload: .object([:]))
            let alert = PushNotification(kind: .alert, priority: .normal, payload: .object([:]))
            #expect(await harness.provider.deliver(background, to: token, deadline: Self.soon()) == .delivered)
            #expect(await harness.provider.deliver(alert, to: token, deadline: Self.soon()) == .delivered)
            let requests = await harness.recorder.requests
            try #require(requests.count == 2)
            #expect(requests[0].headers["ttl"] == "900")
            #expect(requests[0].headers["urgency"] == "low")
            #expect(requests[0].headers["topic"] == nil)
            #expect(requests[1].headers["urgency"] == "normal")
            #expect(requests[1].headers["topic"] == nil)
        }
    }

    /// What the front end states goes out unchanged: its urgency (whatever the priority says) and a padded
    /// Topic such as Sygnal's room topic.
    @Test func sendsTheStatedUrgencyAndTopicUnchanged() async throws {
        try await Self.withProvider { harness in
            let token = TestFixtures.Subscriber().token(endpoint: "http://127.0.0.1:\(harness.port)/sub/ok")
            let topic = "RURl-mGrL3Gtdl-_0CCD3j0bD8MwkA=="
            let low = PushNotification(kind: .alert, priority: .high, payload: Self.payload, collapseID: topic, webPushUrgency: .low)
            let normal = PushNotification(kind: .alert, priority: .high, payload: Self.payload, webPushUrgency: .normal)
            let veryLow = PushNotification(kind: .alert, priority: .high, payload: Self.payload, webPushUrgency: .veryLow)
            for notification in [low, normal, veryLow] {
                #expect(await harness.provider.deliver(notification, to: token, deadline: Self.soon()) == .delivered)
            }
            let requests = await harness.recorder.requests
            try #require(requests.count == 3)
            #expect(requests.map { $0.headers["urgency"] } == ["low", "normal", "very-low"])
            #expect(requests[0].headers["topic"] == topic)
            #expect(requests[1].headers["topic"] == nil)
        }
    }

    /// A collapse id push services would refuse as a Topic is the front end's mistake: the notification is
    /// rejected, not sent with another Topic or none.
    @Test func aCollapseIDThatIsNotATopicIsRejectedWithoutSending() async throws {
        try await Self.withProvider { harness in
            let token = TestFixtures.Subscriber().token(endpoint: "http://127.0.0.1:\(harness.port)/sub/ok")
            for collapseID in ["!room:example.org/with a long, non-base64url id", String(repeating: "a", count: 33)] {
                let notification = PushNotification(kind: .alert, priority: .normal, payload: .object([:]), collapseID: collapseID)
                guard case .rejected(let reason) = await harness.provider.deliver(notification, to: token, deadline: Self.soon()) else {
                    Issue.record("an invalid Topic was not rejected")
                    continue
                }
                #expect(reason.contains("Topic"))
            }
            #expect(await harness.recorder.requests.isEmpty)
        }
    }

    @Test func statusesMapToOutcomes() async throws {
        try await Self.withProvider { harness in
            let subscriber = TestFixtures.Subscriber()
            func deliver(_ path: String) async -> DeliveryOutcome {
                await harness.provider.deliver(
                    PushNotification(payload: Self.payload), to: subscriber.token(endpoint: "http://127.0.0.1:\(harness.port)/sub/\(path)"), deadline: Self.soon())
            }
            guard case .invalidToken = await deliver("gone") else { Issue.record("410 is not invalidToken"); return }
            guard case .invalidToken = await deliver("missing") else { Issue.record("404 is not invalidToken"); return }
            guard case .retryLater(let after, _) = await deliver("slow429") else { Issue.record("429 is not retryLater"); return }
            #expect(after == .seconds(7))
            guard case .retryLater(nil, let reason) = await deliver("error") else { Issue.record("500 is not retryLater"); return }
            #expect(reason.contains("500") && reason.contains("upstream broke"))
            guard case .rejected(let bigReason) = await deliver("big") else { Issue.record("413 is not rejected"); return }
            #expect(bigReason.contains("too large"))
            guard case .rejected(let badReason) = await deliver("bad") else { Issue.record("400 is not rejected"); return }
            // The start of the body, on one line, cut at 200 characters.
            #expect(badReason.hasSuffix(": bad [31mforged line " + String(repeating: "x", count: 200 - 20) + "…"), "\(badReason)")
            #expect(!badReason.unicodeScalars.contains { $0.properties.generalCategory == .control })
            // A 401 is about the subscription, not the app's key: push services answer it for one made
            // with another key (autopush), so it must not stop the app's other deliveries.
            guard case .rejected(let mismatchReason) = await deliver("mismatch") else { Issue.record("401 is not rejected"); return }
            #expect(mismatchReason.contains("401"))
            // A 408 is about the request alone: sent again later, not dropped.
            guard case .retryLater(nil, let timeoutReason) = await deliver("timeout") else { Issue.record("408 is not retryLater"); return }
            #expect(timeoutReason.contains("408"))
            #expect(await harness.recorder.requests.count == 8)
        }
    }

    /// A refused connection is retried by the HTTP client's pool until the connect timeout or the deadline,
    /// whichever comes first; the outcome is then retryLater, on time.
    @Test func unreachableServicesAreRetriedLaterByTheDeadline() async throws {
        try await Self.withProvider { harness in
            // Nothing listens on port 1: every connection attempt is refused.
            let token = TestFixtures.Subscriber().token(endpoint: "http://127.0.0.1:1/sub/ok")
            let started = ContinuousClock.now
            let outcome = await harness.provider.deliver(PushNotification(payload: Self.payload), to: token, deadline: .now + .milliseconds(800))
            // Answered, not left waiting for connection retries; far from scheduling delays on a loaded machine.
            #expect(ContinuousClock.now - started < .seconds(30))
            guard case .retryLater(nil, let reason) = outcome else { Issue.record("refused connection gave \(outcome)"); return }
            #expect(reason.hasPrefix("transport error") || reason == "deadline passed")
            #expect(!reason.contains("/sub/ok"))
        }
    }

    @Test func oversizedPayloadsAreRejectedWithoutSending() async throws {
        try await Self.withProvider { harness in
            let token = TestFixtures.Subscriber().token(endpoint: "http://127.0.0.1:\(harness.port)/sub/ok")
            let notification = PushNotification(payload: .object(["body": .string(String(repeating: "a", count: 5000))]))
            #expect(
                await harness.provider.deliver(notification, to: token, deadline: Self.soon())
                    == .rejected(reason: "payload too large: 5011 bytes, Web Push takes at most 3993")
            )
            #expect(await harness.recorder.requests.isEmpty)
        }
    }

    /// A payload over 3993 bytes (RFC 8291: a push service need not take a body over 4096) goes in the
    /// smaller form the front end stated; one that fits goes whole even when a smaller form is stated.
    @Test func aPayloadOverTheLimitGoesInTheStatedSmallerForm() async throws {
        try await Self.withProvider { harness in
            let subscriber = TestFixtures.Subscriber()
            let token = subscriber.token(endpoint: "http://127.0.0.1:\(harness.port)/sub/ok")
            let reduced: JSONValue = ["event_id": "$e", "room_id": "!r:example.org"]
            // 3993 bytes exactly: sent whole.
            var fits = PushNotification(payload: ["b": .string(String(repeating: "a", count: 3993 - 8))])
            fits.reducedPayload = reduced
            var large = PushNotification(payload: ["b": .string(String(repeating: "a", count: 3993 - 7))])
            large.reducedPayload = reduced
            #expect(await harness.provider.deliver(fits, to: token, deadline: Self.soon()) == .delivered)
            #expect(await harness.provider.deliver(large, to: token, deadline: Self.soon()) == .delivered)
            let requests = await harness.recorder.requests
            try #require(requests.count == 2)
            #expect(requests[0].body.count == 4096)
            let whole = try WebPushEncryption.decrypt(requests[0].body, userAgentKey: subscriber.key, authSecret: subscriber.authSecret)
            #expect(whole == (try JSONText.encode(fits.payload)))
            let smaller = try WebPushEncryption.decrypt(requests[1].body, userAgentKey: subscriber.key, authSecret: subscriber.authSecret)
            #expect(smaller == (try JSONText.encode(reduced)))
        }
    }

    @Test func deadlinesGiveRetryLaterWithoutHanging() async throws {
        try await Self.withProvider { harness in
            let subscriber = TestFixtures.Subscriber()
            let past = await harness.provider.deliver(
                PushNotification(payload: Self.payload), to: subscriber.token(endpoint: "http://127.0.0.1:\(harness.port)/sub/ok"), deadline: .now - .seconds(1))
            guard case .retryLater(nil, _) = past else { Issue.record("past deadline gave \(past)"); return }
            #expect(await harness.recorder.requests.isEmpty)

            let started = ContinuousClock.now
            let hanging = await harness.provider.deliver(
                PushNotification(payload: Self.payload), to: subscriber.token(endpoint: "http://127.0.0.1:\(harness.port)/sub/hang"), deadline: .now + .milliseconds(300))
            guard case .retryLater(nil, let reason) = hanging else { Issue.record("hanging service gave \(hanging)"); return }
            // The deadline ended the wait: while waiting for the answer, or (on a loaded machine) already
            // while connecting, which the same deadline bounds. It was not the 60-second idle timeout: the
            // bound below is far from it and from scheduling delays.
            #expect(reason == "deadline passed" || reason == "transport error: ChannelError", "\(reason)")
            let elapsed = ContinuousClock.now - started
            #expect(elapsed >= .milliseconds(250) && elapsed < .seconds(30))
        }
    }

    @Test func malformedSubscriptionsAreInvalidTokens() async throws {
        try await Self.withProvider { harness in
            let outcome = await harness.provider.deliver(PushNotification(payload: Self.payload), to: #"{"endpoint": 3}"#, deadline: Self.soon())
            guard case .invalidToken = outcome else { Issue.record("malformed subscription gave \(outcome)"); return }
            #expect(await harness.recorder.requests.isEmpty)
        }
    }

    /// The second delivery to a token uses the kept subscription, still with its own salt and sender key; an
    /// invalid token is refused every time.
    @Test func repeatedDeliveriesToOneToken() async throws {
        try await Self.withProvider { harness in
            let subscriber = TestFixtures.Subscriber()
            let token = subscriber.token(endpoint: "http://127.0.0.1:\(harness.port)/sub/ok")
            for _ in 0..<3 {
                #expect(await harness.provider.deliver(PushNotification(payload: Self.payload), to: token, deadline: Self.soon()) == .delivered)
            }
            let bodies = await harness.recorder.requests.map(\.body)
            try #require(bodies.count == 3)
            for body in bodies {
                #expect(try WebPushEncryption.decrypt(body, userAgentKey: subscriber.key, authSecret: subscriber.authSecret) == (try Self.payload.encoded()))
            }
            #expect(Set(bodies.map { Array($0[0..<16]) }).count == 3)
            #expect(Set(bodies.map { Array($0[21..<86]) }).count == 3)

            for _ in 0..<3 {
                let outcome = await harness.provider.deliver(PushNotification(payload: Self.payload), to: #"{"endpoint": 3}"#, deadline: Self.soon())
                guard case .invalidToken = outcome else { Issue.record("malformed subscription gave \(outcome)"); return }
            }
            #expect(await harness.recorder.requests.count == 3)
        }
    }

    @Test func endpointsOutsideAllowedEndpointsAreRejected() async throws {
        try await Self.withProvider { harness in
            let subscriber = TestFixtures.Subscriber()
            for endpoint in ["https://10.0.0.1/sub/ok", "https://169.254.169.254/sub/ok", "http://localhost:\(harness.port)/sub/ok"] {
                let outcome = await harness.provider.deliver(PushNotification(payload: Self.payload), to: subscriber.token(endpoint: endpoint), deadline: Self.soon())
                guard case .rejected = outcome else { Issue.record("\(endpoint) gave \(outcome)"); continue }
            }
            #expect(await harness.recorder.requests.isEmpty)
        }
    }

    @Test func privateAndLoopbackEndpointsAreRejectedWithoutAllowedEndpoints() async throws {
        try await Self.withProvider(extra: []) { harness in
            let subscriber = TestFixtures.Subscriber()
            for endpoint in ["https://10.0.0.1/sub/ok", "https://169.254.169.254/sub/ok", "https://localhost:\(harness.port)/sub/ok",
                             "https://127.0.0.1:\(harness.port)/sub/ok", "http://127.0.0.1:\(harness.port)/sub/ok"] {
                let outcome = await harness.provider.deliver(PushNotification(payload: Self.payload), to: subscriber.token(endpoint: endpoint), deadline: Self.soon())
                guard case .rejected = outcome else { Issue.record("\(endpoint) gave \(outcome)"); continue }
            }
            #expect(await harness.recorder.requests.isEmpty)
        }
    }

    @Test func deliveriesBeyondTheInflightLimitAreRetriedLater() async throws {
        try await Self.withProvider(extra: ["allowed_endpoints: ['127.0.0.1:*']", "inflight_request_limit: 1"]) { harness in
            let subscriber = TestFixtures.Subscriber()
            let hanging = subscriber.token(endpoint: "http://127.0.0.1:\(harness.port)/sub/hang")
            let ok = subscriber.token(endpoint: "http://127.0.0.1:\(harness.port)/sub/ok")
            // The first waits on the hanging endpoint (which answers after 5 s) until its deadline.
            async let first = harness.provider.deliver(PushNotification(payload: Self.payload), to: hanging, deadline: .now + .seconds(4))
            // Once the push service has it, it holds the only slot (no fixed sleep: a loaded machine may take long).
            let deadline = ContinuousClock.now + .seconds(4)
            while await harness.recorder.requests.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            let second = await harness.provider.deliver(PushNotification(payload: Self.payload), to: ok, deadline: Self.soon())
            #expect(second == .retryLater(after: nil, reason: "inflight_request_limit reached"))
            guard case .retryLater = await first else { Issue.record("the hanging delivery did not time out"); return }
            // Once the first is over, deliveries are admitted again.
            #expect(await harness.provider.deliver(PushNotification(payload: Self.payload), to: ok, deadline: Self.soon()) == .delivered)
        }
    }

    /// A delivery that finds the only connection slot taken waits for it until its own deadline, then gives
    /// up. Checked by order, not by clock: the slot is held until the test lets it go, so a delivery that
    /// comes back while it is held gave up at its deadline rather than waiting for the slot, however slow
    /// the machine.
    @Test func requestsWaitForAConnectionSlotWithinTheirDeadline() async throws {
        try await Self.withProvider(extra: ["allowed_endpoints: ['127.0.0.1:*']", "max_connections: 1"]) { harness in
            let subscriber = TestFixtures.Subscriber()
            let held = subscriber.token(endpoint: "http://127.0.0.1:\(harness.port)/sub/hold")
            let ok = subscriber.token(endpoint: "http://127.0.0.1:\(harness.port)/sub/ok")
            let firstEnded = EndFlag()
            async let first = Self.deliver(to: held, on: harness, deadline: Self.soon(), markingEndIn: firstEnded)
            // Once the push service has the first, it holds the only slot until the test lets it go. Nothing
            // throws before that: cancelling the first would not end it, only an answer or its deadline.
            let arrivalLimit = Self.soon()
            while await harness.recorder.requests.isEmpty, ContinuousClock.now < arrivalLimit { try? await Task.sleep(for: .milliseconds(10)) }
            let blockedDeadline = ContinuousClock.now + .milliseconds(300)
            let blocked = await harness.provider.deliver(PushNotification(payload: Self.payload), to: ok, deadline: blockedDeadline)
            let blockedReturned = ContinuousClock.now
            let firstEndedBeforeBlocked = firstEnded.isSet
            let pathsWhileHeld = await harness.recorder.requests.map(\.path)
            await harness.recorder.releaseHeld()

            let gaveUp = if case .retryLater = blocked { true } else { false }
            #expect(gaveUp, "the blocked delivery gave \(blocked)")
            // Back while the slot was still held: it did not wait for the slot beyond its deadline.
            #expect(!firstEndedBeforeBlocked, "the blocked delivery came back only after the first ended")
            // And not before its deadline.
            #expect(blockedReturned >= blockedDeadline)
            #expect(pathsWhileHeld == ["/sub/hold"])
            // The first kept its slot throughout and is delivered once released.
            #expect(await first == .delivered)
            // The slot is free again.
            #expect(await harness.provider.deliver(PushNotification(payload: Self.payload), to: ok, deadline: Self.soon()) == .delivered)
            #expect(await harness.recorder.requests.map(\.path) == ["/sub/hold", "/sub/ok"])
        }
    }

    /// Set once, when a delivery has ended.
    final class EndFlag: Sendable {
        private let value = Mutex(false)
        func set() { self.value.withLock { $0 = true } }
        var isSet: Bool { self.value.withLock { $0 } }
    }

    /// Delivers `token` and sets `ended` when the delivery is over.
    static func deliver(to token: String, on harness: Harness, deadline: ContinuousClock.Instant, markingEndIn ended: EndFlag) async -> DeliveryOutcome {
        defer { ended.set() }
        return await harness.provider.deliver(PushNotification(payload: Self.payload), to: token, deadline: deadline)
    }

    @Test func logsCarryFingerprintsNotSecrets() async throws {
        try await Self.withProvider { harness in
            let subscriber = TestFixtures.Subscriber()
            let token = subscriber.token(endpoint: "http://127.0.0.1:\(harness.port)/sub/ok")
            #expect(await harness.provider.deliver(PushNotification(payload: Self.payload), to: token, deadline: Self.soon()) == .delivered)
            let lines = harness.logs.all.map(\.line)
            #expect(lines.contains { $0.contains(Redaction.fingerprint(token)) && $0.contains("status=201") && $0.contains("outcome=delivered") })
            let secrets = ["/sub/ok", Base64URL.encode(subscriber.authSecret), Base64URL.encode(subscriber.key.publicKey.x963Representation), "room_id"]
            for secret in secrets {
                #expect(!lines.contains { $0.contains(secret) }, "a log line contains a secret")
            }
            #expect(!harness.provider.description.contains(Base64URL.encode(harness.vapidKey.publicKey.x963Representation)))
        }
    }
}
