import Synchronization

/// Records Status ids as seen in batches: calls that arrive while a write is under way wait and go
/// together in the next one, a single multi-row INSERT (one transaction, so one sync of the WAL for all
/// of them). SQLite has one writer and each commit waits for the disk: one commit per push request
/// capped the Status server below a thousand requests a second.
///
/// Each caller still learns whether its own id was new. Of two calls with one id in the same batch the
/// first is new and the second is not, as if they had been written one after the other.
final class SeenMarkBatcher: Sendable {
    /// One id to record, with its time in milliseconds.
    struct Mark: Sendable {
        let id: [UInt8]
        let seenAt: Int
    }

    private typealias Waiter = (mark: Mark, continuation: CheckedContinuation<Bool, any Error>)

    private struct State {
        var waiting: [Waiter] = []
        var writing = false
    }

    private let state = Mutex(State())
    /// Writes marks with distinct ids and returns the ids that were not there yet.
    private let write: @Sendable ([Mark]) async throws -> Set<[UInt8]>
    /// The most ids one write takes.
    let maximumBatch: Int

    init(maximumBatch: Int = 500, write: @escaping @Sendable ([Mark]) async throws -> Set<[UInt8]>) {
        self.maximumBatch = maximumBatch
        self.write = write
    }

    /// Records `mark`. - Returns: whether its id was new. - Throws: the store's error when its batch failed.
    func mark(_ mark: Mark) async throws -> Bool {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
            let leads = self.state.withLock { state in
                state.waiting.append((mark, continuation))
                if state.writing { return false }
                state.writing = true
                return true
            }
            if leads { Task { await self.drain() } }
        }
    }

    private func drain() async {
        while true {
            let batch = self.state.withLock { state -> [Waiter] in
                guard !state.waiting.isEmpty else {
                    state.writing = false
                    return []
                }
                let count = min(state.waiting.count, self.maximumBatch)
                defer { state.waiting.removeFirst(count) }
                return Array(state.waiting.prefix(count))
            }
            guard !batch.isEmpty else { return }
            var distinct: [Mark] = []
            var firsts = Set<[UInt8]>()
            var isFirst: [Bool] = []
            for waiter in batch {
                let first = firsts.insert(waiter.mark.id).inserted
                isFirst.append(first)
                if first { distinct.append(waiter.mark) }
            }
            do {
                let inserted = try await self.write(distinct)
                for (index, waiter) in batch.enumerated() {
                    waiter.continuation.resume(returning: isFirst[index] && inserted.contains(waiter.mark.id))
                }
            } catch {
                for waiter in batch { waiter.continuation.resume(throwing: error) }
            }
        }
    }
}
