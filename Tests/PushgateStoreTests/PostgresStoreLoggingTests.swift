import Foundation
import Logging
import PushgateCore
import PushgateStore
import PushgateStorePostgres
import PushgateTestSupport
import ServiceLifecycleTestKit
import Testing

/// postgres-nio logs every message the server sends at `trace`, rows as a hex dump of their bytes; the
/// store never lets it log below `debug`, whatever the gateway's level.
@Suite struct PostgresStoreLoggingTests {
    @Test func rowsNeverReachTheLogEvenAtTrace() async throws {
        let database = try await TestDatabase.make(.postgres)
        let log = LogRecorder()
        let store = try await PostgresStore.connect(database.postgres!, logger: log.logger())
        let token = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await store.run() }
                let now = Date(millisecondsSince1970: 1_700_000_000_000)
                try await store.saveDevice(
                    DeviceRegistration(
                        namespace: "logging", deviceID: "d1", appID: "im.example.ios", pushToken: token, publicKey: "", attributes: [:],
                        createdAt: now, updatedAt: now
                    )
                )
                let read = try await store.device(namespace: "logging", deviceID: "d1")
                #expect(read?.pushToken == token)
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
        let tokenHex = Array(token.utf8).prefix(8).map { String(format: "%02x", $0) }.joined()
        #expect(!log.all.isEmpty, "the migration's own line at least")
        #expect(log.all.allSatisfy { $0.level >= .debug }, "\(log.all.filter { $0.level < .debug }.prefix(3).map(\.line))")
        #expect(!log.all.contains { $0.line.replacingOccurrences(of: " ", with: "").contains(tokenHex) || $0.line.contains(token) })
    }
}
