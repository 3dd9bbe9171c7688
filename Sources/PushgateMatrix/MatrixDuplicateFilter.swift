import Crypto
import Foundation
import PushgateCore
import PushgateStore
import Synchronization

/// Remembers which `(event_id, pushkey)` pairs were delivered in the last ``window`` so a repeated notify
/// (a homeserver retrying after a timeout or a 502) is sent once.
///
/// With a shared store (PostgreSQL, many instances) the memory is the store's counters, shared by every
/// instance on it. Reads and writes are grouped: a question or a delivered pair joins a pending list, and
/// the request that finds no read (or write) under way asks (or writes) the whole list at once, so a burst
/// of notifications costs a few store round trips instead of two each. That request waits for its own
/// group only: what joined the list meanwhile is asked (or written) by a task of its own, which goes on
/// until the list is empty; under a steady stream no request waits for more than one group. Pairs this
/// instance delivered are also kept in memory until their window ends, so its own repeats never wait for
/// the store.
///
/// Without one (the embedded SQLite store, where one process is the only instance) the memory alone
/// answers: no store round trip and no disk write per delivery; a restart forgets the window.
final class MatrixDuplicateFilter: Sendable {
    private struct State {
        /// This instance's delivered pairs until their window ends.
        var recent: MatrixRecentPairs
        /// Store names of delivered pairs not yet written, and the latest end of their windows.
        var pending: [String] = []
        var pendingExpiry: Date?
        var writing = false
        /// Waiting for the writes under way to end (``writesFinished()``).
        var writeWaiters: [CheckedContinuation<Void, Never>] = []
        var questions: [Question] = []
        var reading = false
    }

    /// A question waiting for a grouped read.
    private struct Question {
        let key: String
        let now: Date
        let ticket: AnswerTicket
    }

    /// A group of delivered pairs to write.
    private struct WriteGroup {
        let names: [String]
        let expiry: Date?
    }

    /// How long a delivered pair is remembered.
    let window: TimeInterval
    /// The shared memory; nil when this process is the only instance.
    private let store: (any CounterStore)?
    private let state: Mutex<State>

    /// - Parameters:
    ///   - store: the counters every instance shares, or nil when this process is the only instance.
    ///   - window: how long a delivered pair is remembered.
    ///   - memoryLimit: the most pairs kept in memory (the oldest are forgotten first).
    init(store: (any CounterStore)?, window: TimeInterval, memoryLimit: Int = 100_000) {
        self.store = store
        self.window = window
        self.state = Mutex(State(recent: MatrixRecentPairs(limit: memoryLimit)))
    }

    /// How many pairs are kept in memory.
    var remembered: Int { self.state.withLock { $0.recent.count } }

    /// Whether `pair` was delivered within the window, by this instance or another; a store that cannot
    /// answer counts as "not delivered", so a notification is never lost to a store outage.
    func wasDelivered(_ pair: Key, now: Date = Date()) async -> Bool {
        let memoryKey = pair.memoryKey
        guard let store = self.store, let key = pair.text else {
            return self.state.withLock { state in state.recent.contains(memoryKey, at: now) }
        }
        let ticket = AnswerTicket()
        let (remembered, mustRead) = self.state.withLock { state -> (Bool, Bool) in
            if state.recent.contains(memoryKey, at: now) { return (true, false) }
            state.questions.append(Question(key: key, now: now, ticket: ticket))
            if state.reading { return (false, false) }
            state.reading = true
            return (false, true)
        }
        if remembered { return true }
        if mustRead {
            // This request's own question is in the first group.
            await Self.handleFirstGroup(take: self.takeQuestions) { await Self.answer($0, from: store) }
        }
        return await ticket.value
    }

    /// Records that `pair` was delivered; returns once it is in memory, and (for the request that writes
    /// the group) once its group is in the store.
    func recordDelivered(_ pair: Key, now: Date = Date()) async {
        let (key, memoryKey) = (pair.text, pair.memoryKey)
        let expiry = now.addingTimeInterval(self.window)
        let mustWrite = self.state.withLock { state -> Bool in
            state.recent.insert(memoryKey, until: expiry, now: now)
            guard self.store != nil, let key else { return false }
            state.pending.append(key)
            state.pendingExpiry = max(state.pendingExpiry ?? expiry, expiry)
            if state.writing { return false }
            state.writing = true
            return true
        }
        guard mustWrite, let store = self.store else { return }
        // This request's own pair is in the first group.
        await Self.handleFirstGroup(take: self.takeWrites) { await Self.write($0, to: store) }
    }

    /// Handles the first group `take` gives, then hands the groups that came meanwhile to a task of its
    /// own, which handles them until `take` gives none (which also ends the read or write under way).
    private static func handleFirstGroup<Group: Sendable>(
        take: @escaping @Sendable () -> Group?, handle: @escaping @Sendable (Group) async -> Void
    ) async {
        if let first = take() { await handle(first) }
        guard let next = take() else { return }
        Task {
            var group: Group? = next
            while let current = group {
                await handle(current)
                group = take()
            }
        }
    }

    /// Returns once every pair recorded before the call is in the store (or its write failed).
    func writesFinished() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let finished = self.state.withLock { state -> Bool in
                guard state.writing else { return true }
                state.writeWaiters.append(continuation)
                return false
            }
            if finished { continuation.resume() }
        }
    }

    /// The questions waiting, or nil (and no read under way any more) when there are none.
    private func takeQuestions() -> [Question]? {
        self.state.withLock { state -> [Question]? in
            guard !state.questions.isEmpty else {
                state.reading = false
                return nil
            }
            defer { state.questions.removeAll(keepingCapacity: true) }
            return state.questions
        }
    }

    /// The pairs waiting to be written, or nil (and no write under way any more) when there are none.
    private func takeWrites() -> WriteGroup? {
        let (group, waiters) = self.state.withLock { state -> (WriteGroup?, [CheckedContinuation<Void, Never>]) in
            guard !state.pending.isEmpty else {
                state.writing = false
                defer { state.writeWaiters.removeAll() }
                return (nil, state.writeWaiters)
            }
            defer {
                state.pending.removeAll(keepingCapacity: true)
                state.pendingExpiry = nil
            }
            return (WriteGroup(names: state.pending, expiry: state.pendingExpiry), [])
        }
        for waiter in waiters { waiter.resume() }
        return group
    }

    /// Asks the store about `group` at once and answers each question (a store that cannot answer: not
    /// delivered). The group's first question says when "now" is.
    private static func answer(_ group: [Question], from store: any CounterStore) async {
        let now = group.first?.now ?? Date()
        let live = (try? await store.counterValues(group.map(\.key), now: now)) ?? [:]
        for question in group { question.ticket.answer((live[question.key] ?? 0) > 0) }
    }

    /// Writes `group` (a failed write is forgotten: the memory still has the pairs).
    private static func write(_ group: WriteGroup, to store: any CounterStore) async {
        try? await store.incrementCounters(group.names, by: 1, expiresAt: group.expiry, now: Date())
    }
}

extension MatrixDuplicateFilter {
    /// A pair's key: its digest in memory and, when there is a shared store, its text (the store's counter
    /// name), each taken once for the question and the record.
    struct Key: Sendable {
        /// The store's counter name, the same for every instance (the pushkey appears only as a digest);
        /// nil when the key was made for a filter without a store.
        let text: String?
        let memoryKey: MatrixPairDigest

        /// - Parameters:
        ///   - variant: what else tells this pusher's notification apart (``MatrixDuplicateFilter/variant(of:in:)``).
        ///   - named: whether to make the store's counter name too.
        init(appID: String, eventID: String, pushkey: String, variant: [UInt8] = [], named: Bool) {
            self.memoryKey = MatrixPairDigest(appID, eventID, pushkey, extra: variant)
            guard named else {
                self.text = nil
                return
            }
            var hasher = SHA256()
            hasher.update(data: Array(pushkey.utf8))
            if !variant.isEmpty {
                hasher.update(data: [0])
                hasher.update(data: variant)
            }
            self.text = "matrix:dup:\(appID):\(eventID):\(Hex.lowercase(hasher.finalize().prefix(12)))"
        }
    }

    /// The key of a pair for this filter: named only when there is a store to ask and write.
    func key(appID: String, eventID: String, pushkey: String, variant: [UInt8] = []) -> Key {
        Key(appID: appID, eventID: eventID, pushkey: pushkey, variant: variant, named: self.store != nil)
    }

    /// What tells apart two pushers that share an app and a pushkey (two accounts on one phone), besides
    /// the event: the pusher's `data` (Element X's per-account `default_payload`), the counts (each
    /// user's own) and the device's tweaks (one account's push rule may highlight the event or sound for
    /// it, the other's not), all of which reach the payload. A homeserver repeating a notify sends the
    /// same; empty when the notification carries none of them. The counts as two 4-byte words, then
    /// `data`'s JSON text (sorted keys), then, when there are tweaks, a 0 byte (never in JSON text) and
    /// their JSON text; the last part hashed needs no length.
    static func variant(of device: MatrixDevice, in notification: MatrixNotification) -> [UInt8] {
        let data = device.data.flatMap { $0.isEmpty ? nil : $0 }
        let tweaks = device.tweaks.flatMap { $0.isEmpty ? nil : $0 }
        guard data != nil || tweaks != nil || notification.unread != nil || notification.missedCalls != nil else { return [] }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8)
        withUnsafeBytes(of: Int32(clamping: notification.unread ?? -1).littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: Int32(clamping: notification.missedCalls ?? -1).littleEndian) { bytes.append(contentsOf: $0) }
        if let data, let json = try? JSONText.encode(.object(data)) { bytes += json }
        if let tweaks, let json = try? JSONText.encode(.object(tweaks)) { bytes += [0] + json }
        return bytes
    }
}

/// One question waiting for a grouped read; answered exactly once.
private final class AnswerTicket: Sendable {
    private struct State {
        var answer: Bool?
        var waiter: CheckedContinuation<Bool, Never>?
    }

    private let state = Mutex(State())

    /// Gives the answer, waking the waiter if there is one.
    func answer(_ answer: Bool) {
        let waiter = self.state.withLock { state -> CheckedContinuation<Bool, Never>? in
            state.answer = answer
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: answer)
    }

    /// The answer, once given.
    var value: Bool {
        get async {
            await withCheckedContinuation { continuation in
                let ready = self.state.withLock { state -> Bool? in
                    if let answer = state.answer { return answer }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}
