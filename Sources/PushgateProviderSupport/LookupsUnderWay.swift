import Dispatch
import PushgateCore
import Synchronization

/// Host-name lookups under way, by name: a check of a name that is being looked up waits for that
/// lookup instead of starting another, so a burst of deliveries to one push server (an outbox round, the
/// first minute after start) asks the resolver once and takes one of its places.
///
/// A caller waits at most until its own deadline (its delivery's); the lookup goes on without it, bounded
/// by the resolver, and hands its answer to `finished` (which remembers it for the next delivery).
final class LookupsUnderWay: Sendable {
    private struct Lookup {
        let number: UInt64
        let task: Task<HostResolver.Answer, Never>
    }

    private struct State {
        var running: [String: Lookup] = [:]
        var started: UInt64 = 0
    }

    private let state = Mutex(State())

    /// How many lookups are under way.
    var count: Int { self.state.withLock { $0.running.count } }

    /// The answer for `name`: the lookup under way, or a new one with `resolver`, whose answer also goes to
    /// `finished` once (whether or not anyone still waits); nil when `deadline` came first.
    func answer(
        for name: String, from resolver: HostResolver, by deadline: ContinuousClock.Instant,
        finished: @escaping @Sendable (HostResolver.Answer) -> Void
    ) async -> HostResolver.Answer? {
        // The lookup is made and filed under one lock, and it takes that lock to leave the file: it cannot
        // leave before it was filed, and it removes only itself.
        let task = self.state.withLock { state -> Task<HostResolver.Answer, Never> in
            if let lookup = state.running[name] { return lookup.task }
            state.started &+= 1
            let number = state.started
            let task = Task { [weak self] in
                let answer = await resolver.lookup(name)
                finished(answer)
                self?.state.withLock { state in
                    if state.running[name]?.number == number { state.running[name] = nil }
                }
                return answer
            }
            state.running[name] = Lookup(number: number, task: task)
            return task
        }
        guard ContinuousClock.now < deadline else { return nil }
        return await withCheckedContinuation { (continuation: CheckedContinuation<HostResolver.Answer?, Never>) in
            let once = ResumeOnce(continuation)
            Task { once.resume(with: .success(await task.value)) }
            let remaining = Int(clamping: max(.zero, deadline - .now).nanosecondsClamped)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(remaining)) { once.resume(with: .success(nil)) }
        }
    }
}
