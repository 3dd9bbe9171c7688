import Foundation
import PushgateCore
import PushgateDelivery
import PushgateStore
import Testing

/// What the dispatcher counts for the operator console: each outcome by app, front end and minute, the
/// failures (token fingerprints only), and each app's latency and state.
@Suite("Delivery counting")
struct DeliveryCountingTests {
    @Test func theDispatcherCountsEachOutcomeByAppAndFrontEndAndKeepsFailuresAsFingerprints() async throws {
        let (store, _) = try await DispatcherAndOutboxTests.openStore()
        let provider = ScriptedProvider(appID: "app", script: ["gone": [.invalidToken(reason: "Unregistered")], "busy": [.retryLater(after: nil, reason: "503")]])
        let dispatcher = Dispatcher(
            directory: ProviderDirectory([provider]), store: store, metrics: DeliveryMetrics(factory: NoMetrics.factory), logger: TestLogging.quiet
        )
        try await DispatcherAndOutboxTests.running([store]) { () async throws in
            guard case .found(let found) = dispatcher.directory.lookup("app") else {
                Issue.record("the app must be found")
                return
            }
            for token in ["fine", "fine-too", "gone"] {
                _ = await dispatcher.deliver(DispatcherAndOutboxTests.notification, via: found, token: token, deadline: .now + .seconds(5), frontEnd: "matrix")
            }
            _ = await dispatcher.deliver(DispatcherAndOutboxTests.notification, via: found, token: "busy", deadline: .now + .seconds(5), frontEnd: "gorush")
            let counts = dispatcher.tally.take().map { "\($0.appID) \($0.frontEnd) \($0.outcome) \($0.count)" }.sorted()
            #expect(counts == ["app gorush retry_later 1", "app matrix delivered 2", "app matrix invalid_token 1"])
            #expect(dispatcher.tally.take().isEmpty)
            let failures = dispatcher.recentFailures.newestFirst
            #expect(failures.map(\.outcome) == ["retry_later", "invalid_token"])
            #expect(failures.map(\.tokenFingerprint) == [Redaction.fingerprint("busy"), Redaction.fingerprint("gone")])
            #expect(failures.map(\.reason) == ["503", "Unregistered"])
            #expect(failures.map(\.frontEnd) == ["gorush", "matrix"])
            let state = dispatcher.state(of: "app")
            #expect(state.inFlight == 0 && !state.circuitOpen && !state.credentialsFailing)
            #expect(state.latencyMilliseconds != nil)
            #expect(dispatcher.state(of: "other").latencyMilliseconds == nil)
        }
    }

    @Test func recentFailuresKeepTheNewestUpToTheirCapacity() {
        let failures = RecentFailures(capacity: 3)
        for index in 0..<5 {
            failures.record(.init(time: Date(), appID: "a\(index)", frontEnd: "f", tokenFingerprint: "t:0", outcome: "rejected", reason: "r"))
        }
        #expect(failures.newestFirst.map(\.appID) == ["a4", "a3", "a2"])
        let few = RecentFailures(capacity: 3)
        few.record(.init(time: Date(), appID: "only", frontEnd: "f", tokenFingerprint: "t:0", outcome: "rejected", reason: "r"))
        #expect(few.newestFirst.map(\.appID) == ["only"])
    }

    @Test func theTallyGroupsByMinuteAndTakesBackWhatAFlushCouldNotStore() {
        let tally = DeliveryTally()
        let minute = Date(timeIntervalSince1970: 60 * 1000)
        tally.record(appID: "a", frontEnd: "m", outcome: "delivered", at: minute)
        tally.record(appID: "a", frontEnd: "m", outcome: "delivered", at: minute.addingTimeInterval(59))
        tally.record(appID: "a", frontEnd: "m", outcome: "delivered", at: minute.addingTimeInterval(60))
        let taken = tally.take().sorted { $0.minute < $1.minute }
        #expect(taken.map(\.minute) == [1000, 1001])
        #expect(taken.map(\.count) == [2, 1])
        tally.giveBack(taken)
        tally.record(appID: "a", frontEnd: "m", outcome: "delivered", at: minute)
        #expect(tally.pendingTotal == 4)
    }
}
