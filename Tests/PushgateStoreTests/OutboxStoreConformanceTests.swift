import Foundation
import PushgateCore
import PushgateStore
import Synchronization
import Testing

@Suite("OutboxStore conformance")
struct OutboxStoreConformanceTests {
    static let now = Date(millisecondsSince1970: 1_750_000_000_000)

    static func message(_ n: Int, dueIn seconds: Double = 0) -> OutboxMessage {
        OutboxMessage(
            appID: "app.\(n % 3)", pushToken: "token-\(n)", payload: Array("payload \(n)".utf8),
            notBefore: now.addingTimeInterval(seconds)
        )
    }

    @Test(arguments: StoreKind.allCases)
    func enqueueReturnsIdsInOrderAndClaimReturnsTheMessages(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let ids = try await store.enqueue((0..<5).map { Self.message($0) })
            #expect(ids.count == 5)
            #expect(ids == ids.sorted())
            #expect(Set(ids).count == 5)
            let claimed = try await store.claimDue(now: Self.now, limit: 10, leaseFor: .seconds(30), owner: "w1")
            #expect(claimed.map(\.id) == ids)
            #expect(claimed.map(\.message) == (0..<5).map { Self.message($0) })
            #expect(claimed.allSatisfy { $0.attempts == 1 && $0.lastError == nil })
        }
    }

    /// Messages one at a time, one under a lease, and 1,001 at once (SQLite writes them 48 rows a
    /// statement, the last chunk shorter): every id returned is the id the entry is claimed and completed by.
    /// A leased batch longer than one statement: every row has the lease and an id of its own.
    @Test(arguments: StoreKind.allCases)
    func aLeasedBatchOfSeveralStatementsKeepsItsLeaseAndItsIds(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let lease = OutboxLease(owner: "w0", until: Self.now.addingTimeInterval(3_600))
            let ids = try await store.enqueue((0..<150).map { Self.message($0) }, leasedTo: lease)
            #expect(ids.count == 150)
            #expect(Set(ids).count == 150)
            #expect(ids == ids.sorted())
            #expect(try await store.claimDue(now: Self.now, limit: 500, leaseFor: .seconds(30), owner: "w1").isEmpty)
            #expect(try await store.complete(ids: ids, owner: "w0") == 150)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func singleRowsAndAChunkOfOneReturnTheirOwnIds(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            var ids: [Int64] = []
            for n in 0..<3 { ids += try await store.enqueue([Self.message(n)]) }
            let lease = OutboxLease(owner: "w0", until: Self.now.addingTimeInterval(3_600))
            ids += try await store.enqueue([Self.message(3)], leasedTo: lease)
            ids += try await store.enqueue((4..<1_005).map { Self.message($0) })
            #expect(ids.count == 1_005)
            #expect(ids == ids.sorted())
            #expect(Set(ids).count == 1_005)
            let claimed = try await store.claimDue(now: Self.now, limit: 2_000, leaseFor: .seconds(30), owner: "w1")
            #expect(claimed.count == 1_004)
            // The leased one is not due for another owner; every other id names its own message.
            let byID = Dictionary(uniqueKeysWithValues: claimed.map { ($0.id, $0.message) })
            for (n, id) in ids.enumerated() where n != 3 { #expect(byID[id] == Self.message(n)) }
            #expect(byID[ids[3]] == nil)
            #expect(try await store.complete(ids: [ids[3]], owner: "w0") == 1)
            #expect(try await store.complete(ids: [ids[1_004]], owner: "w1") == 1)
            #expect(try await store.pendingCount() == 1_003)
        }
    }

    /// Ids stay right after the newest entries are gone (SQLite's ids come from the last inserted rowid).
    @Test(arguments: StoreKind.allCases)
    func idsAfterTheNewestEntriesWereCompletedNameTheirOwnMessages(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let first = try await store.enqueue((0..<5).map { Self.message($0) })
            _ = try await store.claimDue(now: Self.now, limit: 10, leaseFor: .seconds(30), owner: "w")
            #expect(try await store.complete(ids: Array(first[2...]), owner: "w") == 3)
            let second = try await store.enqueue((5..<9).map { Self.message($0) })
            #expect(second.count == 4)
            #expect(Set(first).isDisjoint(with: second))
            #expect(second == second.sorted())
            let claimed = try await store.claimDue(now: Self.now.addingTimeInterval(60), limit: 10, leaseFor: .seconds(30), owner: "v")
            let byID = Dictionary(uniqueKeysWithValues: claimed.map { ($0.id, $0.message) })
            for (n, id) in second.enumerated() { #expect(byID[id] == Self.message(5 + n)) }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func binaryPayloadsRoundTrip(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let payload = (0...255).map(UInt8.init) + [0, 0, 255]
            _ = try await store.enqueue([OutboxMessage(appID: "a", pushToken: "t", payload: payload, notBefore: Self.now)])
            let claimed = try await store.claimDue(now: Self.now, limit: 1, leaseFor: .seconds(5), owner: "w")
            #expect(claimed.first?.message.payload == payload)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func onlyDueEntriesAreClaimedOldestFirstUpToTheLimit(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            _ = try await store.enqueue([Self.message(1, dueIn: 10), Self.message(2, dueIn: -5), Self.message(3, dueIn: -1), Self.message(4, dueIn: 0)])
            let first = try await store.claimDue(now: Self.now, limit: 2, leaseFor: .seconds(30), owner: "w")
            #expect(first.flatMap(\.message.pushTokens) == ["token-2", "token-3"])
            let second = try await store.claimDue(now: Self.now, limit: 10, leaseFor: .seconds(30), owner: "w")
            #expect(second.flatMap(\.message.pushTokens) == ["token-4"])
            let later = try await store.claimDue(now: Self.now.addingTimeInterval(10), limit: 10, leaseFor: .seconds(30), owner: "w")
            #expect(later.flatMap(\.message.pushTokens) == ["token-1"])
            #expect(try await store.pendingCount() == 4)
        }
    }

    /// A claim is shared between the apps with due entries: a fresh entry of one app is claimed in the
    /// next claim even behind thousands of older entries of another.
    @Test(arguments: StoreKind.allCases)
    func aBacklogOfOneAppDoesNotHoldBackAnotherAppsEntry(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let backlog = try await store.enqueue(
                (0..<5_000).map { OutboxMessage(appID: "app.a", pushToken: "a-\($0)", payload: [1], notBefore: Self.now.addingTimeInterval(-60)) }
            )
            let fresh = try await store.enqueue([OutboxMessage(appID: "app.b", pushToken: "b", payload: [2], notBefore: Self.now)])
            let claimed = try await store.claimDue(now: Self.now, limit: 128, leaseFor: .seconds(30), owner: "w")
            #expect(claimed.count == 128)
            #expect(claimed.contains { $0.id == fresh[0] }, "app.b's entry is in the first claim")
            // The rest of the claim is app.a's oldest, in order.
            #expect(claimed.filter { $0.message.appID == "app.a" }.map(\.id) == Array(backlog.prefix(127)))
        }
    }

    /// Each app's share (the claim's limit ÷ the apps in the outbox) taken round-robin: each app's oldest
    /// due entry, then each app's second…; the room that apps with fewer due entries leave goes to the
    /// oldest due entries; entries not due or leased do not count; an app's entries keep their order.
    @Test(arguments: StoreKind.allCases)
    func claimsTakeDueEntriesRoundRobinAcrossApps(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            func messages(_ app: String, _ count: Int, dueIn seconds: Double) -> [OutboxMessage] {
                (0..<count).map { OutboxMessage(appID: app, pushToken: "\(app)-\($0)", payload: [1], notBefore: Self.now.addingTimeInterval(seconds)) }
            }
            let a = try await store.enqueue(messages("a", 10, dueIn: -30))
            let b = try await store.enqueue(messages("b", 10, dueIn: -20))
            // c: one entry due, one leased by another worker, one not yet due.
            let c = try await store.enqueue(messages("c", 1, dueIn: -10))
            _ = try await store.enqueue(messages("c", 1, dueIn: -10), leasedTo: OutboxLease(owner: "other", until: Self.now.addingTimeInterval(60)))
            _ = try await store.enqueue(messages("c", 1, dueIn: 60))
            let first = try await store.claimDue(now: Self.now, limit: 6, leaseFor: .seconds(30), owner: "w")
            #expect(Set(first.map(\.id)) == Set(Array(a.prefix(3)) + Array(b.prefix(2)) + c))
            // c has nothing more due: b gets its share of two, and c's room goes to the oldest due, a's.
            let second = try await store.claimDue(now: Self.now, limit: 6, leaseFor: .seconds(30), owner: "w")
            #expect(Set(second.map(\.id)) == Set(Array(a[3..<7]) + Array(b[2..<4])))
            // Room for more than is due: everything due, returned oldest due first.
            let third = try await store.claimDue(now: Self.now, limit: 20, leaseFor: .seconds(30), owner: "w")
            #expect(third.map(\.id) == Array(a[7...]) + Array(b[4...]))
        }
    }

    /// Within an app, each front end that queued entries has a turn of its own, as each app has: a
    /// backlog that one front end queued does not hold back an entry another front end queued later for
    /// the same app, entries without a front end (queued before the outbox recorded it) take their turn
    /// together, and each entry comes back with the front end that queued it.
    @Test(arguments: StoreKind.allCases)
    func claimsTakeDueEntriesRoundRobinAcrossTheFrontEndsOfAnApp(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            func messages(_ frontEnd: String, _ count: Int, dueIn seconds: Double) -> [OutboxMessage] {
                (0..<count).map {
                    OutboxMessage(
                        appID: "a", frontEnd: frontEnd, pushToken: "\(frontEnd)-\($0)", payload: [1], notBefore: Self.now.addingTimeInterval(seconds)
                    )
                }
            }
            let gorush = try await store.enqueue(messages("gorush", 20, dueIn: -30))
            let unknown = try await store.enqueue(messages("", 2, dueIn: -20))
            let nextcloud = try await store.enqueue(messages("nextcloud", 1, dueIn: -10))
            // Another app's entry, and another front end's entry not yet due (it counts as a lane, but
            // takes nothing).
            let other = try await store.enqueue([OutboxMessage(appID: "b", frontEnd: "gorush", pushToken: "b", payload: [2], notBefore: Self.now)])
            _ = try await store.enqueue(messages("status", 1, dueIn: 60))
            // Five lanes share 5 tokens: one each, the not-yet-due lane's room going to the oldest due.
            let first = try await store.claimDue(now: Self.now, limit: 5, leaseFor: .seconds(30), owner: "w")
            #expect(Set(first.map(\.id)) == Set(Array(gorush.prefix(2)) + [unknown[0]] + nextcloud + other))
            #expect(first.map(\.message.frontEnd) == ["gorush", "gorush", "", "nextcloud", "gorush"])
            #expect(first.map(\.message) == messages("gorush", 2, dueIn: -30) + messages("", 1, dueIn: -20) + messages("nextcloud", 1, dueIn: -10) + [
                OutboxMessage(appID: "b", frontEnd: "gorush", pushToken: "b", payload: [2], notBefore: Self.now),
            ])
            // What is left: gorush's backlog and one entry without a front end, sharing the claim.
            let second = try await store.claimDue(now: Self.now, limit: 4, leaseFor: .seconds(30), owner: "w")
            #expect(Set(second.map(\.id)) == Set(Array(gorush[2..<5]) + [unknown[1]]))
            let rest = try await store.claimDue(now: Self.now, limit: 100, leaseFor: .seconds(30), owner: "w")
            #expect(rest.map(\.id) == Array(gorush[5...]))
        }
    }

    /// Two apps with a backlog each share every claim equally, whichever backlog is older.
    @Test(arguments: StoreKind.allCases)
    func twoBacklogsShareEachClaimEqually(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let old = try await store.enqueue(
                (0..<300).map { OutboxMessage(appID: "old", pushToken: "o\($0)", payload: [1], notBefore: Self.now.addingTimeInterval(-60)) }
            )
            let new = try await store.enqueue((0..<300).map { OutboxMessage(appID: "new", pushToken: "n\($0)", payload: [2], notBefore: Self.now) })
            for round in 0..<3 {
                let claimed = try await store.claimDue(now: Self.now, limit: 128, leaseFor: .seconds(30), owner: "w")
                #expect(claimed.map(\.id) == Array(old[64 * round..<64 * (round + 1)]) + Array(new[64 * round..<64 * (round + 1)]), "claim \(round)")
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aLeaseHidesAnEntryUntilItEnds(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let ids = try await store.enqueue([Self.message(1)])
            #expect(try await store.claimDue(now: Self.now, limit: 10, leaseFor: .seconds(30), owner: "w1").count == 1)
            #expect(try await store.claimDue(now: Self.now.addingTimeInterval(29), limit: 10, leaseFor: .seconds(30), owner: "w2").isEmpty)
            // The first worker died: after the lease another one takes the entry, and the attempt is counted.
            let reclaimed = try await store.claimDue(now: Self.now.addingTimeInterval(30), limit: 10, leaseFor: .seconds(30), owner: "w2")
            #expect(reclaimed.map(\.id) == ids)
            #expect(reclaimed.first?.attempts == 2)
            // The first worker's late completion no longer counts; the new owner's does.
            #expect(try await !store.complete(id: ids[0], owner: "w1"))
            #expect(try await store.complete(id: ids[0], owner: "w2"))
            #expect(try await store.pendingCount() == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func entriesEnqueuedUnderALeaseBelongToItsOwnerUntilItEnds(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let lease = OutboxLease(owner: "w1", until: Self.now.addingTimeInterval(60))
            let leased = try await store.enqueue((0..<1_200).map { Self.message($0, dueIn: -1) }, leasedTo: lease)
            let free = try await store.enqueue([Self.message(9_999, dueIn: -1)])
            #expect(leased.count == 1_200)
            #expect(leased == leased.sorted())
            // Another worker sees only the unleased entry while the lease lasts.
            let claimed = try await store.claimDue(now: Self.now.addingTimeInterval(59), limit: 2_000, leaseFor: .seconds(30), owner: "w2")
            #expect(claimed.map(\.id) == free)
            #expect(try await store.complete(ids: free, owner: "w2") == 1)
            // The owner finishes some and retries one; a stranger's completion changes nothing.
            #expect(try await store.complete(ids: Array(leased.prefix(10)), owner: "w2") == 0)
            #expect(try await store.complete(ids: Array(leased.prefix(10)), owner: "w1") == 10)
            #expect(try await store.reschedule(id: leased[10], owner: "w1", notBefore: Self.now.addingTimeInterval(-1), error: "busy"))
            let retried = try await store.claimDue(now: Self.now, limit: 10, leaseFor: .seconds(30), owner: "w2")
            #expect(retried.map(\.id) == [leased[10]])
            // The first attempt was counted when the entry was written.
            #expect(retried.first?.attempts == 2)
            #expect(retried.first?.lastError == "busy")
            #expect(try await store.complete(ids: [leased[10]], owner: "w2") == 1)
            // The owner stopped: once the lease ends the rest are claimed by others, in order.
            let rest = try await store.claimDue(now: Self.now.addingTimeInterval(60), limit: 2_000, leaseFor: .seconds(30), owner: "w2")
            #expect(rest.count == 1_189)
            #expect(rest.map(\.id) == Array(leased.dropFirst(11)), "the rest, in order")
            #expect(rest.first?.message == Self.message(11, dueIn: -1))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func manyEntriesCompleteInOneCallOnlyForTheirOwner(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let ids = try await store.enqueue((1...1200).map { Self.message($0) })
            let first = try await store.claimDue(now: Self.now, limit: 1100, leaseFor: .seconds(30), owner: "w1")
            let second = try await store.claimDue(now: Self.now, limit: 1100, leaseFor: .seconds(30), owner: "w2")
            #expect(first.count == 1100)
            #expect(second.count == 100)
            // Another owner's entries, and ids that do not exist, are left alone.
            #expect(try await store.complete(ids: first.map(\.id) + [second[0].id, 999_999_999], owner: "w1") == 1100)
            #expect(try await store.pendingCount() == 100)
            #expect(try await store.complete(ids: [], owner: "w2") == 0)
            #expect(try await store.complete(ids: second.map(\.id), owner: "w2") == 100)
            #expect(try await store.pendingCount() == 0)
            #expect(Set(first.map(\.id) + second.map(\.id)) == Set(ids))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func rescheduleReleasesTheEntryForLaterWithItsError(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let ids = try await store.enqueue([Self.message(1)])
            _ = try await store.claimDue(now: Self.now, limit: 1, leaseFor: .seconds(30), owner: "w1")
            #expect(try await !store.reschedule(id: ids[0], owner: "other", notBefore: Self.now, error: "x"))
            #expect(try await store.reschedule(id: ids[0], owner: "w1", notBefore: Self.now.addingTimeInterval(60), error: "HTTP 503"))
            #expect(try await store.claimDue(now: Self.now.addingTimeInterval(59), limit: 1, leaseFor: .seconds(30), owner: "w2").isEmpty)
            let retried = try await store.claimDue(now: Self.now.addingTimeInterval(60), limit: 1, leaseFor: .seconds(30), owner: "w2")
            #expect(retried.first?.attempts == 2)
            #expect(retried.first?.lastError == "HTTP 503")
            #expect(retried.first?.createdAt != nil)
        }
    }

    /// Each app's backlog counts its tokens, leased, due or not, and dates its oldest entry; an app whose
    /// entries were all completed is not listed.
    @Test(arguments: StoreKind.allCases)
    func theBacklogByAppCountsTokensAndDatesTheOldestEntry(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            #expect(try await store.backlogByApp().isEmpty)
            let start = Date()
            _ = try await store.enqueue([OutboxMessage(appID: "a", pushTokens: ["1", "2", "3"], payload: [1], notBefore: Self.now)])
            let end = Date()
            try await Task.sleep(for: .milliseconds(20))
            let laterIDs = try await store.enqueue([
                OutboxMessage(appID: "a", pushToken: "4", payload: [2], notBefore: Self.now.addingTimeInterval(3600)),
                OutboxMessage(appID: "b", pushToken: "5", payload: [3], notBefore: Self.now),
            ])
            _ = try await store.claimDue(now: Self.now, limit: 10, leaseFor: .seconds(30), owner: "w1")
            let backlogs = Dictionary(uniqueKeysWithValues: try await store.backlogByApp().map { ($0.appID, $0) })
            #expect(Set(backlogs.keys) == ["a", "b"])
            #expect(backlogs["a"]?.tokens == 4)
            #expect(backlogs["b"]?.tokens == 1)
            // Stores keep milliseconds.
            let oldest = try #require(backlogs["a"]?.oldestCreatedAt)
            #expect(oldest >= start.addingTimeInterval(-0.001) && oldest <= end.addingTimeInterval(0.001))
            #expect(try #require(backlogs["b"]?.oldestCreatedAt) > oldest)
            #expect(try await store.complete(id: laterIDs[1], owner: "w1"))
            #expect(try await store.backlogByApp().map(\.appID) == ["a"])
        }
    }

    /// An entry of several tokens, as one notification's tokens are queued: its tokens come back in
    /// order (tokens with quotes, backslashes, non-ASCII and the empty string included), the pending count
    /// counts tokens, and a claim's limit counts tokens without splitting an entry.
    @Test(arguments: StoreKind.allCases)
    func anEntryOfSeveralTokensKeepsThemAndClaimsCountTokens(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let odd = ["a\"b", "c\\d", "é\u{1F600}", "", "line\nbreak", "[1]"]
            let messages = [
                OutboxMessage(appID: "app", pushTokens: (0..<40).map { "first-\($0)" }, payload: [1], notBefore: Self.now),
                OutboxMessage(appID: "app", pushTokens: odd, payload: [2], notBefore: Self.now),
                OutboxMessage(appID: "app", pushTokens: (0..<70).map { "third-\($0)" }, payload: [3], notBefore: Self.now),
                OutboxMessage(appID: "app", pushToken: "fourth", payload: [4], notBefore: Self.now),
            ]
            let ids = try await store.enqueue(messages)
            #expect(try await store.pendingCount() == 117)
            // 40 + 6 fit 50 tokens, 40 + 6 + 70 do not: the third entry waits.
            let first = try await store.claimDue(now: Self.now, limit: 50, leaseFor: .seconds(30), owner: "w1")
            #expect(first.map(\.id) == Array(ids[0..<2]))
            #expect(first.map(\.message) == Array(messages[0..<2]))
            // The oldest due entry is claimed even when it alone holds more tokens than the limit.
            let second = try await store.claimDue(now: Self.now, limit: 10, leaseFor: .seconds(30), owner: "w1")
            #expect(second.map(\.id) == [ids[2]])
            #expect(second.first?.message.pushTokens.count == 70)
            let third = try await store.claimDue(now: Self.now, limit: 10, leaseFor: .seconds(30), owner: "w1")
            #expect(third.map(\.message) == [messages[3]])
            #expect(try await store.complete(ids: ids, owner: "w1") == 4)
            #expect(try await store.pendingCount() == 0)
        }
    }

    /// A retry that names the entry's remaining tokens leaves only those in it, with the attempt counted;
    /// one that names none keeps them all.
    @Test(arguments: StoreKind.allCases)
    func aRetryKeepsOnlyTheTokensItNames(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let tokens = (0..<5).map { "token-\($0)" }
            let ids = try await store.enqueue([
                OutboxMessage(appID: "app", pushTokens: tokens, payload: [9], notBefore: Self.now),
                OutboxMessage(appID: "app", pushTokens: ["x", "y"], payload: [8], notBefore: Self.now),
            ])
            _ = try await store.claimDue(now: Self.now, limit: 10, leaseFor: .seconds(30), owner: "w1")
            let later = Self.now.addingTimeInterval(60)
            let released = try await store.reschedule(
                [
                    OutboxRetry(id: ids[0], notBefore: later, error: "HTTP 429", remainingTokens: ["token-1", "token-3"]),
                    OutboxRetry(id: ids[1], notBefore: later, error: "HTTP 503"),
                ],
                owner: "w1"
            )
            #expect(released == 2)
            #expect(try await store.pendingCount() == 4)
            let retried = try await store.claimDue(now: later, limit: 10, leaseFor: .seconds(30), owner: "w2")
            #expect(retried.map(\.message.pushTokens) == [["token-1", "token-3"], ["x", "y"]])
            #expect(retried.map(\.lastError) == ["HTTP 429", "HTTP 503"])
            #expect(retried.map(\.attempts) == [2, 2])
            // Down to one token: it is stored as a one-token entry is.
            #expect(try await store.reschedule([OutboxRetry(id: ids[0], notBefore: later, error: "again", remainingTokens: ["token-3"])], owner: "w2") == 1)
            let last = try await store.claimDue(now: later, limit: 1, leaseFor: .seconds(30), owner: "w3")
            #expect(last.map(\.message.pushTokens) == [["token-3"]])
            #expect(try await store.pendingCount() == 3)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func concurrentReschedulesEachGetTheirOwnAnswerAndTime(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let ids = try await store.enqueue((0..<60).map { Self.message($0) })
            _ = try await store.claimDue(now: Self.now, limit: 60, leaseFor: .seconds(3600), owner: "w1")
            // Entry i: pause of i seconds, its own error; every third asked by another owner (refused).
            let answers = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
                for (index, id) in ids.enumerated() {
                    group.addTask {
                        let owner = index % 3 == 0 ? "other" : "w1"
                        let answer = try await store.reschedule(
                            id: id, owner: owner, notBefore: Self.now.addingTimeInterval(Double(index + 1)), error: "error \(index)"
                        )
                        return (index, answer)
                    }
                }
                var answers: [Int: Bool] = [:]
                for try await (index, answer) in group { answers[index] = answer }
                return answers
            }
            #expect(answers == Dictionary(uniqueKeysWithValues: (0..<60).map { ($0, $0 % 3 != 0) }))
            // The refused ones stay leased to w1; each rescheduled one is due at its own time with its error.
            for index in 0..<60 where index % 3 != 0 {
                let due = try await store.claimDue(now: Self.now.addingTimeInterval(Double(index + 1)), limit: 60, leaseFor: .seconds(3600), owner: "w2")
                #expect(due.map(\.id) == [ids[index]], "entry \(index)")
                #expect(due.first?.lastError == "error \(index)")
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func oneRescheduleReleasesManyEntriesEachWithItsOwnTimeAndError(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            // 700 entries: more than one statement's worth. w1 leases 650 of them, w2 the other 50.
            let ids = try await store.enqueue((0..<700).map { Self.message($0) })
            let mine = try await store.claimDue(now: Self.now, limit: 650, leaseFor: .seconds(3600), owner: "w1").map(\.id)
            let theirs = try await store.claimDue(now: Self.now, limit: 50, leaseFor: .seconds(3600), owner: "w2").map(\.id)
            #expect(Set(mine + theirs) == Set(ids))
            #expect(try await store.reschedule([], owner: "w1") == 0)
            // Entry i of w1's is due i seconds later with its own error; w2's entries and an unknown id are
            // asked for too, and left alone.
            let retries = mine.enumerated().map { index, id in
                OutboxRetry(id: id, notBefore: Self.now.addingTimeInterval(Double(index + 1)), error: "error \(index)")
            }
            let strangers = theirs.map { OutboxRetry(id: $0, notBefore: Self.now, error: "stranger") }
            let unknown = OutboxRetry(id: 999_999_999, notBefore: Self.now, error: "unknown")
            #expect(try await store.reschedule(strangers.prefix(25) + retries + strangers.dropFirst(25) + [unknown], owner: "w1") == 650)
            // Nothing is due before the first time; then each entry at its own time, with its own error.
            #expect(try await store.claimDue(now: Self.now.addingTimeInterval(0.5), limit: 700, leaseFor: .seconds(60), owner: "w3").isEmpty)
            var next = 0
            for index in [0, 1, 299, 300, 301, 599, 600, 649] {
                let due = try await store.claimDue(
                    now: Self.now.addingTimeInterval(Double(index + 1)), limit: 700, leaseFor: .seconds(3600), owner: "w3"
                )
                #expect(due.map(\.id) == Array(mine[next...index]), "entries \(next)…\(index)")
                #expect(due.map(\.lastError) == (next...index).map { "error \($0)" }, "entries \(next)…\(index)")
                #expect(due.allSatisfy { $0.attempts == 2 })
                next = index + 1
            }
            // w2's entries are still its own: it can complete every one of them.
            #expect(try await store.complete(ids: theirs, owner: "w2") == 50)
        }
    }

    /// An idle worker polls an empty outbox: its claim reads and writes nothing, so it neither waits for
    /// another writer (a busy instance's batch, a checkpoint) nor holds one up.
    @Test(arguments: StoreKind.allCases)
    func aClaimOfAnEmptyOutboxDoesNotWaitForTheWriteLock(kind: StoreKind) async throws {
        let database = try await TestDatabase.make(kind)
        try await withStores(kind, on: database) { stores async throws in
            let store = stores[0]
            let returned = ReturnedFlag()
            let (claim, returnedWhileHeld) = try await database.holdingOutboxWriteLock { () async throws in
                let claim = Task {
                    defer { returned.set() }
                    return try await store.claimDue(now: Self.now, limit: 10, leaseFor: .seconds(30), owner: "idle")
                }
                // A write would wait until the lock is released below: as long as this test lets it.
                let start = ContinuousClock.now
                while !returned.isSet, ContinuousClock.now - start < .seconds(15) { try await Task.sleep(for: .milliseconds(20)) }
                return (claim, returned.isSet)
            }
            #expect(try await claim.value.isEmpty)
            #expect(returnedWhileHeld, "the claim of an empty outbox waited for another connection's write lock")
            // With an entry, the claim leases it as before.
            let ids = try await store.enqueue([Self.message(1)])
            #expect(try await store.claimDue(now: Self.now, limit: 10, leaseFor: .seconds(30), owner: "idle").map(\.id) == ids)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func largeBatchesAreStoredWhole(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let ids = try await store.enqueue((0..<2_500).map { Self.message($0) })
            #expect(ids.count == 2_500)
            #expect(Set(ids).count == 2_500)
            #expect(try await store.pendingCount() == 2_500)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func instancesSharingTheOutboxNeverClaimTheSameEntry(kind: StoreKind) async throws {
        try await withStores(kind, count: 2) { stores async throws in
            let ids = try await stores[0].enqueue((0..<300).map { Self.message($0) })
            let claims = try await withThrowingTaskGroup(of: [Int64].self) { group in
                for worker in 0..<6 {
                    let store = stores[worker % 2]
                    group.addTask {
                        var mine: [Int64] = []
                        while true {
                            let batch = try await store.claimDue(now: Self.now, limit: 7, leaseFor: .seconds(60), owner: "w\(worker)")
                            if batch.isEmpty { return mine }
                            mine += batch.map(\.id)
                        }
                    }
                }
                return try await group.reduce(into: [Int64]()) { $0 += $1 }
            }
            #expect(claims.count == ids.count)
            #expect(Set(claims) == Set(ids))
        }
    }
}

/// Whether a call has returned, set by the task that made it and read by another.
final class ReturnedFlag: Sendable {
    private let value = Atomic<Bool>(false)

    func set() {
        self.value.store(true, ordering: .releasing)
    }

    var isSet: Bool {
        self.value.load(ordering: .acquiring)
    }
}
