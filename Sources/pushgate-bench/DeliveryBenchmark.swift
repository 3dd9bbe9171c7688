import Foundation
import PushgateCore
import PushgateDelivery
import PushgateServer

/// Deliveries through one demo app's back end (via the dispatcher) to its emulator.
enum DeliveryBenchmark {
    static func run(app: String, count: Int, concurrency: Int, failures: Bool) async throws {
        try await SandboxGateway.with { sandbox in
            let payload: JSONValue =
                switch app {
                case "demo.apns": ["aps": ["alert": ["loc-key": "MSG_FROM_USER", "loc-args": ["Alice"]], "badge": 2], "room_id": "!r:example.org"]
                case "demo.fcm": ["data": ["room_id": "!r:example.org", "event_id": "$e", "unread": "2", "prio": "high"]]
                default: ["room_id": "!r:example.org", "event_id": "$e", "unread": 2, "content": ["body": "hello from the benchmark"]]
                }
            let notification = PushNotification(payload: payload)
            // With --failures, four in ten fail, one of each failure kind.
            let tokens = failures
                ? sandbox.failureTokens(for: app) + Array(repeating: sandbox.token(for: app), count: 6)
                : [sandbox.token(for: app)]
            let dispatcher = sandbox.gateway.dispatcher
            await runConcurrently(count: concurrency * 4, concurrency: concurrency) { index in
                _ = await dispatcher.deliver(notification, appID: app, token: sandbox.token(for: app), timeout: .seconds(10))
            }
            let recorder = LatencyRecorder()
            let started = ContinuousClock.now
            await runConcurrently(count: count, concurrency: concurrency) { index in
                let begin = ContinuousClock.now
                let outcome = await dispatcher.deliver(notification, appID: app, token: tokens[index % tokens.count], timeout: .seconds(10))
                recorder.record(ContinuousClock.now - begin, outcome: outcome.label)
            }
            print(recorder.summary(label: "\(app) deliveries (concurrency \(concurrency)\(failures ? ", 40% failure tokens" : ""))", elapsed: ContinuousClock.now - started))
        }
    }
}
