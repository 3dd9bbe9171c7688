import Foundation
import Logging
import PushgateCore
@testable import PushgateServer
import PushgateTestSupport
import ServiceLifecycle
import Synchronization
import Testing

/// The daily check of certificate dates: a warning when a certificate comes within 30, 7 and 1 days of
/// its end, once each, and an error every day once it has expired; nothing for keys without a date.
@Suite("credential watch")
struct CredentialWatchTests {
    /// The events logged at warning and above, each as "level app message".
    static func warnings(_ log: LogRecorder) -> [String] {
        log.all.filter { $0.level >= .warning }.map { "\($0.level) \($0.metadata["app"] ?? "-") \($0.message)" }
    }

    final class Flag: Sendable {
        private let value = Mutex(false)
        var isSet: Bool { self.value.withLock { $0 } }
        func set() { self.value.withLock { $0 = true } }
    }

    /// A wall clock the test moves by whole days.
    final class Calendar: Sendable {
        private let today = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        var now: Date { self.today.withLock { $0 } }
        func advance(days: Double) { self.today.withLock { $0 += days * 86_400 } }
    }

    @Test func warnsAtThirtySevenAndOneDaysAndEveryDayOnceExpired() async throws {
        let calendar = Calendar()
        let log = LogRecorder()
        let logger = log.logger()
        let certificate = ProviderCredential(
            appID: "im.example.ios", kind: .apnsCertificate, file: "/etc/pushgate/apns.pem", identity: "subject CN=x", notAfter: calendar.now + 31.5 * 86_400
        )
        let key = ProviderCredential(appID: "im.example.android", kind: .fcmServiceAccount, file: nil, identity: "key id k", notAfter: nil)
        let watch = CredentialWatch(credentials: [certificate, key], registry: GatewayMetrics().registry, now: { calendar.now }, logger: logger)

        // Day by day, from 31.5 days before the end to 2.5 days after it.
        var warningsByDay: [Int: [String]] = [:]
        for day in 0...34 {
            let before = Self.warnings(log).count
            watch.check()
            warningsByDay[day] = Array(Self.warnings(log)[before...])
            calendar.advance(days: 1)
        }
        let warned = warningsByDay.filter { !$0.value.isEmpty }.keys.sorted()
        // 30 days left on day 1.5 → first seen on day 2 (29.5 left); 7 days on day 24.5 → day 25; 1 day on day 30.5 → day 31;
        // expired on day 31.5 → days 32, 33 and 34.
        #expect(warned == [2, 25, 31, 32, 33, 34], "\(warningsByDay.filter { !$0.value.isEmpty })")
        #expect(warningsByDay[2] == ["warning im.example.ios credential expires within 30 days: replace it"])
        #expect(warningsByDay[25] == ["warning im.example.ios credential expires within 7 days: replace it"])
        #expect(warningsByDay[31] == ["warning im.example.ios credential expires within 1 day: replace it"])
        #expect(warningsByDay[33] == ["error im.example.ios credential expired: the provider refuses it; replace it"])
    }

    @Test func aCertificateAlreadyCloseIsReportedAtStartAndTheServiceChecksAgainEachInterval() async throws {
        let calendar = Calendar()
        let log = LogRecorder()
        let logger = log.logger()
        let certificate = ProviderCredential(
            appID: "im.example.ios", kind: .apnsCertificate, file: nil, identity: "subject CN=x", notAfter: calendar.now + 7.5 * 86_400
        )
        // A "day" of 20 ms: the service's own loop, run as the gateway runs it.
        let watch = CredentialWatch(
            credentials: [certificate], registry: GatewayMetrics().registry, interval: .milliseconds(20), now: { calendar.now }, logger: logger
        )
        let group = ServiceGroup(configuration: .init(services: [watch], logger: Logger(label: "group") { _ in SwiftLogNoOpLogHandler() }))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline, Self.warnings(log).isEmpty { try await Task.sleep(for: .milliseconds(10)) }
            #expect(Self.warnings(log) == ["warning im.example.ios credential expires within 30 days: replace it"])
            // A day later, 6.5 days left: the next check warns of the 7-day step.
            calendar.advance(days: 1)
            while ContinuousClock.now < deadline, Self.warnings(log).count < 2 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(Self.warnings(log).last == "warning im.example.ios credential expires within 7 days: replace it")
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(Self.warnings(log).count == 2, "\(Self.warnings(log))")
    }

    /// A reload that removes a dated credential (its app, or a certificate replaced by a key) takes its
    /// expiry series off `/metrics`, so an alert on it does not fire for a certificate no longer used.
    @Test func aCredentialAReloadRemovesLeavesTheMetrics() {
        let metrics = GatewayMetrics()
        let dated = { (app: String) in
            ProviderCredential(appID: app, kind: .apnsCertificate, file: nil, identity: "subject CN=\(app)", notAfter: Date(timeIntervalSince1970: 2_000_000_000))
        }
        let watch = CredentialWatch(credentials: [dated("im.example.one"), dated("im.example.two")], registry: metrics.registry, logger: TestLogging.quiet)
        func rendered() -> String { String(decoding: metrics.render(), as: UTF8.self) }
        #expect(rendered().contains(#"pushgate_credential_expiry_timestamp_seconds{app="im.example.one",kind="apns_certificate"} 2000000000"#))
        watch.replace(with: [dated("im.example.two")])
        #expect(!rendered().contains(#"app="im.example.one""#), "\(rendered())")
        #expect(rendered().contains(#"pushgate_credential_expiry_timestamp_seconds{app="im.example.two",kind="apns_certificate"} 2000000000"#))
    }

    /// A certificate close to its end, replaced by a reload and then put back by another, is warned about
    /// again: the watch forgets what it reported of a credential no longer configured.
    @Test func aCertificatePutBackIsWarnedAboutAgain() {
        let calendar = Calendar()
        let log = LogRecorder()
        let closing = ProviderCredential(appID: "im.example.ios", kind: .apnsCertificate, file: nil, identity: "subject CN=old", notAfter: calendar.now + 3 * 86_400)
        let fresh = ProviderCredential(appID: "im.example.ios", kind: .apnsCertificate, file: nil, identity: "subject CN=new", notAfter: calendar.now + 300 * 86_400)
        let watch = CredentialWatch(credentials: [closing], registry: GatewayMetrics().registry, now: { calendar.now }, logger: log.logger())
        watch.check()
        watch.replace(with: [fresh])
        watch.replace(with: [closing])
        #expect(Self.warnings(log) == Array(repeating: "warning im.example.ios credential expires within 7 days: replace it", count: 2))
    }

    /// A gateway whose credentials carry no date (keys only, or none) must not stop: the service runs
    /// until graceful shutdown like the others.
    @Test(arguments: [0, 1])
    func withNothingToCheckTheServiceWaitsForShutdown(credentialCount: Int) async throws {
        let key = ProviderCredential(appID: "im.example.android", kind: .fcmServiceAccount, file: nil, identity: "key id k", notAfter: nil)
        let watch = CredentialWatch(credentials: Array(repeating: key, count: credentialCount), registry: GatewayMetrics().registry, logger: TestLogging.quiet)
        let group = ServiceGroup(configuration: .init(services: [watch], logger: TestLogging.quiet))
        let ended = Flag()
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                try await group.run()
                ended.set()
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(!ended.isSet, "the service ended by itself, which ends the gateway")
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(ended.isSet)
    }
}
