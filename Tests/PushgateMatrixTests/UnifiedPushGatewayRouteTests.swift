import CoreMetrics
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PushgateCore
import PushgateDelivery
import PushgateHTTP
import PushgateMatrix
import PushgateServer
import PushgateStore
import PushgateStoreSQLite
import PushgateUnifiedPush
import Synchronization
import Testing

/// The Matrix endpoint as a UnifiedPush gateway, with the real UnifiedPush back end posting to a push
/// server on loopback: discovery, what each endpoint receives, the exact echo of rejected pushkeys, and
/// temporary failures queued in the outbox instead of answered 502.
@Suite("Matrix notify endpoint as a UnifiedPush gateway")
struct UnifiedPushGatewayRouteTests {
    static let quiet = MatrixNotifyRouteTests.quiet

    /// A push server on loopback answering each request with the status its path's second segment names
    /// (503 with `Retry-After: 7`), after two seconds when the third begins with `slow`.
    actor PushServer {
        struct Received: Sendable {
            let target: String
            let body: JSONValue?
        }

        private(set) var received: [Received] = []
        func record(_ received: Received) { self.received.append(received) }

        /// Slow requests being answered now, and the most there were at once.
        private var slowInFlight = 0
        private(set) var slowInFlightPeak = 0
        func slowStarted() {
            self.slowInFlight += 1
            self.slowInFlightPeak = max(self.slowInFlightPeak, self.slowInFlight)
        }
        func slowFinished() { self.slowInFlight -= 1 }

        static func run(_ body: @Sendable (_ base: String, _ server: PushServer) async throws -> Void) async throws {
            let server = PushServer()
            let router = Router()
            router.post("/up/**") { request, _ -> Response in
                let bytes = try await request.body.collect(upTo: 1 << 20)
                let target = request.head.path ?? ""
                await server.record(Received(target: target, body: try? JSONDecoder().decode(JSONValue.self, from: Data(String(buffer: bytes).utf8))))
                let segments = (target.split(separator: "?").first ?? "").split(separator: "/")
                let status = segments.count > 1 ? Int(segments[1]) ?? 404 : 404
                // `/up/<status>/slow…`: answered after two seconds.
                if segments.count > 2, segments[2].hasPrefix("slow") {
                    await server.slowStarted()
                    try await Task.sleep(for: .seconds(2))
                    await server.slowFinished()
                }
                var headers: HTTPFields = [:]
                if status == 503 { headers[.retryAfter] = "7" }
                return Response(status: HTTPResponse.Status(code: status), headers: headers)
            }
            let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: Self.quietLogger)
            try await app.test(.live) { client in try await body("http://127.0.0.1:\(try #require(client.port))", server) }
        }

        static let quietLogger = UnifiedPushGatewayRouteTests.quiet
    }

    /// Runs `body` with the Matrix route in front of a UnifiedPush app `up.*` (loopback allowed) and an FCM
    /// stand-in `fcm.app`, and the store the outbox is in.
    static func withGateway(
        discovery: Bool = true, built: @Sendable (MatrixNotifyHandler) -> Void = { _ in }, _ body: @Sendable (any TestClientProtocol, _ base: String, PushServer, any PushStore, RecordingProvider) async throws -> Void
    ) async throws {
        try await PushServer.run { base, server in
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("matrix-up-\(UUID().uuidString).sqlite").path
            let store = try await SQLiteStore.open(path: path, logger: Self.quiet)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let unifiedPush = UnifiedPushProvider(
                configuration: UnifiedPushConfiguration(appID: "up.*", allowedEndpoints: ["127.0.0.1:*"]), logger: Self.quiet
            )
            let fcm = RecordingProvider(appID: "fcm.app", platform: .fcm)
            let dispatcher = Dispatcher(
                directory: ProviderDirectory([unifiedPush, fcm]), store: store, metrics: DeliveryMetrics(factory: NOOPMetricsHandler.instance), logger: Self.quiet
            )
            let handler = MatrixNotifyHandler(
                dispatcher: dispatcher, apps: [:], store: store, metrics: MatrixMetrics(factory: NOOPMetricsHandler.instance), logger: Self.quiet,
                unifiedPushDiscovery: discovery
            )
            built(handler)
            let router = GatewayRouterBuilder.build(routes: handler.routes, metrics: GatewayMetrics(), maxRequestBodySize: 1 << 20)
            var app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: Self.quiet)
            app.addServices(store, unifiedPush)
            try await app.test(.router) { client in try await body(client, base, server, store, fcm) }
        }
    }

    static func device(_ pushkey: String, app: String = "up.element") -> String {
        let key = String(decoding: try! JSONValue.string(pushkey).encoded(), as: UTF8.self)
        return #"{"app_id":"\#(app)","pushkey":\#(key),"pushkey_ts":1700000000,"data":{"format":"event_id_only","default_payload":{"cs":"secret"}}}"#
    }

    static func request(_ devices: [String], content: String = "") -> String {
        #"{"notification":{"event_id":"$e1","room_id":"!r:example.org","prio":"high","counts":{"unread":2}\#(content),"devices":[\#(devices.joined(separator: ","))]}}"#
    }

    @Test func discoveryAnswersWhenAUnifiedPushAppIsConfiguredAnd405Otherwise() async throws {
        try await Self.withGateway { client, _, _, _, _ in
            let response = try await client.execute(uri: "/_matrix/push/v1/notify", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/json")
            let body = try JSONDecoder().decode(JSONValue.self, from: Data(String(buffer: response.body).utf8))
            #expect(body == ["gateway": "matrix", "unifiedpush": ["gateway": "matrix"]])
        }
        try await Self.withGateway(discovery: false) { client, _, _, _, _ in
            let response = try await client.execute(uri: "/_matrix/push/v1/notify", method: .get)
            #expect(response.status == .methodNotAllowed)
            #expect(try JSONDecoder().decode(JSONValue.self, from: Data(String(buffer: response.body).utf8))["errcode"] == "M_UNRECOGNIZED")
        }
    }

    @Test func discoveryFollowsReloadsThatAddOrRemoveTheUnifiedPushApp() async throws {
        let handler = Mutex<MatrixNotifyHandler?>(nil)
        try await Self.withGateway(discovery: false, built: { built in handler.withLock { $0 = built } }) { client, _, _, _, _ in
            func get() async throws -> (HTTPResponse.Status, String?, JSONValue) {
                let response = try await client.execute(uri: "/_matrix/push/v1/notify", method: .get)
                let body = try JSONDecoder().decode(JSONValue.self, from: Data(String(buffer: response.body).utf8))
                return (response.status, response.headers[.allow], body)
            }
            func allowForPut() async throws -> String? {
                try await client.execute(uri: "/_matrix/push/v1/notify", method: .put).headers[.allow]
            }
            var (status, allow, body) = try await get()
            #expect(status == .methodNotAllowed && allow == "POST" && body["errcode"] == "M_UNRECOGNIZED")
            // Another method's 405 agrees: GET is not answered while discovery is off.
            #expect(try await allowForPut() == "POST")
            handler.withLock { $0 }?.replaceApps([:], unifiedPushDiscovery: true)
            (status, _, body) = try await get()
            #expect(status == .ok && body == ["gateway": "matrix", "unifiedpush": ["gateway": "matrix"]])
            #expect(try await allowForPut() == "POST, GET, HEAD")
            handler.withLock { $0 }?.replaceApps([:], unifiedPushDiscovery: false)
            (status, allow, body) = try await get()
            #expect(status == .methodNotAllowed && allow == "POST" && body["errcode"] == "M_UNRECOGNIZED")
            // POST is unaffected either way.
            let post = try await client.execute(uri: "/_matrix/push/v1/notify", method: .post, body: ByteBuffer(string: Self.request([Self.device("fcm-token", app: "fcm.app")])))
            #expect(post.status == .ok)
        }
    }

    @Test func aBatchIsDeliveredDeviceByDeviceAndRejectedPushkeysAreEchoedExactly() async throws {
        try await Self.withGateway { client, base, server, store, fcm in
            let before = Date()
            let delivered = "\(base)/up/200/upAbC?up=1"
            let slash = "\(base)/up/201/topic/?up=1&x=%2Fy"
            let gone = "\(base)/up/404/upGone?up=1&b=2&a=1"
            let expired = "\(base)/up/410/upX"
            let malformed = "not a url at all"
            let private_ = "https://10.0.0.1/up/200"
            let failing = "\(base)/up/503/upBusy?up=1"
            // Not in canonical form (the scheme in capitals, an escaped tilde): echoed as it came, as
            // Synapse finds the pusher by the pushkey's exact text.
            let uncanonical = base.replacingOccurrences(of: "http://", with: "HTTP://") + "/up/404/%7eup?b=2&a=1"
            let (status, body) = try await MatrixNotifyRouteTests.notify(
                client,
                Self.request([
                    Self.device(delivered), Self.device(gone), Self.device(malformed), Self.device(slash), Self.device(failing),
                    Self.device(expired), Self.device("fcm-token", app: "fcm.app"), Self.device(private_), Self.device(uncanonical),
                ])
            )
            // One malformed URL fails only its own device; the temporary failure is not rejected, and the
            // answer is 200 rather than 502: it is queued.
            #expect(status == .ok)
            #expect(body == ["rejected": [.string(gone), .string(malformed), .string(expired), .string(private_), .string(uncanonical)]])
            let targets = Set(await server.received.map(\.target))
            #expect(
                targets == ["/up/200/upAbC?up=1", "/up/201/topic/?up=1&x=%2Fy", "/up/404/upGone?up=1&b=2&a=1", "/up/410/upX", "/up/503/upBusy?up=1", "/up/404/%7eup?b=2&a=1"]
            )
            #expect(fcm.deliveries.map(\.token) == ["fcm-token"])
            // What the endpoint received: the notification without its devices (no app id, pushkey or secret).
            let received = try #require(await server.received.first { $0.target == "/up/200/upAbC?up=1" }?.body)
            #expect(received == ["notification": ["event_id": "$e1", "room_id": "!r:example.org", "prio": "high", "counts": ["unread": 2]]])
            // The failing endpoint's notification waits in the outbox.
            let queued = try await store.claimDue(now: Date().addingTimeInterval(3600), limit: 10, leaseFor: .seconds(60), owner: "test")
            #expect(queued.flatMap(\.message.pushTokens) == [failing])
            #expect(queued.first?.message.appID == "up.*")
            // Retry-After: 7 is honoured: the entry waits 7 s from the 503, which came after `before`. The
            // check asks for 6 s (the store keeps milliseconds), still far from the 1 s a 503 without
            // Retry-After waits.
            #expect(queued.first.map { $0.message.notBefore >= before.addingTimeInterval(6) } == true)
        }
    }

    /// A notification's devices are delivered at once, not one after another: four endpoints that each
    /// take two seconds to answer are all waited for together, and cost the homeserver's request about
    /// two seconds.
    @Test func theDevicesOfANotificationAreDeliveredInParallel() async throws {
        try await Self.withGateway { client, base, server, _, _ in
            let devices = (1...4).map { Self.device("\(base)/up/200/slow\($0)?up=1") }
            let started = ContinuousClock.now
            let (status, body) = try await MatrixNotifyRouteTests.notify(client, Self.request(devices))
            let took = ContinuousClock.now - started
            #expect(status == .ok && body == ["rejected": []])
            #expect(await server.received.count == 4)
            // The push server had all four requests at once; one after another, never more than one.
            #expect(await server.slowInFlightPeak == 4)
            // One after another would take at least 8 s; together, two and what the machine adds.
            #expect(took < .seconds(6), "\(took)")
        }
    }

    @Test func aNotificationOverTheLimitGoesInTheEventIDOnlyForm() async throws {
        try await Self.withGateway { client, base, server, _, _ in
            let long = String(repeating: "a", count: 5_000)
            let content = #","type":"m.room.message","sender":"@a:example.org","content":{"msgtype":"m.text","body":"\#(long)"}"#
            let (status, body) = try await MatrixNotifyRouteTests.notify(client, Self.request([Self.device("\(base)/up/201/upLong")], content: content))
            #expect(status == .ok)
            #expect(body == ["rejected": []])
            let received = await server.received
            #expect(received.map(\.target) == ["/up/201/upLong"])
            #expect(received.first?.body == ["notification": ["event_id": "$e1", "room_id": "!r:example.org", "prio": "high", "counts": ["unread": 2]]])
        }
    }

    @Test func aMessageThePushServerRefusesGoesAgainInTheEventIDOnlyFormAndThePushkeyStays() async throws {
        try await Self.withGateway { client, base, server, _, _ in
            let content = #","type":"m.room.message","sender":"@a:example.org","content":{"msgtype":"m.text","body":"hello"}"#
            let (status, body) = try await MatrixNotifyRouteTests.notify(client, Self.request([Self.device("\(base)/up/413/upSmall")], content: content))
            #expect(status == .ok)
            #expect(body == ["rejected": []])
            let received = await server.received
            #expect(received.count == 2)
            #expect(received.first?.body?["notification"]?["content"]?["body"] == "hello")
            #expect(received.last?.body == ["notification": ["event_id": "$e1", "room_id": "!r:example.org", "prio": "high", "counts": ["unread": 2]]])
        }
    }
}
