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
            @Sendable func request(_ index: Int) -> (HTTPRequestHead, ByteBuffer) {
                HTTP1LoadGenerator.jsonPost(path: "/_matrix/push/v1/notify", host: "127.0.0.1:\(sandbox.port)", body: #"""
                    {"notification":{"event_id":"$event\#(index)","room_id":"!room:example.org","type":"m.room.message",
                     "sender":"@alice:example.org","sender_display_name":"Alice","room_name":"Room","prio":"high",
                     "content":{"msgtype":"m.text","body":"hello"},"counts":{"unread":2},"devices":[\#(device)]}}
                    """#)
            }
            let generator = HTTP1LoadGenerator(host: "127.0.0.1", port: sandbox.port)
            try await generator.run(count: concurrency * 4, concurrency: concurrency, recorder: nil) { request(-$0 - 1) }
            let recorder = LatencyRecorder()
            let started = ContinuousClock.now
            try await generator.run(count: count, concurrency: concurrency, recorder: recorder, request: request)
            print(recorder.summary(label: "matrix notify → \(app) (concurrency \(concurrency))", elapsed: ContinuousClock.now - started))
        }
    }
}
