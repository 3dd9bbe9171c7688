import Foundation
import PushgateConfig
import PushgateServer
import PushgateStore

/// Registration lookups with many devices stored: fills the store with `count` Nextcloud registrations
/// (in batches, timing the inserts), then times single lookups and 100-id batch lookups of random stored
/// identifiers, as `POST /notifications` does.
enum DeviceLookupBenchmark {
    static func run(database: DatabaseSettings, label: String, count: Int, lookups: Int) async throws {
        try await SandboxGateway.with(database: database) { sandbox in
            let store = sandbox.gateway.store
            let key = "-----BEGIN PUBLIC KEY-----\n" + String(repeating: "M", count: 392) + "\n-----END PUBLIC KEY-----\n"
            let id = { (index: Int) in "lookup-device-\(index)-" + String(repeating: "x", count: 60) }
            let existing = try await store.deviceCount(namespace: "nextcloud")
            let fillStarted = ContinuousClock.now
            let now = Date()
            var next = existing
            while next < count {
                let chunk = (next..<min(count, next + 10_000)).map { index in
                    DeviceRegistration(
                        namespace: "nextcloud", deviceID: id(index), appID: "demo.fcm", pushToken: "fcm-token-\(index)", publicKey: key,
                        attributes: [:], createdAt: now, updatedAt: now
                    )
                }
                try await store.saveDevices(chunk)
                next += chunk.count
            }
            let filled = ContinuousClock.now - fillStarted
            print("\(label): \(count) devices stored (\(count - existing) inserted in \(LatencyRecorder.milliseconds(filled) / 1000) s)")

            let single = LatencyRecorder()
            var started = ContinuousClock.now
            for _ in 0..<lookups {
                let begin = ContinuousClock.now
                let found = try await store.device(namespace: "nextcloud", deviceID: id(Int.random(in: 0..<count)))
                single.record(ContinuousClock.now - begin, outcome: found == nil ? "missing" : "found")
            }
            print(single.summary(label: "\(label): single lookups", elapsed: ContinuousClock.now - started))

            let batched = LatencyRecorder()
            started = ContinuousClock.now
            for _ in 0..<max(1, lookups / 100) {
                let ids = (0..<100).map { _ in id(Int.random(in: 0..<count)) }
                let begin = ContinuousClock.now
                let found = try await store.devices(namespace: "nextcloud", deviceIDs: ids)
                batched.record(ContinuousClock.now - begin, outcome: found.count == Set(ids).count ? "found" : "missing")
            }
            print(batched.summary(label: "\(label): lookups of 100 ids", elapsed: ContinuousClock.now - started))
        }
    }
}
