import Foundation
import PushgateAPNs
import PushgateConfig
import PushgateCore
import PushgateSandbox
import Testing

/// Certificate authentication (`certfile`) against the emulator, with a client certificate its CA issued.
@Suite("APNs certificate authentication")
struct APNsCertificateAuthenticationTests {
    @Test func topicComesFromTheCertificateUIDAndDeliveryUsesTheClientCertificate() async throws {
        try await EmulatorHarness.withEmulator { harness in
            let directory = try TemporaryDirectory()
            let certfile = try directory.write(
                "push.pem",
                try harness.emulator.certificateAuthority.issueClientCertificate(userID: harness.emulator.bundleID)
            )
            let settings = try appSettings([
                "certfile": certfile,
                "base_url": "https://127.0.0.1:\(harness.port)",
                "ca_file": harness.caPath,
            ])
            let configuration = try APNsConfiguration(settings: settings)
            #expect(configuration.topic == harness.emulator.bundleID)
            #expect(configuration.authentication.description == "certificate")

            let provider = try APNsProvider(configuration: configuration, logger: TestLogging.quiet)
            #expect(provider.providerToken == nil)
            let alert = PushNotification(payload: .object(["aps": .object(["alert": .string("hi")])]))
            let delivered = await provider.deliver(alert, to: deviceToken(), deadline: .soon)
            let unregistered = await provider.deliver(alert, to: deviceToken("dead"), deadline: .soon)
            try await provider.shutdown()
            #expect(delivered == .delivered)
            #expect(unregistered == .invalidToken(reason: "Unregistered"))
            let log = harness.emulator.log.all
            #expect(log.map(\.status) == [200, 410])
            #expect(log.map { $0.headers["authentication"] } == ["certificate", "certificate"])
            #expect(log.map { $0.headers["apns-topic"] } == [harness.emulator.bundleID, harness.emulator.bundleID])
        }
    }

    @Test func certificateForAnotherAppGetsTopicDisallowed() async throws {
        try await EmulatorHarness.withEmulator { harness in
            let directory = try TemporaryDirectory()
            // A certificate for another app: the emulator refuses its topic.
            let certfile = try directory.write("other.pem", try harness.emulator.certificateAuthority.issueClientCertificate(userID: "im.other.app"))
            let settings = try appSettings([
                "certfile": certfile, "topic": harness.emulator.bundleID,
                "base_url": "https://127.0.0.1:\(harness.port)", "ca_file": harness.caPath,
            ])
            let provider = try APNsProvider(configuration: APNsConfiguration(settings: settings), logger: TestLogging.quiet)
            let alert = PushNotification(payload: .object(["aps": .object(["alert": .string("hi")])]))
            let outcome = await provider.deliver(alert, to: deviceToken(), deadline: .soon)
            try await provider.shutdown()
            #expect(outcome == .invalidToken(reason: "TopicDisallowed"))
            #expect(harness.emulator.log.all.map(\.reason) == ["TopicDisallowed"])
        }
    }
}
