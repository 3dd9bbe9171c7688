import AsyncHTTPClient
import Crypto
import CryptoExtras
import Foundation
import NIOCore
import NIOHTTP1
import PushgateConfig
import PushgateCore
import PushgateServer
import PushgateStore
import Synchronization

/// Nextcloud servers posting `POST /notifications` batches to the gateway: each entry's token hash and
/// user signature are checked, then delivered to the emulators through demo.fcm or demo.apns.
///
/// The devices are stored up front (as registrations would leave them); each batch carries `batchSize`
/// entries for distinct random devices, signed as nextcloud/notifications signs them.
enum NextcloudBenchmark {
    static let users = 8
    static let devices = 2_000

    struct Device {
        let identifier: String
        let token: String
        let user: Int
    }

    static func run(target: String, batches: Int, senders: Int, batchSize: Int) async throws {
        var settings = NextcloudSettings()
        settings.fcmApp = "demo.fcm"
        settings.apnsApp = "demo.apns"
        try await SandboxGateway.with(nextcloud: settings) { sandbox in
            let keys = try (0..<Self.users).map { _ in try _RSA.Signing.PrivateKey(keySize: .bits2048) }
            let devices = (0..<Self.devices).map { index -> Device in
                let identifier = Data(SHA512.hash(data: Data("bench-device-\(index)".utf8))).base64EncodedString()
                let useAPNs = target == "demo.apns" || (target == "mixed" && index % 2 == 1)
                return Device(identifier: identifier, token: useAPNs ? Self.apnsToken(index) : "bench-fcm-token-\(index)", user: index % Self.users)
            }
            let now = Date()
            try await sandbox.gateway.store.saveDevices(
                devices.map { device in
                    DeviceRegistration(
                        namespace: "nextcloud", deviceID: device.identifier, appID: device.token.count == 64 ? "demo.apns" : "demo.fcm",
                        pushToken: device.token, publicKey: keys[device.user].publicKey.pemRepresentation, attributes: [:], createdAt: now, updatedAt: now
                    )
                }
            )
            // One signed subject per user, as the server signs each device's ciphertext with the user key.
            let subjects = (0..<Self.users).map { _ in Data((0..<256).map { _ in UInt8.random(in: 0...255) }) }
            let signatures = try (0..<Self.users).map { user in
                try keys[user].signature(for: SHA512.hash(data: subjects[user]), padding: .insecurePKCS1v1_5).rawRepresentation.base64EncodedString()
            }
            let entries = devices.map { device in
                Self.entry(device, subject: subjects[device.user].base64EncodedString(), signature: signatures[device.user])
            }
            let bodies = (0..<64).map { _ in
                (0..<batchSize).map { position in
                    "notifications%5B\(position)%5D=" + Self.urlencode(entries[Int.random(in: 0..<entries.count)])
                }.joined(separator: "&")
            }
            let client = HTTPClient(
                eventLoopGroupProvider: .singleton,
                configuration: .init(connectionPool: .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: senders))
            )
            let url = "http://127.0.0.1:\(sandbox.port)/notifications"
            let problems = Mutex(0)
            @Sendable func post(_ index: Int) async -> String {
                var request = HTTPClientRequest(url: url)
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                request.body = .bytes(ByteBuffer(string: bodies[abs(index) % bodies.count]))
                guard let response = try? await client.execute(request, timeout: .seconds(60)) else { return "transport_error" }
                let body = (try? await response.body.collect(upTo: 1 << 20)).map { String(buffer: $0) } ?? ""
                if !body.contains("\"failed\":0") || !body.contains("\"unknown\":[]") { problems.withLock { $0 += 1 } }
                return String(response.status.code)
            }
            await runConcurrently(count: senders * 2, concurrency: senders) { _ = await post(-$0 - 1) }
            problems.withLock { $0 = 0 }
            let recorder = LatencyRecorder()
            let started = ContinuousClock.now
            await runConcurrently(count: batches, concurrency: senders) { index in
                let begin = ContinuousClock.now
                let status = await post(index)
                recorder.record(ContinuousClock.now - begin, outcome: status)
            }
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print(recorder.summary(label: "nextcloud batches of \(batchSize) → \(target) (\(senders) senders), latency per batch", elapsed: elapsed))
            let queued = try await sandbox.gateway.store.pendingCount()
            print(String(
                format: "notifications/s: %.0f; batches not answered {failed: 0, unknown: []}: %d; left in the outbox: %d",
                Double(batches * batchSize) / seconds, problems.withLock { $0 }, queued
            ))
            try await client.shutdown()
        }
    }

    /// 64 hex digits that no emulator failure prefix starts with.
    static func apnsToken(_ index: Int) -> String {
        "a1" + SHA256.hash(data: Data("apns-\(index)".utf8)).map { String(format: "%02x", $0) }.joined().prefix(62)
    }

    static func entry(_ device: Device, subject: String, signature: String) -> String {
        let hash = SHA512.hash(data: Data(device.token.utf8)).map { String(format: "%02x", $0) }.joined()
        let escaped = { (text: String) in text.replacingOccurrences(of: "/", with: "\\/") }
        return #"{"deviceIdentifier":"\#(escaped(device.identifier))","pushTokenHash":"\#(hash)","subject":"\#(escaped(subject))","signature":"\#(escaped(signature))","priority":"high","type":"alert"}"#
    }

    /// PHP `urlencode`.
    static func urlencode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-_.")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
