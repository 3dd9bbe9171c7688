import Foundation
import PushgateStore
@testable import PushgateStoreSQLite
import Testing

/// A bounded store call that waits past its deadline behind other writes is answered "unavailable", and
/// its caller says so to its sender (gorush 503, a Matrix 5xx), who sends again: the write must not then
/// commit behind the caller's back, or the notification is queued twice.
@Suite("SQLite writes past their deadline")
struct SQLiteTimedOutWriteTests {
    @Test func anEnqueueTimedOutWhileWaitingForTheWriterIsNotWritten() async throws {
        let (store, cleanUp) = try await SQLiteDeferredSyncTests.openStore()
        defer { cleanUp() }
        let bounded = BoundedStore(store, timeout: .milliseconds(50))
        // Another write holds the writer for a second.
        let (entered, signal) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await store.writes.run {
                signal.yield()
                try await Task.sleep(for: .seconds(1))
            }
        }
        var iterator = entered.makeAsyncIterator()
        _ = await iterator.next()
        await #expect(throws: (any Error).self) {
            _ = try await bounded.enqueue([OutboxMessage(appID: "app", pushTokens: ["t"], payload: Array("p".utf8), notBefore: Date())])
        }
        try await holder.value
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await store.pendingCount() == 0, "the caller was told nothing was queued")
        // The writer still takes the next call.
        _ = try await store.enqueue([OutboxMessage(appID: "app", pushTokens: ["u"], payload: Array("p".utf8), notBefore: Date())])
        #expect(try await store.pendingCount() == 1)
    }
}
