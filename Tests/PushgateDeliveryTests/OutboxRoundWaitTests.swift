import PushgateCore
@testable import PushgateDelivery
import Testing

/// An outbox round's wait and its parts are freed once the round is over. They referred to each other
/// strongly, so every round a lane waited for stayed in memory for good: about 300 bytes a round, which a
/// soak run (`benchmarks/soak.sh`) showed as a gateway growing with every gorush request.
@Suite("outbox round wait")
struct OutboxRoundWaitTests {
    @Test("a round whose parts all finished is freed, with its parts")
    func aFinishedRoundIsFreed() async {
        let (round, parts) = await Self.runRound(patience: .seconds(30), before: { parts in
            for part in parts { part.finish() }
        })
        #expect(await Self.freed(round, parts))
    }

    @Test("a round that let a part go at its deadline is freed once that part finishes")
    func aRoundWithADetachedPartIsFreed() async {
        let (round, parts) = await Self.runRound(
            patience: .milliseconds(20),
            before: { parts in parts[0].finish() },
            // The lane has gone on; the part it let go finishes later, with no wait left to tell.
            after: { parts in parts[1].finish() }
        )
        #expect(await Self.freed(round, parts))
    }

    /// Runs one round of two parts ("a" and "b") the way a lane does (``OutboxWorker``): the wait, its
    /// parts added before they can finish, `before` in another task (the deliveries), the lane's wait,
    /// then `after`. Returns weak references to the wait and the parts: once it has returned, nothing of
    /// the test holds them.
    private static func runRound(
        patience: Duration,
        before: @escaping @Sendable ([OutboxRoundPart]) -> Void,
        after: ([OutboxRoundPart]) -> Void = { _ in }
    ) async -> (WeakReference<OutboxRoundWait>, [WeakReference<OutboxRoundPart>]) {
        let round = OutboxRoundWait(parts: 2, patience: patience, usual: .milliseconds(1))
        let parts = ["a", "b"].map { OutboxRoundPart(appID: $0, pace: OutboxAppPace(), round: round) }
        for part in parts { round.add(part) }
        await Task { before(parts) }.value
        await round.wait()
        after(parts)
        return (WeakReference(round), parts.map(WeakReference.init))
    }

    /// Waits (at most 5 s) until nothing refers to the wait or the parts any more.
    private static func freed(_ round: WeakReference<OutboxRoundWait>, _ parts: [WeakReference<OutboxRoundPart>]) async -> Bool {
        for _ in 0..<500 {
            if round.value == nil, parts.allSatisfy({ $0.value == nil }) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}

/// A weak reference a test can keep beside the object's strong ones.
private final class WeakReference<Object: AnyObject> {
    weak var value: Object?
    init(_ value: Object) { self.value = value }
}
