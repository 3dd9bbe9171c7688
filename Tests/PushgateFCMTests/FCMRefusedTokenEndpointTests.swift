import Foundation
import PushgateCore
@testable import PushgateFCM
import PushgateSandbox
import Testing

/// A token endpoint (or outbound proxy) that refuses connections fails the delivery at once as retry
/// later, instead of holding it for the token request's whole deadline while the client connects again.
@Suite("FCM token endpoint refusing connections")
struct FCMRefusedTokenEndpointTests {
    @Test func aRefusedTokenEndpointFailsTheDeliveryAtOnce() async throws {
        let directory = try TemporaryDirectory()
        let emulator = try FCMEmulator()
        let path = directory.path("service-account.json")
        // Port 1 on loopback: nothing listens, every connection is refused.
        try emulator.writeServiceAccount(baseURL: "http://127.0.0.1:1", to: path)
        let settings = try appSettings(["type: gcm", "api_version: v1", "project_id: pushgate-sandbox", "service_account_file: \(path)", "base_url: http://127.0.0.1:1"])
        let provider = try FCMProvider(configuration: try FCMConfiguration(settings: settings), logger: TestLogging.quiet)
        let started = ContinuousClock.now
        let outcome = await provider.deliver(.sample(), to: "token", deadline: .now + .seconds(30))
        let took = ContinuousClock.now - started
        try await provider.shutdown()
        guard case .retryLater = outcome else {
            Issue.record("expected retry later, got \(outcome)")
            return
        }
        // The token request's own deadline is 10 s; a refused connection ends it far sooner.
        #expect(took < .seconds(5), "took \(took)")
    }
}
