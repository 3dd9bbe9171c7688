import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PushgateCore

/// Notify requests (one device each, Synapse's full format) over HTTP to the gateway, delivering to the
/// emulators through a demo app: requests/s and latency at a given concurrency.
enum MatrixBenchmark {
    static func run(app: String, count: Int, concurrency: Int) async throws {
        try await SandboxGateway.with { sandbox in
            let device: String
            if app == "demo.apns" {
                let bytes = stride(from: 0, to: sandbox.apnsToken.count, by: 2).map { offset -> UInt8 in
                    let start = sandbox.apnsToken.index(sandbox.apnsToken.startIndex, offsetBy: offset)
                    return UInt8(sandbox.apnsToken[start..<sandbox.apnsToken.index(start, offsetBy: 2)], radix: 16) ?? 0
                }
                device = #"{"app_id":"demo.apns","pushkey":"\#(Data(bytes).base64EncodedString())"}"#
            } else {
                let subscription = try JSONDecoder().decode(JSONValue.self, from: Data(sandbox.webPushSubscription.utf8))
                let endpoint = subscription["endpoint"]?.stringValue ?? ""
                let p256dh = subscription["keys"]?["p256dh"]?.stringValue ?? ""
                let auth = subscription["keys"]?["auth"]?.stringValue ?? ""
                device = #"{"app_id":"demo.webpush","pushkey":"\#(p256dh)","data":{"endpoint":"\#(endpoint)","auth":"\#(auth)"}}"#
            }
            @Sendable func body(_ index: Int) -> ByteBuffer {
                ByteBuffer(string: #"""
                    {"notification":{"event_id":"$event\#(index)","room_id":"!room:example.org","type":"m.room.message",
                     "sender":"@alice:example.org","sender_display_name":"Alice","room_name":"Room","prio":"high",
                     "content":{"msgtype":"m.text","body":"hello"},"counts":{"unread":2},"devices":[\#(device)]}}
                    """#)
            }
            let client = HTTPClient(
                eventLoopGroupProvider: .singleton,
                configuration: .init(connectionPool: .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: concurrency))
            )
            let url = "http://127.0.0.1:\(sandbox.port)/_matrix/push/v1/notify"
            @Sendable func notify(_ index: Int) async -> String {
                var request = HTTPClientRequest(url: url)
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(body(index))
                guard let response = try? await client.execute(request, timeout: .seconds(30)) else { return "transport_error" }
                _ = try? await response.body.collect(upTo: 1 << 16)
                return String(response.status.code)
            }
            await runConcurrently(count: concurrency * 4, concurrency: concurrency) { _ = await notify(-$0 - 1) }
            let recorder = LatencyRecorder()
            let started = ContinuousClock.now
            await runConcurrently(count: count, concurrency: concurrency) { index in
                let begin = ContinuousClock.now
                let status = await notify(index)
                recorder.record(ContinuousClock.now - begin, outcome: status)
            }
            print(recorder.summary(label: "matrix notify → \(app) (concurrency \(concurrency))", elapsed: ContinuousClock.now - started))
            try await client.shutdown()
        }
    }
}
