import Foundation
import PushgateConfig
@testable import PushgateServer
import Testing

/// A graceful stop runs the listeners' drain and then the outbox worker's, one after the other; the
/// limit after which what is left is cancelled covers both in turn (cut short, the store closes under
/// deliveries that already reached the provider, and they are sent again after the restart), and the
/// systemd unit's SIGKILL comes after it.
@Suite("graceful shutdown limit")
struct GracefulShutdownLimitTests {
    @Test func theLimitCoversTheLongestRequestThenAnOutboxDelivery() throws {
        let defaults = try GatewayConfiguration(yaml: "gorush: {}\n")
        // gorush's 30-s sync_timeout, an outbox delivery's 30 s, six 3-s database timeouts (the worker's
        // last writes, the front ends' counts) and 5 s.
        #expect(Gateway.maximumGracefulShutdownDuration(for: defaults) == .seconds(83))
        let long = try GatewayConfiguration(yaml: "gorush: {sync_timeout: 120}\ndatabase: {timeout: 10}\n")
        #expect(Gateway.maximumGracefulShutdownDuration(for: long) == .seconds(215))
        // Without gorush the Matrix notify's 20 s is the longest request.
        #expect(Gateway.maximumGracefulShutdownDuration(for: try GatewayConfiguration(yaml: "{}\n")) == .seconds(73))
    }

    @Test func theSystemdUnitWaitsLongerThanTheGatewayDoesByDefault() throws {
        let unit = try String(contentsOf: SystemdUnitTests.repository.appendingPathComponent("deploy/pushgate.service"), encoding: .utf8)
        let line = try #require(unit.split(separator: "\n").first { $0.hasPrefix("TimeoutStopSec=") })
        let seconds = try #require(Int(line.dropFirst("TimeoutStopSec=".count)))
        let defaults = try GatewayConfiguration(yaml: "gorush: {}\n")
        #expect(Duration.seconds(seconds) > Gateway.maximumGracefulShutdownDuration(for: defaults))
    }
}
