public import Synchronization

/// Runs concurrent submissions of one kind of write together: while one write is under way, the items
/// that arrive wait and then go in the next write, as many as `maximumWeight` allows. Under load many
/// callers share one write (one transaction, one sync of the disk) instead of each paying for its own,
/// and each caller still gets its own answer, or the error of the write that carried its item.
///
/// Inlinable, so each store specialises it for its own item and answer types: unspecialised, every batch
/// built the metadata of its generic tuples and iterators at run time (about 5,000 instructions a request).
public final class WriteCoalescer<Item: Sendable, Answer: Sendable>: Sendable {
    @usableFromInline typealias Waiter = (item: Item, weight: Int, continuation: CheckedContinuation<Answer, any Error>)

    @usableFromInline struct State {
        @usableFromInline var waiting: [Waiter] = []
        @usableFromInline var writing = false
        @inlinable init() {}
    }

    /// The write returned a different number of answers than it was given items.
    public struct AnswerCountMismatch: Error, CustomStringConvertible {
        public var description: String { "a coalesced write answered a different number of items than it was given" }
        @inlinable public init() {}
    }

    @usableFromInline let state: Mutex<State>
    @usableFromInline let maximumWeight: Int
    @usableFromInline let write: @Sendable ([Item]) async throws -> [Answer]

    /// Creates a coalescer.
    /// - Parameters:
    ///   - maximumWeight: the most weight one write takes (an item heavier than that goes alone).
    ///   - write: writes the items, in the order given, and returns one answer for each, in that order.
    @inlinable
    public init(maximumWeight: Int, write: @escaping @Sendable ([Item]) async throws -> [Answer]) {
        self.state = Mutex(State())
        self.maximumWeight = maximumWeight
        self.write = write
    }

    /// Writes `item` together with whatever else is waiting, and returns its answer.
    /// - Parameter weight: what the item counts towards `maximumWeight` (rows, say).
    /// - Throws: the error of the write that carried the item.
    @inlinable
    public func submit(_ item: Item, weight: Int = 1) async throws -> Answer {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Answer, any Error>) in
            let leads = self.state.withLock { state in
                state.waiting.append((item, weight, continuation))
                if state.writing { return false }
                state.writing = true
                return true
            }
            if leads { Task { await self.drain() } }
        }
    }

    /// Writes batches until nobody waits.
    @inlinable
    func drain() async {
        while true {
            let batch = self.state.withLock { state -> [Waiter] in
                guard !state.waiting.isEmpty else {
                    state.writing = false
                    return []
                }
                var weight = 0
                var taken = 0
                while taken < state.waiting.count, taken == 0 || weight + state.waiting[taken].weight <= self.maximumWeight {
                    weight += state.waiting[taken].weight
                    taken += 1
                }
                defer { state.waiting.removeFirst(taken) }
                return Array(state.waiting.prefix(taken))
            }
            guard !batch.isEmpty else { return }
            do {
                // A closure, not the key path `\.item`: in a generic type a key path literal is built anew
                // (its generic arguments resolved by name) every time it is evaluated.
                let answers = try await self.write(batch.map { $0.item })
                guard answers.count == batch.count else { throw AnswerCountMismatch() }
                for (waiter, answer) in zip(batch, answers) { waiter.continuation.resume(returning: answer) }
            } catch {
                for waiter in batch { waiter.continuation.resume(throwing: error) }
            }
        }
    }
}
