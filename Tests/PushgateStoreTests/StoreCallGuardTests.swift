import PushgateStore
import Synchronization
import Testing

/// The deadline and circuit every store call goes through.
@Suite struct StoreCallGuardTests {
    /// A call that never ends (a hung database), ended only by cancellation.
    private static func hang() async throws -> Int {
        try await Task.sleep(for: .seconds(3600))
        return 0
    }

    @Test func aHungCallIsAnsweredAtItsDeadlineAsUnavailable() async throws {
        let calls = StoreCallGuard(timeout: .milliseconds(200))
        let started = ContinuousClock.now
        do {
            _ = try await calls.run { try await Self.hang() }
            Issue.record("a hung call returned")
        } catch let error as StoreError {
            #expect(error.isSameKind(as: .unavailable("")))
            // The deadline ended the wait.
            #expect(error.message == "the database did not answer within 0.2 seconds")
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(200))
        // Far below the hour the call would take, and far above any scheduling delay.
        #expect(elapsed < .seconds(600))
        do {
            _ = try await calls.run { try await Self.hang() }
            Issue.record("an open circuit let a call through")
        } catch let error as StoreError {
            #expect(error.message.contains("not answering"))
        }
    }

    @Test func theTimedOutCallIsCancelled() async throws {
        let calls = StoreCallGuard(timeout: .milliseconds(100))
        let cancelled = Mutex(false)
        _ = try? await calls.run {
            do {
                try await Task.sleep(for: .seconds(3600))
            } catch {
                cancelled.withLock { $0 = true }
                throw error
            }
            return 0
        }
        // The cancellation reaches the call's task soon after the caller was answered.
        for _ in 0..<300 where !cancelled.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(cancelled.withLock { $0 })
    }

    @Test func anOpenCircuitRefusesCallsAtOnceThenATrialClosesIt() async throws {
        // The 50 calls below must all come inside one trial interval, or one of them would go as a trial:
        // refused calls take microseconds, and 3 s leaves room for a loaded machine.
        let calls = StoreCallGuard(timeout: .milliseconds(100), trialInterval: .seconds(3))
        _ = try? await calls.run { try await Self.hang() }
        #expect(calls.isOpen)
        let ran = Mutex(0)
        for _ in 0..<50 {
            _ = try? await calls.run { ran.withLock { $0 += 1 }; return 1 }
        }
        // Refused without running (so without waiting for a deadline).
        #expect(ran.withLock { $0 } == 0)
        try await Task.sleep(for: .milliseconds(3_100))
        let value = try await calls.run { 42 }
        #expect(value == 42)
        #expect(!calls.isOpen)
        #expect(try await calls.run { 7 } == 7)
    }

    @Test func aFailingTrialKeepsTheCircuitOpen() async throws {
        let calls = StoreCallGuard(timeout: .milliseconds(100), trialInterval: .milliseconds(200))
        _ = try? await calls.run { try await Self.hang() }
        try await Task.sleep(for: .milliseconds(250))
        _ = try? await calls.run { try await Self.hang() }
        #expect(calls.isOpen)
    }

    @Test func errorsOtherThanTimeOutsPassThroughAndKeepTheCircuitClosed() async throws {
        let calls = StoreCallGuard(timeout: .seconds(5))
        await #expect(throws: StoreError.corruptRow("x")) {
            _ = try await calls.run { () async throws -> Int in throw StoreError.corruptRow("x") }
        }
        #expect(!calls.isOpen)
    }

    @Test func aCancelledCallerIsAnsweredAtOnce() async throws {
        let calls = StoreCallGuard(timeout: .seconds(600))
        let task = Task { try await calls.run { try await Self.hang() } }
        try await Task.sleep(for: .milliseconds(50))
        let started = ContinuousClock.now
        task.cancel()
        _ = try? await task.value
        #expect(ContinuousClock.now - started < .seconds(300))
        #expect(!calls.isOpen)
    }
}
