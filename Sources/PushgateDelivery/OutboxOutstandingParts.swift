import Synchronization

/// The outbox worker's round parts under way, each a task of its own: the worker waits for all of them
/// before it stops, so every outcome is stored even for a part its lane stopped waiting for.
final class OutboxOutstandingParts: Sendable {
    private struct State {
        var next: UInt64 = 0
        var tasks: [UInt64: Task<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    /// Runs `body` as a task of its own, remembered until it ends.
    func run(_ body: @escaping @Sendable () async -> Void) {
        self.state.withLock { state in
            let id = state.next
            state.next += 1
            // Added under the lock before the task can remove itself.
            state.tasks[id] = Task {
                await body()
                _ = self.state.withLock { $0.tasks.removeValue(forKey: id) }
            }
        }
    }

    /// Waits until every task started so far, and any they start meanwhile, has ended.
    func waitForAll() async {
        while let task = self.state.withLock({ $0.tasks.values.first }) {
            await task.value
        }
    }
}
