import AsyncHTTPClient
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import PushgateCore
import PushgateTestSupport
import Synchronization
import Testing

/// gorush's callers against the real `pushgate` binary and the sandbox's provider emulators: the exact
/// answers of async and sync mode, authentication, what the devices receive, the counters, and the
/// feedback webhook with a receiver that fails first.
@Suite("gorush API, end to end")
struct GorushEndToEndTests {
    static let apnsToken = String(repeating: "a1", count: 32)
    static let deadToken = "dead" + String(repeating: "0", count: 60)

    struct Answer {
        let status: Int
        let body: String
        let headers: HTTPHeaders
    }

    static func post(_ port: Int, _ path: String, _ body: String, bearer: String? = nil) async throws -> Answer {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        return Answer(status: Int(response.status.code), body: String(buffer: try await response.body.collect(upTo: 1 << 20)), headers: response.headers)
    }

    static func get(_ port: Int, _ path: String) async throws -> Answer {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"), timeout: .seconds(30))
        return Answer(status: Int(response.status.code), body: String(buffer: try await response.body.collect(upTo: 1 << 20)), headers: response.headers)
    }

    static func getURL(_ url: String) async throws -> String {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
        return String(buffer: try await response.body.collect(upTo: 1 << 24))
    }

    static func eventually(timeout: Duration = .seconds(60), _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    static func start(_ gorush: String, directory: TemporaryDirectory) async throws -> (GatewayProcess, Int) {
        let config = try directory.write("pushgate.yaml", """
            http: {bind_addresses: ['127.0.0.1'], port: 0}
            log: {format: json}
            database: {url: 'sqlite:store.sqlite'}
            gorush:
              ios_app: demo.apns
              android_app: demo.fcm
            \(gorush)
            """)
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        let port = try #require(try await gateway.waitForListeners().first).port
        return (gateway, port)
    }

    static func json(_ text: String) throws -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    /// gorush's welcome at `/`, which probes written for gorush ask for (its Helm chart's readiness probe),
    /// while the console is off; with the console on, `/` redirects to it.
    @Test func theRootAnswersGorushsWelcomeWhileTheConsoleIsOff() async throws {
        let directory = try TemporaryDirectory()
        let (gateway, port) = try await Self.start("  allow_unauthenticated: true\nconsole: {enabled: false}", directory: directory)
        defer { gateway.kill() }
        let welcome = try await Self.get(port, "/")
        #expect(welcome.status == 200 && welcome.body == #"{"text":"Welcome to notification server."}"#, "\(welcome.status) \(welcome.body)")
        #expect(welcome.headers.first(name: "X-GORUSH-VERSION") != nil)
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
    }

    @Test func asyncAnswersAtOnceDeliversWhatGorushWouldAndCountsInTheStore() async throws {
        let directory = try TemporaryDirectory()
        let (gateway, port) = try await Self.start("  auth_tokens: [s3cret]", directory: directory)

        let request = #"""
            {"notifications":[
              {"tokens":["\#(Self.apnsToken)","\#(Self.deadToken)"],"platform":1,"title":"Hi","message":"Hello","badge":0,"sound":"default",
               "topic":"im.pushgate.sandbox","priority":"normal","collapse_id":"c1","thread-id":"t1","data":{"chatId":"0x01"}},
              {"tokens":["fcm-ok-1","unregistered-gone"],"platform":2,"title":"T","message":"M","priority":"high","data":{"n":1}},
              {"tokens":["hms-x"],"platform":3,"message":"dropped"}]}
            """#
        // Without the token: 401 in gorush's shape, and nothing is sent.
        let refused = try await Self.post(port, "/api/push", request)
        #expect(refused.status == 401)
        #expect(refused.body == #"{"code":401,"message":"Missing bearer token."}"#)
        #expect(try await Self.post(port, "/api/push", request, bearer: "wrong").status == 401)
        #expect(try await NextcloudEndToEndTests.deliveries(port).isEmpty)

        let answer = try await Self.post(port, "/api/push", request, bearer: "s3cret")
        #expect(answer.status == 200)
        #expect(answer.body == #"{"counts":5,"logs":[],"success":"ok"}"#)
        #expect(answer.headers.first(name: "Content-Type") == "application/json; charset=utf-8")
        #expect(answer.headers.first(name: "X-GORUSH-VERSION") != nil)

        #expect(try await Self.eventually { try await NextcloudEndToEndTests.deliveries(port).count == 4 })
        let deliveries = try await NextcloudEndToEndTests.deliveries(port)
        let apns = try #require(deliveries.first { $0["token"]?.stringValue == Self.apnsToken })
        #expect(apns["status"] == 200)
        #expect(apns["headers"]?["apns-topic"] == "im.pushgate.sandbox")
        #expect(apns["headers"]?["apns-priority"] == "5")
        #expect(apns["headers"]?["apns-push-type"] == "alert")
        #expect(apns["headers"]?["apns-collapse-id"] == "c1")
        #expect(try Self.json(apns["body"]?.stringValue ?? "") == Self.json(
            #"{"aps":{"alert":{"title":"Hi","body":"Hello"},"badge":0,"sound":"default","thread-id":"t1"},"chatId":"0x01"}"#
        ))
        let fcm = try #require(deliveries.first { $0["token"]?.stringValue == "fcm-ok-1" })
        #expect(fcm["status"] == 200)
        #expect(fcm["headers"]?["content-type"] == "application/json; charset=UTF-8")
        #expect(fcm["headers"]?["user-agent"] == "pushgate")
        #expect(fcm["headers"]?["authorization"] == "Bearer (redacted)")
        #expect(try Self.json(fcm["body"]?.stringValue ?? "") == Self.json(
            #"{"android":{"priority":"high"},"data":{"n":"1"},"notification":{"body":"M","title":"T"},"token":"fcm-ok-1"}"#
        ))
        #expect(deliveries.contains { $0["token"]?.stringValue == Self.deadToken && $0["status"] == 410 })
        #expect(deliveries.contains { $0["token"]?.stringValue == "unregistered-gone" && $0["status"] == 404 })

        // The counters come from the store once the outbox has finished.
        let expected = #"{"version":"\#(PushgateVersion.current)","busy_workers":0,"success_tasks":2,"failure_tasks":2,"submitted_tasks":4,"total_count":5,"ios":{"push_success":1,"push_error":1},"android":{"push_success":1,"push_error":1},"huawei":{"push_success":0,"push_error":0}}"#
        #expect(try await Self.eventually { try await Self.get(port, "/api/stat/app").body == expected })
        let metrics = try await Self.get(port, "/metrics").body
        #expect(metrics.contains("gorush_total_push_count 5"))
        #expect(metrics.contains("gorush_ios_error 1"))
        #expect(try await Self.get(port, "/healthz").status == 200)
        #expect(try await Self.get(port, "/version").body == #"{"source":"pushgate","version":"\#(PushgateVersion.current)"}"#)

        // gorush's 400 answers, verbatim.
        #expect(try await Self.post(port, "/api/push", "{", bearer: "s3cret").body == #"{"code":400,"message":"Missing notifications field."}"#)
        #expect(try await Self.post(port, "/api/push", #"{"notifications":[]}"#, bearer: "s3cret").body == #"{"code":400,"message":"Notifications field is empty."}"#)
        let many = "{\"notifications\":[" + Array(repeating: #"{"platform":1,"tokens":["x"]}"#, count: 101).joined(separator: ",") + "]}"
        #expect(try await Self.post(port, "/api/push", many, bearer: "s3cret").body == #"{"code":400,"message":"Number of notifications(101) over limit(100)"}"#)

        // Tokens never reach the log.
        #expect(!gateway.errors.contains(Self.apnsToken))
        #expect(!gateway.errors.contains("fcm-ok-1"))
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
    }

    @Test func syncListsEveryFailedTokenInFullAndTheWebhookGetsEachAfterAFailure() async throws {
        let received = Mutex<[(body: String, headers: [String: String])]>([])
        let attempts = Mutex(0)
        let router = Router()
        router.post("/feedback") { request, _ -> Response in
            let body = String(buffer: try await request.body.collect(upTo: 1 << 16))
            // The receiver is down for its first two posts.
            let attempt = attempts.withLock { count in
                count += 1
                return count
            }
            guard attempt > 2 else { return Response(status: .internalServerError) }
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            received.withLock { $0.append((body, headers)) }
            return Response(status: .ok)
        }
        let receiverPort = PortBox()
        let receiver = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in receiverPort.value = channel.localAddress?.port ?? 0 }, logger: TestLogging.quiet
        )
        try await RunningServices.with([receiver]) {
            while receiverPort.value == 0 { try await Task.sleep(for: .milliseconds(20)) }
            let directory = try TemporaryDirectory()
            let (gateway, port) = try await Self.start("""
                  allow_unauthenticated: true
                  sync: true
                  hide_token: false
                  feedback_hook_url: http://127.0.0.1:\(receiverPort.value)/feedback
                  feedback_header: ['x-gorush-key: abc']
                """, directory: directory)
            let answer = try await Self.post(port, "/api/push", #"""
                {"notifications":[
                  {"notif_id":"n-1","tokens":["\#(Self.apnsToken)","\#(Self.deadToken)"],"platform":1,"message":"Hello"},
                  {"notif_id":"n-2","tokens":["fcm-ok","unregistered-gone"],"platform":2,"message":"Hi <you>"}]}
                """#)
            #expect(answer.status == 200)
            let failedIOS = #"{"notif_id":"n-1","type":"failed-push","platform":"ios","token":"\#(Self.deadToken)","message":"Hello","error":"Unregistered"}"#
            let failedAndroid = #"{"notif_id":"n-2","type":"failed-push","platform":"android","token":"unregistered-gone","message":"Hi \u003cyou\u003e","error":"Requested entity was not found."}"#
            #expect(answer.body == #"{"counts":4,"logs":[\#(failedIOS),\#(failedAndroid)],"success":"ok"}"#)

            // Each failure is posted on its own, retried through the outbox after the receiver's failures.
            #expect(try await Self.eventually { received.withLock { $0.count } == 2 })
            let posts = received.withLock { $0 }
            #expect(Set(posts.map(\.body)) == [failedIOS, failedAndroid])
            #expect(posts.allSatisfy { $0.headers["x-gorush-key"] == "abc" && $0.headers["content-type"] == "application/json; charset=utf-8" })
            #expect(attempts.withLock { $0 } == 4)
            gateway.signal(SIGTERM)
            #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
        }
    }

    /// Exactly what status-go's push notification server posts (`protocol/pushnotificationserver/gorush.go`):
    /// one notification per device, both generations; the devices get the keys status-mobile reads.
    @Test func statusGosThreeKindsReachTheDevicesAsStatusMobileReadsThem() async throws {
        let directory = try TemporaryDirectory()
        let (gateway, port) = try await Self.start("  allow_unauthenticated: true", directory: directory)
        let texts = ["You have a new message", "Someone mentioned you", "Someone requested to join a community you are an admin of"]
        for (index, text) in texts.enumerated() {
            let iosToken = String(repeating: "c\(index)", count: 32)
            let answer = try await Self.post(port, "/api/push", #"""
                {"notifications":[{"tokens":["\#(iosToken)"],"platform":1,"message":"\#(text)","topic":"im.pushgate.sandbox","data":{"encryptedMessage":"0xab\#(index)","chatId":"0x0\#(index)","publicKey":"0x04ff"}}]}
                """#)
            #expect(answer.body == #"{"counts":2,"logs":[],"success":"ok"}"#)
            let android = try await Self.post(port, "/api/push", #"""
                {"notifications":[{"tokens":["fcm-status-\#(index)"],"platform":2,"message":"\#(text)","topic":"","data":{"encryptedMessage":"0xab\#(index)","chatId":"0x0\#(index)","publicKey":"0x04ff"}}]}
                """#)
            #expect(android.body == #"{"counts":1,"logs":[],"success":"ok"}"#)
        }
        // The newer generation, for APNs tokens.
        let newer = try await Self.post(port, "/api/push", #"""
            {"notifications":[{"tokens":["\#(String(repeating: "d7", count: 32))"],"platform":1,"message":"New message in Messenger","topic":"im.pushgate.sandbox","content_available":true,"sound":"default","priority":"high","push_type":"alert","data":{"encryptedMessage":"0x","chatId":"0x07","publicKey":"0x04ff","deepLink":"status-app://chats"}}]}
            """#)
        #expect(newer.body == #"{"counts":2,"logs":[],"success":"ok"}"#)
        #expect(try await Self.eventually { try await NextcloudEndToEndTests.deliveries(port).count == 7 })
        let deliveries = try await NextcloudEndToEndTests.deliveries(port)
        for (index, text) in texts.enumerated() {
            let apns = try #require(deliveries.first { $0["token"]?.stringValue == String(repeating: "c\(index)", count: 32) })
            #expect(apns["status"] == 200)
            #expect(apns["headers"]?["apns-topic"] == "im.pushgate.sandbox")
            #expect(apns["headers"]?["apns-push-type"] == "alert")
            #expect(apns["headers"]?["apns-priority"] == nil)
            #expect(try Self.json(apns["body"]?.stringValue ?? "") == Self.json(
                #"{"aps":{"alert":"\#(text)"},"encryptedMessage":"0xab\#(index)","chatId":"0x0\#(index)","publicKey":"0x04ff"}"#
            ))
            let fcm = try #require(deliveries.first { $0["token"]?.stringValue == "fcm-status-\(index)" })
            #expect(fcm["status"] == 200)
            #expect(try Self.json(fcm["body"]?.stringValue ?? "") == Self.json(
                // No `priority` in status-go's call: gorush sends no `android` block.
                #"{"data":{"encryptedMessage":"0xab\#(index)","chatId":"0x0\#(index)","publicKey":"0x04ff"},"notification":{"body":"\#(text)"},"token":"fcm-status-\#(index)"}"#
            ))
        }
        let latest = try #require(deliveries.first { $0["token"]?.stringValue == String(repeating: "d7", count: 32) })
        #expect(latest["status"] == 200)
        #expect(latest["headers"]?["apns-push-type"] == "alert")
        #expect(latest["headers"]?["apns-priority"] == "10")
        #expect(try Self.json(latest["body"]?.stringValue ?? "") == Self.json(
            #"{"aps":{"alert":"New message in Messenger","content-available":1,"sound":"default"},"encryptedMessage":"0x","chatId":"0x07","publicKey":"0x04ff","deepLink":"status-app://chats"}"#
        ))
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
    }

    @Test func huaweiNotificationsGoThroughTheHMSApp() async throws {
        let directory = try TemporaryDirectory()
        let (gateway, port) = try await Self.start("""
              huawei_app: demo.hms
              allow_unauthenticated: true
              sync: true
              hide_token: false
            """, directory: directory)
        let answer = try await Self.post(port, "/api/push", #"""
            {"notifications":[{"notif_id":"h1","tokens":["hms-device","invalid-device"],"platform":3,"title":"T","message":"M","priority":"high","huawei_data":"{\"k\":1}"}]}
            """#)
        #expect(answer.body == #"{"counts":2,"logs":[{"notif_id":"h1","type":"failed-push","platform":"huawei","token":"invalid-device","message":"M","error":"80300007 all tokens are invalid"}],"success":"ok"}"#)
        let deliveries = try await NextcloudEndToEndTests.deliveries(port)
        let hms = try #require(deliveries.first { $0["provider"] == "hms" && $0["token"]?.stringValue == "hms-device" })
        #expect(hms["status"] == 200)
        let message = try Self.json(hms["body"]?.stringValue ?? "")
        #expect(message["android"]?["urgency"] == "HIGH")
        #expect(message["android"]?["notification"]?["title"] == "T")
        #expect(message["android"]?["notification"]?["body"] == "M")
        #expect(message["android"]?["notification"]?["click_action"] == ["type": 1, "action": "Action"])
        #expect(message["data"] == #"{"k":1}"#)
        #expect(message["token"] == ["hms-device"])
        // gorush's default day, stated by the front end and written by the back end as gorush writes it.
        #expect(message["android"]?["ttl"] == "86400s")
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
    }

    /// In sync mode, what the providers could not take within `sync_timeout` is queued with what is left of
    /// its time to live (the attempt's wait taken off), and what has none left is listed as failed. The FCM
    /// emulator holds `slow…` tokens for 10 s, past the 2-s `sync_timeout`.
    @Test func syncQueuesWhatIsLeftOfATimeToLive() async throws {
        let directory = try TemporaryDirectory()
        let (gateway, port) = try await Self.start("""
              allow_unauthenticated: true
              sync: true
              sync_timeout: 2
              hide_token: false
            """, directory: directory)
        let answer = try await Self.post(port, "/api/push", #"""
            {"notifications":[
              {"notif_id":"short","tokens":["slow-short"],"platform":2,"message":"M","android":{"ttl":"1s"}},
              {"notif_id":"long","tokens":["slow-long"],"platform":2,"message":"M","android":{"ttl":"600s"}}]}
            """#)
        let expired = #"{"notif_id":"short","type":"failed-push","platform":"android","token":"slow-short","message":"M","error":"its time to live ran out before it could be delivered"}"#
        #expect(answer.body == #"{"counts":2,"logs":[\#(expired)],"success":"ok"}"#, "\(gateway.errors)")
        // The first attempt with all of it, the queued one with at least the 2 s of the attempt less.
        var sent: [String] = []
        _ = try await Self.eventually {
            sent = try await NextcloudEndToEndTests.deliveries(port).filter { $0["token"]?.stringValue == "slow-long" }.compactMap { delivery in
                try Self.json(delivery["body"]?.stringValue ?? "")["android"]?["ttl"]?.stringValue
            }
            return sent.count >= 2
        }
        #expect(sent.first == "600s")
        let left = sent.dropFirst().first.flatMap { Int($0.dropLast()) }
        #expect(left.map { $0 <= 598 && $0 > 500 } == true, "\(sent)")
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
    }

    /// A request still being answered when SIGTERM arrives gets its whole answer before the gateway exits:
    /// the FCM emulator holds `slow…` tokens for 10 s, so the sync answer is in flight when the signal
    /// comes 3 s after the request.
    @Test func aRequestInFlightAtSIGTERMIsAnsweredBeforeTheGatewayExits() async throws {
        let directory = try TemporaryDirectory()
        let (gateway, port) = try await Self.start("""
              allow_unauthenticated: true
              sync: true
            """, directory: directory)
        let sent = ContinuousClock.now
        async let answer = Self.post(port, "/api/push", #"{"notifications":[{"tokens":["slow-1"],"platform":2,"message":"M"}]}"#)
        try await Task.sleep(for: .seconds(3))
        gateway.signal(SIGTERM)
        let answered = try await answer
        #expect(answered.status == 200)
        #expect(answered.body == #"{"counts":1,"logs":[],"success":"ok"}"#, "\(gateway.errors)")
        #expect(ContinuousClock.now - sent >= .seconds(9), "answered after the emulator's delay, not cut short")
        #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0, "\(gateway.errors)")
    }
}
