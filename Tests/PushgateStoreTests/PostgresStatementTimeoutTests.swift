import Foundation
import PushgateStore
import PushgateStorePostgres
import ServiceLifecycleTestKit
import Testing

/// A statement the store gave up on does not keep its pool connection: the server ends it at the
/// statement timeout.
@Suite struct PostgresStatementTimeoutTests {
    @Test func aWriteStuckBehindALockEndsAtTheStatementTimeout() async throws {
        let made = try await TestDatabase.make(.postgres)
        var configuration = made.postgres!
        configuration.statementTimeout = .seconds(1)
        let database = TestDatabase(kind: .postgres, sqlitePath: nil, postgres: configuration)
        let store = try await PostgresStore.connect(configuration, logger: TestDatabase.logger)
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await store.run() }
                let returned = ReturnedFlag()
                let write = try await database.holdingOutboxWriteLock { () async throws in
                    let write = Task {
                        defer { returned.set() }
                        return try await store.enqueue([OutboxStoreConformanceTests.message(0)])
                    }
                    // Without a statement timeout the write waits for the lock, released only below.
                    let start = ContinuousClock.now
                    while !returned.isSet, ContinuousClock.now - start < .seconds(10) { try await Task.sleep(for: .milliseconds(20)) }
                    #expect(returned.isSet, "ended by the server within 10 s, not by the lock's release")
                    return write
                }
                await #expect(throws: (any Error).self) { _ = try await write.value }
                // The connection is usable again.
                #expect(try await store.enqueue([OutboxStoreConformanceTests.message(1)]).count == 1)
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
    }
}
