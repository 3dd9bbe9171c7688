import Synchronization

/// Host-name lookups under way, by name: a check of a name that is being looked up waits for that
/// lookup instead of starting another, so a burst of deliveries to one push server (an outbox round, the
/// first minute after start) asks the resolver once and takes one of its places.
final class LookupsUnderWay: Sendable {
    private let running = Mutex<[String: Task<HostResolver.Answer, Never>]>([:])

    /// The answer for `name`: the lookup under way, or a new one with `resolver`.
    func answer(for name: String, from resolver: HostResolver) async -> HostResolver.Answer {
        let lookup = self.running.withLock { running in
            if let lookup = running[name] { return lookup }
            let lookup = Task { await resolver.lookup(name) }
            running[name] = lookup
            return lookup
        }
        let answer = await lookup.value
        self.running.withLock { running in
            if running[name] == lookup { running[name] = nil }
        }
        return answer
    }
}
