import PushgateCore
import Synchronization

/// Bounds every store call in time and stops piling calls onto a database that has stopped answering.
///
/// Each call runs in a task of its own and the caller gets an answer by the deadline whatever the database
/// does: on time-out the call's task is cancelled (a PostgreSQL pool then withdraws its wait for a
/// connection) and the caller gets ``StoreError/unavailable(_:)``.
///
/// A call that times out opens the circuit: from then on calls fail at once, except one trial call at a
/// time, at most once per ``trialInterval``; the first trial that succeeds closes the circuit again. So
/// while the database is down, requests are answered in their protocol's shape within milliseconds, and
/// the gateway recovers by itself within about a second of the database's return.
public final class StoreCallGuard: Sendable {
    /// How long one call may take.
    public let timeout: Duration
    /// How often a trial call is let through while the circuit is open.
    public let trialInterval: Duration
    private let circuit = Mutex(Circuit())

    private struct Circuit {
        /// When the circuit opened; nil while calls flow.
        var openedAt: ContinuousClock.Instant?
        /// When the next trial call may start.
        var nextTrial: ContinuousClock.Instant = .now
        /// Whether a trial call is running.
        var trialRunning = false
    }

    /// Creates a guard.
    /// - Parameters:
    ///   - timeout: the deadline of one call.
    ///   - trialInterval: how often a call is tried while the database does not answer.
    public init(timeout: Duration, trialInterval: Duration = .seconds(1)) {
        self.timeout = timeout
        self.trialInterval = trialInterval
    }

    /// Whether calls currently fail at once because the database stopped answering.
    public var isOpen: Bool { self.circuit.withLock { $0.openedAt != nil } }

    /// Runs one store call under the deadline and the circuit.
    /// - Throws: what the call throws, or ``StoreError/unavailable(_:)`` when it timed out or the circuit
    ///   is open.
    public func run<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let now = ContinuousClock.now
        let admission = self.circuit.withLock { circuit -> Admission in
            guard circuit.openedAt != nil else { return .normal }
            guard !circuit.trialRunning, now >= circuit.nextTrial else { return .refused }
            circuit.trialRunning = true
            return .trial
        }
        if case .refused = admission {
            throw StoreError.unavailable("the database is not answering (calls are tried again every \(self.trialInterval))")
        }
        do {
            let value = try await Self.race(operation, timeout: self.timeout)
            if case .trial = admission {
                self.circuit.withLock { circuit in
                    circuit = Circuit()
                }
            }
            return value
        } catch let error as CallTimedOut {
            self.circuit.withLock { circuit in
                if circuit.openedAt == nil { circuit.openedAt = .now }
                circuit.trialRunning = false
                circuit.nextTrial = .now + self.trialInterval
            }
            throw StoreError.unavailable("the database did not answer within \(error.timeout)")
        } catch {
            if case .trial = admission {
                self.circuit.withLock { circuit in
                    if error is CancellationError {
                        circuit.trialRunning = false
                    } else {
                        // The database answered, even if with an error: calls may flow again.
                        circuit = Circuit()
                    }
                }
            }
            throw error
        }
    }

    private enum Admission {
        case normal
        case trial
        case refused
    }

    private struct CallTimedOut: Error {
        let timeout: Duration
    }

    /// Runs `operation` in a task of its own and answers with its result or, at `timeout`, with
    /// ``CallTimedOut`` (cancelling it). A cancelled caller is answered at once and
    /// cancels the operation.
    private static func race<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T, timeout: Duration) async throws -> T {
        let race = Race<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                race.start(continuation)
                let work = Task {
                    do {
                        race.finish(.success(try await operation()))
                    } catch {
                        race.finish(.failure(error))
                    }
                }
                // One shared sweeper keeps the deadline (a timer task per call would hold its memory
                // until the deadline even when the call ends in a millisecond).
                let timer = DeadlineScheduler.shared.schedule(at: .now + timeout) {
                    if race.finish(.failure(CallTimedOut(timeout: timeout))) { work.cancel() }
                }
                race.attach(work: work, timer: timer)
            }
        } onCancel: {
            race.cancel()
        }
    }
}

/// The one answer of a raced call: whichever of the call, its timer or a cancellation comes first.
private final class Race<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var finished = false
        var cancelled = false
        var work: Task<Void, Never>?
        var timer: DeadlineScheduler.Token?
    }

    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<T, any Error>) {
        let alreadyCancelled = self.state.withLock { state -> Bool in
            if state.finished { return true }
            state.continuation = continuation
            return false
        }
        if alreadyCancelled { continuation.resume(throwing: CancellationError()) }
    }

    func attach(work: Task<Void, Never>, timer: DeadlineScheduler.Token) {
        let (cancelWork, cancelTimer) = self.state.withLock { state -> (Bool, Bool) in
            state.work = work
            state.timer = timer
            return (state.cancelled, state.finished)
        }
        if cancelWork { work.cancel() }
        if cancelTimer { DeadlineScheduler.shared.cancel(timer) }
    }

    /// Resumes the caller with `result` if nothing did before.
    /// - Returns: whether this call resumed it.
    @discardableResult
    func finish(_ result: Result<T, any Error>) -> Bool {
        let (continuation, timer) = self.state.withLock { state -> (CheckedContinuation<T, any Error>?, DeadlineScheduler.Token?) in
            guard !state.finished else { return (nil, nil) }
            state.finished = true
            defer { state.continuation = nil }
            return (state.continuation, state.timer)
        }
        guard let continuation else { return false }
        if let timer { DeadlineScheduler.shared.cancel(timer) }
        continuation.resume(with: result)
        return true
    }

    /// The caller was cancelled: answer it at once and cancel the call.
    func cancel() {
        let work = self.state.withLock { state -> Task<Void, Never>? in
            state.cancelled = true
            return state.work
        }
        work?.cancel()
        self.finish(.failure(CancellationError()))
    }
}
