import PushgateCore
import PushgateDelivery
import Testing

/// A delivery that looked up its app's back end before a reload and is sent after it (the rest of a
/// Nextcloud batch planned before, a gorush request waiting for a slot) goes through the retired back end;
/// its outcome must not move the new back end's circuit or credentials state.
@Suite("Dispatcher and retired back ends")
struct DispatcherRetiredBackEndTests {
    @Test func theRetiredBackEndsRefusalDoesNotMarkTheNewOnesCredentialsFailing() async throws {
        let (store, _) = try await DispatcherAndOutboxTests.openStore()
        let retired = ScriptedProvider(appID: "a", script: ["t": [.credentialsRefused(reason: "InvalidProviderToken")]])
        let current = ScriptedProvider(appID: "a")
        let dispatcher = Dispatcher(
            directory: ProviderDirectory([retired]), store: store, metrics: DeliveryMetrics(factory: NoMetrics.factory), logger: TestLogging.quiet
        )
        try await DispatcherAndOutboxTests.running([store]) { () async throws in
            // The operator fixed the key and reloaded: the new back end replaces the refused one.
            dispatcher.reconfigure(ProviderDirectory([current]), inflightLimits: [:], resetting: ["a"])
            let outcome = await dispatcher.deliver(DispatcherAndOutboxTests.notification, via: retired, token: "t", deadline: .now + .seconds(5), frontEnd: "nextcloud")
            guard case .retryLater = outcome else {
                Issue.record("a refused credential is retry later for the front end, got \(outcome)")
                return
            }
            #expect(!dispatcher.state(of: "a").credentialsFailing)
            // Five timeouts of the retired back end do not open the new one's circuit either.
            let hung = ScriptedProvider(appID: "a", script: ["t": [.retryLater(after: nil, reason: "timeout")]])
            for _ in 0..<6 {
                _ = await dispatcher.deliver(DispatcherAndOutboxTests.notification, via: hung, token: "t", deadline: .now + .seconds(5), frontEnd: "gorush")
            }
            #expect(!dispatcher.state(of: "a").circuitOpen)
            #expect(await dispatcher.deliver(DispatcherAndOutboxTests.notification, via: current, token: "u", deadline: .now + .seconds(5), frontEnd: "gorush") == .delivered)
            // The current back end's own refusal does count.
            let refusing = ScriptedProvider(appID: "a", script: ["t": [.credentialsRefused(reason: "BadCertificate")]])
            dispatcher.reconfigure(ProviderDirectory([refusing]), inflightLimits: [:], resetting: ["a"])
            _ = await dispatcher.deliver(DispatcherAndOutboxTests.notification, via: refusing, token: "t", deadline: .now + .seconds(5), frontEnd: "gorush")
            #expect(dispatcher.state(of: "a").credentialsFailing)
        }
    }
}
