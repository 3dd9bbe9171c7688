import Foundation
import Logging
import CoreMetrics
import Prometheus
import PushgateCore
import PushgateProviderSupport
import PushgateTestSupport
import ServiceLifecycleTestKit
import Synchronization
import Testing

@testable import PushgateUnifiedPush

/// The back end against a push server on a real socket: what it sends (the endpoint exactly, the body,
/// the headers) and how it classes every answer and failure (the common-proxies Matrix gateway's table,
/// with the differences the back end's documentation gives).
@Suite("UnifiedPush provider")
struct UnifiedPushProviderTests {
    /// Fixed answers, so no test depends on DNS (and none reaches a public address).
    static let resolver = HostResolver(lookup: { host in
        switch host {
        case "internal.example": .addresses([IPAddress(literal: "10.1.2.3")!])
        case "public.example": .addresses([IPAddress(literal: "93.184.216.34")!])
        case "gone.example": .noSuchHost
        default: .failed
        }
    })

    static let payload: JSONValue = ["notification": ["event_id": "$e1", "room_id": "!r:example.org", "prio": "high", "counts": ["unread": 2]]]
    static let notification = PushNotification(kind: .alert, payload: Self.payload)

    /// A safety net, not what these tests measure: long enough for a loaded machine.
    static func soon() -> ContinuousClock.Instant { .now + .seconds(60) }

    struct Harness {
        let provider: UnifiedPushProvider
        let port: Int
        let recorder: UnifiedPushEndpointStub.Recorder
        /// The provider's log.
        let logs: LogRecorder
        var base: String { "http://127.0.0.1:\(self.port)" }
        var requests: [UnifiedPushEndpointStub.Recorded] { get async { await self.recorder.requests } }
    }

    /// Runs `body` with a provider (run as a service, shut down afterwards) and a push server stub.
    static func withProvider(
        allowed: [String]? = ["127.0.0.1:*"], requestTimeout: Duration = .seconds(30), resolver: HostResolver = Self.resolver,
        metricsFactory: (any MetricsFactory)? = nil, _ body: @Sendable (Harness) async throws -> Void
    ) async throws {
        let configuration = UnifiedPushConfiguration(appID: "up", allowedEndpoints: allowed, requestTimeout: requestTimeout)
        let logs = LogRecorder()
        let provider = UnifiedPushProvider(configuration: configuration, logger: logs.logger(label: "unifiedpush-test"), resolver: resolver, metricsFactory: metricsFactory)
        try await UnifiedPushEndpointStub.withServer { port, recorder in
            try await testGracefulShutdown { trigger in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await provider.run() }
                    do {
                        try await body(Harness(provider: provider, port: port, recorder: recorder, logs: logs))
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

    /// What the push server's answer becomes (reference §3.6, with any 2xx a success as the UnifiedPush
    /// server rules say, where common-proxies rejects 202 and 204).
    static let answers: [(status: Int, outcome: String, retryAfter: Duration?)] = [
        (200, "delivered", nil), (201, "delivered", nil), (202, "delivered", nil), (204, "delivered", nil),
        (404, "invalid_token", nil), (410, "invalid_token", nil), (400, "invalid_token", nil), (401, "invalid_token", nil),
        (403, "invalid_token", nil), (405, "invalid_token", nil), (413, "rejected", nil), (408, "retry_later", nil), (425, "retry_later", nil),
        (429, "retry_later", .seconds(7)), (500, "retry_later", nil), (502, "retry_later", nil), (503, "retry_later", .seconds(7)),
    ]

    @Test(arguments: Self.answers)
    func eachAnswerIsClassedAsTheGatewayTableSays(_ answer: (status: Int, outcome: String, retryAfter: Duration?)) async throws {
        try await Self.withProvider { harness in
            let outcome = await harness.provider.deliver(Self.notification, to: "\(harness.base)/up/\(answer.status)/e1?up=1", deadline: Self.soon())
            #expect(outcome.label == answer.outcome, "\(answer.status): \(outcome)")
            if case .retryLater(let after, _) = outcome { #expect(after == answer.retryAfter) }
            #expect(await harness.requests.count == 1)
        }
    }

    @Test func aRedirectIsNotFollowedAndTheEndpointIsRejected() async throws {
        try await Self.withProvider { harness in
            let outcome = await harness.provider.deliver(Self.notification, to: "\(harness.base)/up/moved?up=1", deadline: Self.soon())
            #expect(outcome.label == "invalid_token")
            #expect(await harness.requests.map(\.target) == ["/up/moved?up=1"])
        }
    }

    @Test func theEndpointIsPostedToExactlyWithItsQueryStringAndTrailingSlash() async throws {
        try await Self.withProvider { harness in
            let targets = ["/up/200/upAbCdEf?up=1", "/up/201/topic/?up=1&x=%2Fy", "/up/200/a%20b", "/up/204/", "/up/200?up=1&up=2#fragment"]
            for target in targets {
                #expect(await harness.provider.deliver(Self.notification, to: harness.base + target, deadline: Self.soon()) == .delivered)
            }
            // A fragment is never sent (it is not part of an HTTP request target).
            #expect(await harness.requests.map(\.target) == Array(targets.dropLast()) + ["/up/200?up=1&up=2"])
        }
    }

    @Test func theBodyIsThePayloadAndTheHeadersAreCommonProxiesOnes() async throws {
        try await Self.withProvider { harness in
            #expect(await harness.provider.deliver(Self.notification, to: "\(harness.base)/up/201/e1?up=1", deadline: Self.soon()) == .delivered)
            let stated = PushNotification(kind: .alert, payload: Self.payload, timeToLive: 60, webPushUrgency: .high)
            #expect(await harness.provider.deliver(stated, to: "\(harness.base)/up/201/e2?up=1", deadline: Self.soon()) == .delivered)
            let requests = await harness.requests
            try #require(requests.count == 2)
            #expect(requests[0].body == Array(#"{"notification":{"counts":{"unread":2},"event_id":"$e1","prio":"high","room_id":"!r:example.org"}}"#.utf8))
            #expect(requests[0].headers["ttl"] == "86400")
            #expect(requests[0].headers["content-encoding"] == "aes128gcm")
            #expect(requests[0].headers["urgency"] == nil)
            #expect(requests[0].headers["content-type"] == nil)
            #expect(requests[0].headers["authorization"] == nil)
            // What the front end states is sent as it is.
            #expect(requests[1].headers["ttl"] == "60")
            #expect(requests[1].headers["urgency"] == "high")
        }
    }

    /// Refused as too large (413), the smaller payload the front end stated goes instead, at once; without
    /// one the notification is rejected.
    @Test func aRefusalAsTooLargeSendsTheStatedSmallerPayload() async throws {
        try await Self.withProvider { harness in
            let content: JSONValue = ["body": .string(String(repeating: "x", count: 200))]
            var large = PushNotification(kind: .alert, payload: ["notification": ["event_id": "$e1", "content": content]])
            #expect(await harness.provider.deliver(large, to: "\(harness.base)/up/small/e1", deadline: Self.soon()).label == "rejected")
            large.reducedPayload = ["notification": ["event_id": "$e1"]]
            #expect(await harness.provider.deliver(large, to: "\(harness.base)/up/small/e1", deadline: Self.soon()) == .delivered)
            let requests = await harness.requests
            try #require(requests.count == 3)
            #expect(requests[0].body == requests[1].body)
            #expect(requests[2].body == Array(#"{"notification":{"event_id":"$e1"}}"#.utf8))
            #expect(requests[2].headers["ttl"] == requests[1].headers["ttl"])
        }
    }

    @Test func aBodyOverTheUnifiedPushLimitIsRefusedUnsent() async throws {
        try await Self.withProvider { harness in
            let large = PushNotification(kind: .alert, payload: ["notification": ["content": ["body": .string(String(repeating: "x", count: 4100))]]])
            guard case .rejected(let reason) = await harness.provider.deliver(large, to: "\(harness.base)/up/201/e1?up=1", deadline: Self.soon()) else {
                Issue.record("an oversize body was not refused")
                return
            }
            #expect(reason.contains("4096"))
            #expect(await harness.requests.isEmpty)
        }
    }

    @Test(arguments: ["not a url", "", "ftp://127.0.0.1/up/200", "/up/200?up=1", "https:///up/200", "mailto:someone@example.org", "127.0.0.1:8080/up/200"])
    func aPushkeyThatIsNotAnAbsoluteHTTPSURLIsInvalid(_ pushkey: String) async throws {
        try await Self.withProvider { harness in
            #expect(await harness.provider.deliver(Self.notification, to: pushkey, deadline: Self.soon()).label == "invalid_token")
            #expect(await harness.requests.isEmpty)
        }
    }

    /// Foundation reads any run of digits as a port; a socket address made from one over 65535 trapped
    /// the process.
    @Test(arguments: ["https://127.0.0.1:70000/up/200", "https://127.0.0.1:99999/up/200?up=1"])
    func aPushkeyWithAPortOutsideTheRangeIsInvalid(_ pushkey: String) async throws {
        try await Self.withProvider(allowed: ["127.0.0.1:*"]) { harness in
            #expect(await harness.provider.deliver(Self.notification, to: pushkey, deadline: Self.soon()).label == "invalid_token")
            #expect(await harness.requests.isEmpty)
        }
    }

    @Test func privateAddressesNeedAllowedEndpointsAndPlainHTTPToo() async throws {
        try await Self.withProvider(allowed: nil) { harness in
            for pushkey in ["https://127.0.0.1:\(harness.port)/up/200", "\(harness.base)/up/200", "https://internal.example/up/200", "http://public.example/up/200", "https://localhost/up/200"] {
                #expect(await harness.provider.deliver(Self.notification, to: pushkey, deadline: Self.soon()).label == "invalid_token", "\(pushkey)")
            }
            #expect(await harness.requests.isEmpty)
        }
        try await Self.withProvider(allowed: ["127.0.0.1:*"]) { harness in
            #expect(await harness.provider.deliver(Self.notification, to: "\(harness.base)/up/200", deadline: Self.soon()) == .delivered)
            // Listed hosts only, once allowed_endpoints is set.
            #expect(await harness.provider.deliver(Self.notification, to: "https://internal.example/up/200", deadline: Self.soon()).label == "invalid_token")
            #expect(await harness.requests.count == 1)
        }
    }

    /// `pushgate_unifiedpush_deliveries_total` counts by the endpoint's host and outcome, never its path or
    /// query (the URL is a capability).
    @Test func deliveriesAreCountedByHostAndOutcomeWithoutTheURL() async throws {
        let registry = PrometheusCollectorRegistry()
        try await Self.withProvider(metricsFactory: PrometheusMetricsFactory(registry: registry)) { harness in
            #expect(await harness.provider.deliver(Self.notification, to: "\(harness.base)/up/200/secretA?up=1", deadline: Self.soon()) == .delivered)
            #expect(await harness.provider.deliver(Self.notification, to: "\(harness.base)/up/201/secretB", deadline: Self.soon()) == .delivered)
            #expect(await harness.provider.deliver(Self.notification, to: "\(harness.base)/up/404/secretC", deadline: Self.soon()).label == "invalid_token")
            let text = String(decoding: registry.emitToBuffer(), as: UTF8.self)
            let host = "127.0.0.1:\(harness.port)"
            #expect(text.contains(#"pushgate_unifiedpush_deliveries_total{app="up",host="\#(host)",outcome="delivered"} 2"#), "\(text)")
            #expect(text.contains(#"pushgate_unifiedpush_deliveries_total{app="up",host="\#(host)",outcome="invalid_token"} 1"#), "\(text)")
            #expect(!text.contains("secret") && !text.contains("/up/"))
        }
    }

    /// Hosts come from pushkeys users choose: past 200 of them, the rest share the series `other`.
    @Test func hostsPastTheLimitShareOneSeries() {
        let registry = PrometheusCollectorRegistry()
        let metrics = UnifiedPushHostMetrics(appID: "up", factory: PrometheusMetricsFactory(registry: registry))
        for index in 0..<(UnifiedPushHostMetrics.hostLimit + 5) { metrics.record(host: "h\(index).example", outcome: "delivered") }
        metrics.record(host: "h0.example", outcome: "delivered")
        let text = String(decoding: registry.emitToBuffer(), as: UTF8.self)
        #expect(text.contains(#"pushgate_unifiedpush_deliveries_total{app="up",host="h0.example",outcome="delivered"} 2"#))
        #expect(text.contains(#"pushgate_unifiedpush_deliveries_total{app="up",host="other",outcome="delivered"} 5"#))
        #expect(!text.contains("h200.example"))
    }

    @Test func anEndpointFoundGoneOrFailingIsLeftAloneForAWhile() async throws {
        try await Self.withProvider { harness in
            let gone = "\(harness.base)/up/404/e1?up=1"
            let busy = "\(harness.base)/up/429/e2?up=1"
            #expect(await harness.provider.deliver(Self.notification, to: gone, deadline: Self.soon()).label == "invalid_token")
            #expect(await harness.provider.deliver(Self.notification, to: busy, deadline: Self.soon()).label == "retry_later")
            // Again: answered from memory, nothing sent.
            #expect(await harness.provider.deliver(Self.notification, to: gone, deadline: Self.soon()).label == "invalid_token")
            guard case .retryLater(let after?, _) = await harness.provider.deliver(Self.notification, to: busy, deadline: Self.soon()) else {
                Issue.record("a throttled endpoint was not left alone")
                return
            }
            #expect(after > .zero && after <= .seconds(7))
            #expect(await harness.requests.count == 2)
            // Other endpoints on the same host are not concerned.
            #expect(await harness.provider.deliver(Self.notification, to: "\(harness.base)/up/201/e3?up=1", deadline: Self.soon()) == .delivered)
            #expect(await harness.requests.count == 3)
        }
    }

    /// One request that timed out leaves the push server in use (a server many users share, one slow
    /// answer); five in a row open its circuit: its deliveries are retried later without a request until
    /// a probe gets an answer.
    @Test func aHostThatDoesNotAnswerInTimeIsRetriedLaterAndLeftAloneAfterFiveInARow() async throws {
        try await Self.withProvider(requestTimeout: .seconds(1)) { harness in
            #expect(await harness.provider.deliver(Self.notification, to: "\(harness.base)/up/hang?up=1", deadline: Self.soon()).label == "retry_later")
            // One timeout: another endpoint of that host is posted to.
            #expect(await harness.provider.deliver(Self.notification, to: "\(harness.base)/up/201/e1?up=1", deadline: Self.soon()).label == "delivered")
            let labels = await withTaskGroup(of: String.self) { group in
                for index in 0..<5 {
                    group.addTask {
                        await harness.provider.deliver(Self.notification, to: "\(harness.base)/up/hang?n=\(index)", deadline: Self.soon()).label
                    }
                }
                return await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(labels == Array(repeating: "retry_later", count: 5))
            #expect(harness.logs.messages(atLeast: .notice).contains("push server failing; its deliveries wait"))
            // Five in a row: every endpoint of that host waits now, without a request ...
            #expect(await harness.provider.deliver(Self.notification, to: "\(harness.base)/up/201/e2?up=1", deadline: Self.soon()).label == "retry_later")
            #expect(await harness.requests.count == 7)
            // ... until the circuit's first second is over: a probe goes, and its answer closes the circuit.
            try await Task.sleep(for: .milliseconds(1100))
            #expect(await harness.provider.deliver(Self.notification, to: "\(harness.base)/up/201/e3?up=1", deadline: Self.soon()).label == "delivered")
            #expect(await harness.provider.deliver(Self.notification, to: "\(harness.base)/up/201/e4?up=1", deadline: Self.soon()).label == "delivered")
            #expect(harness.logs.messages(atLeast: .notice).contains("push server answering again"))
        }
    }

    @Test func aRefusedConnectionIsRetriedLaterNotRejected() async throws {
        // A push server restarting refuses connections for a moment: its pushers must stay.
        let closed = try #require(ClosedPort.pick())
        try await Self.withProvider { harness in
            #expect(await harness.provider.deliver(Self.notification, to: "http://127.0.0.1:\(closed)/up/200?up=1", deadline: Self.soon()).label == "retry_later")
        }
    }

    @Test func aHostThatDoesNotExistIsInvalidAndAFailedLookupIsRetried() async throws {
        let lookups = LookedUpNames()
        let resolver = HostResolver(lookup: { host in
            lookups.add(host)
            return await Self.resolver.lookup(host)
        })
        try await Self.withProvider(allowed: nil, resolver: resolver) { harness in
            #expect(await harness.provider.deliver(Self.notification, to: "https://gone.example/up/1", deadline: Self.soon()).label == "invalid_token")
            #expect(await harness.provider.deliver(Self.notification, to: "https://gone.example/up/2", deadline: Self.soon()).label == "invalid_token")
            #expect(await harness.provider.deliver(Self.notification, to: "https://flaky.example/up/1", deadline: Self.soon()).label == "retry_later")
            #expect(await harness.provider.deliver(Self.notification, to: "https://flaky.example/up/2", deadline: Self.soon()).label == "retry_later")
            // The same hosts written with their default port or in capitals are the same origin.
            #expect(await harness.provider.deliver(Self.notification, to: "https://gone.example:443/up/3", deadline: Self.soon()).label == "invalid_token")
            #expect(await harness.provider.deliver(Self.notification, to: "https://FLAKY.example:443/up/3", deadline: Self.soon()).label == "retry_later")
            // Each host was looked up once: the later deliveries were answered from memory.
            #expect(lookups.names == ["gone.example", "flaky.example"])
        }
    }

    /// A lookup unfinished at the delivery's deadline is retried later without leaving the host alone:
    /// the next delivery takes the lookup's answer (here a private address: refused).
    @Test func aLookupUnfinishedAtTheDeadlineIsRetriedWithoutLeavingTheHostAlone() async throws {
        let lookups = LookedUpNames()
        let resolver = HostResolver(lookup: { host in
            lookups.add(host)
            try? await Task.sleep(for: .seconds(1))
            return .addresses([IPAddress(literal: "10.1.2.3")!])
        })
        try await Self.withProvider(allowed: nil, resolver: resolver) { harness in
            let started = ContinuousClock.now
            let first = await harness.provider.deliver(Self.notification, to: "https://slow.example/up/1", deadline: .now + .milliseconds(100))
            #expect(first.label == "retry_later")
            #expect(ContinuousClock.now - started < .milliseconds(900))
            #expect(await harness.provider.deliver(Self.notification, to: "https://slow.example/up/2", deadline: Self.soon()).label == "invalid_token")
            #expect(lookups.names == ["slow.example"])
            #expect(await harness.requests.isEmpty)
        }
    }
}

/// The names a resolver was asked for, in order.
final class LookedUpNames: Sendable {
    private let list = Mutex<[String]>([])
    func add(_ name: String) { self.list.withLock { $0.append(name) } }
    var names: [String] { self.list.withLock { $0 } }
}

/// A loopback port nothing listens on (bound, then closed).
enum ClosedPort {
    static func pick() -> Int? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0 else { return nil }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        guard withUnsafeMutablePointer(to: &address, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) } }) == 0 else {
            return nil
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
