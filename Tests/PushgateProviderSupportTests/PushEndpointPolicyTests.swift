import Foundation
@testable import PushgateProviderSupport
import Synchronization
import Testing

@Suite("Push endpoint policy")
struct PushEndpointPolicyTests {
    /// A resolver with fixed answers, so no test depends on DNS.
    static let resolver = HostResolver { host in
        switch host {
        case "push.example": [IPAddress(literal: "93.184.216.34")!]
        case "internal.example": [IPAddress(literal: "10.1.2.3")!]
        case "mixed.example": [IPAddress(literal: "93.184.216.34")!, IPAddress(literal: "fd00::1")!]
        case "metadata.example": [IPAddress(literal: "169.254.169.254")!]
        default: nil
        }
    }

    static func check(_ url: String, allowed: [String]? = nil) async -> PushEndpointPolicy.Decision {
        await PushEndpointPolicy(allowedEndpoints: allowed, resolver: Self.resolver).check(URL(string: url)!)
    }

    @Test func globsMatchWholeHostAndPortCaseInsensitively() {
        #expect(HostGlob("*.push.example").matches("fcm.PUSH.example"))
        #expect(!HostGlob("*.push.example").matches("push.example.evil"))
        #expect(HostGlob("127.0.0.1:*").matches("127.0.0.1:8080"))
        #expect(!HostGlob("127.0.0.1:*").matches("127.0.0.1"))
        #expect(HostGlob("updates?.example").matches("updates1.example"))
        #expect(!HostGlob("updates?.example").matches("updates12.example"))
        #expect(HostGlob("*").matches("anything:1"))
    }

    @Test func publicHTTPSEndpointsAreAllowed() async {
        #expect(await Self.check("https://push.example/sub/1") == .allowed(addresses: [IPAddress(literal: "93.184.216.34")!]))
        #expect(await Self.check("https://93.184.216.34/sub/1") == .allowed(addresses: [IPAddress(literal: "93.184.216.34")!]))
    }

    @Test(arguments: [
        "https://10.0.0.1/sub", "https://172.20.0.5/sub", "https://192.168.1.1/sub", "https://127.0.0.1/sub",
        "https://169.254.169.254/latest", "https://0.0.0.0/sub", "https://224.0.0.1/sub", "https://[::1]/sub",
        "https://[fe80::1]/sub", "https://[fd12::3]/sub", "https://[::ffff:127.0.0.1]/sub", "https://[ff02::1]/sub",
        "https://localhost/sub", "https://internal.example/sub", "https://mixed.example/sub", "https://metadata.example/sub",
        "https://[::127.0.0.1]/sub", "https://[64:ff9b::7f00:1]/sub", "https://[2002:7f00:1::1]/sub", "https://192.0.0.8/sub",
        "https://198.18.0.1/sub", "https://240.0.0.1/sub", "https://203.0.113.7/sub",
    ])
    func localAndPrivateAddressesAreRefused(url: String) async {
        guard case .refused = await Self.check(url) else {
            Issue.record("\(url) was not refused")
            return
        }
    }

    @Test func aNameIsResolvedOnceForAWhile() async {
        let lookups = LookupCounter()
        let resolver = HostResolver { host in
            lookups.add()
            return host == "push.example" ? [IPAddress(literal: "93.184.216.34")!] : nil
        }
        let policy = PushEndpointPolicy(allowedEndpoints: nil, resolver: resolver)
        for _ in 0..<5 {
            #expect(await policy.check(URL(string: "https://push.example/sub/1")!) == .allowed(addresses: [IPAddress(literal: "93.184.216.34")!]))
        }
        #expect(lookups.count == 1)
        // A name that does not resolve is asked again each time.
        for _ in 0..<2 { #expect(await policy.check(URL(string: "https://nowhere.example/sub")!) == .unresolved) }
        #expect(lookups.count == 3)
    }

    /// A burst of deliveries to one push server whose name is not remembered (an outbox round, the first
    /// minute after start) asks the resolver once; a burst over many names waits for the resolver's
    /// places instead of failing. (Before, the 17th concurrent check failed at once, and UnifiedPush
    /// then left the healthy host alone for a minute.)
    @Test func aBurstOfChecksAsksTheResolverOnceANameAndWaitsForItsPlaces() async {
        let lookups = LookupCounter()
        let resolver = HostResolver.bounded(
            { host in
                lookups.add()
                usleep(50_000)
                return .addresses([IPAddress(literal: "93.184.216.34")!])
            }, limit: 4, timeout: .seconds(30))
        let policy = PushEndpointPolicy(allowedEndpoints: nil, resolver: resolver)
        let allowed = PushEndpointPolicy.Decision.allowed(addresses: [IPAddress(literal: "93.184.216.34")!])
        let oneName = await withTaskGroup(of: PushEndpointPolicy.Decision.self) { group in
            for index in 0..<64 { group.addTask { await policy.check(URL(string: "https://push.example/sub/\(index)")!) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(oneName.allSatisfy { $0 == allowed }, "\(oneName.filter { $0 != allowed })")
        #expect(lookups.count == 1)
        let manyNames = await withTaskGroup(of: PushEndpointPolicy.Decision.self) { group in
            for index in 0..<24 { group.addTask { await policy.check(URL(string: "https://push\(index).example/sub")!) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(manyNames.allSatisfy { $0 == allowed }, "\(manyNames.filter { $0 != allowed })")
        #expect(lookups.count == 25)
    }

    /// A check waits for a slow lookup until its delivery's deadline, not the resolver's 10 s; the lookup
    /// goes on, and the next check takes its answer without asking again.
    @Test func aCheckWaitsForALookupUntilItsDeadlineAndTheLookupGoesOn() async {
        let lookups = LookupCounter()
        let resolver = HostResolver(lookup: { _ in
            lookups.add()
            try? await Task.sleep(for: .seconds(1))
            return .addresses([IPAddress(literal: "93.184.216.34")!])
        })
        let policy = PushEndpointPolicy(allowedEndpoints: nil, resolver: resolver)
        let allowed = PushEndpointPolicy.Decision.allowed(addresses: [IPAddress(literal: "93.184.216.34")!])
        let started = ContinuousClock.now
        // Unfinished: the check ended at its deadline, before the lookup's second was over (a loaded
        // machine may resume it late, but not as late as the resolver's 10 s).
        #expect(await policy.check(URL(string: "https://slow.example/sub/1")!, deadline: .now + .milliseconds(100)) == .lookupUnfinished)
        #expect(ContinuousClock.now - started < .seconds(5))
        // A deadline already past: no wait at all.
        #expect(await policy.check(URL(string: "https://slow.example/sub/2")!, deadline: .now - .seconds(1)) == .lookupUnfinished)
        #expect(await policy.check(URL(string: "https://slow.example/sub/3")!, deadline: .now + .seconds(30)) == allowed)
        #expect(lookups.count == 1)
        // Remembered: answered at once from now on, even with no time left.
        #expect(await policy.check(URL(string: "https://slow.example/sub/4")!, deadline: .now) == allowed)
        #expect(lookups.count == 1)
    }

    /// A lookup nobody waits for any more still ends and leaves the list of lookups under way.
    @Test func aLookupLeftByItsCallersRemembersItsAnswerAndEnds() async throws {
        let resolver = HostResolver(lookup: { _ in
            try? await Task.sleep(for: .milliseconds(200))
            return .addresses([IPAddress(literal: "93.184.216.34")!])
        })
        let policy = PushEndpointPolicy(allowedEndpoints: nil, resolver: resolver)
        #expect(await policy.check(URL(string: "https://slow.example/sub")!, deadline: .now) == .lookupUnfinished)
        #expect(policy.lookupsUnderWay == 1)
        let deadline = ContinuousClock.now + .seconds(30)
        while policy.lookupsUnderWay > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(policy.lookupsUnderWay == 0)
        #expect(await policy.check(URL(string: "https://slow.example/sub")!, deadline: .now) == .allowed(addresses: [IPAddress(literal: "93.184.216.34")!]))
    }

    @Test func plainHTTPNeedsAnAllowedEndpointsEntry() async {
        #expect(await Self.check("http://push.example/sub") == .refused(reason: "endpoint is not https"))
        #expect(await Self.check("http://127.0.0.1:8080/sub", allowed: ["127.0.0.1:*"]) == .allowed(addresses: []))
        guard case .refused = await Self.check("ftp://push.example/sub") else {
            Issue.record("ftp accepted")
            return
        }
    }

    @Test func allowedEndpointsRestrictAndPermit() async {
        #expect(await Self.check("https://push.example/sub", allowed: ["*.mozilla.com"]) == .refused(reason: "endpoint host is not in allowed_endpoints"))
        #expect(await Self.check("https://internal.example/sub", allowed: ["internal.example"]) == .allowed(addresses: []))
        #expect(await Self.check("https://10.0.0.1/sub", allowed: ["127.0.0.1:*"]) == .refused(reason: "endpoint host is not in allowed_endpoints"))
    }

    @Test func unresolvableHostsAreReported() async {
        #expect(await Self.check("https://nowhere.example/sub") == .unresolved)
    }

    @Test func aNameThatDoesNotExistIsToldFromAFailedLookup() async {
        let resolver = HostResolver(lookup: { host in
            switch host {
            case "gone.example": .noSuchHost
            case "flaky.example": .failed
            default: .addresses([IPAddress(literal: "93.184.216.34")!])
            }
        })
        let policy = PushEndpointPolicy(allowedEndpoints: nil, resolver: resolver)
        #expect(await policy.check(URL(string: "https://gone.example/up1")!) == .noSuchHost)
        #expect(await policy.check(URL(string: "https://flaky.example/up1")!) == .unresolved)
        #expect(await policy.check(URL(string: "https://push.example/up1")!) == .allowed(addresses: [IPAddress(literal: "93.184.216.34")!]))
    }

    @Test func theSystemResolverSaysAReservedNameDoesNotExist() async {
        // RFC 6761: `.invalid` names never resolve; a resolver answers NXDOMAIN (or, offline, fails).
        let answer = await HostResolver.system.lookup("pushgate-test.invalid")
        #expect(answer == .noSuchHost || answer == .failed)
    }

    @Test func systemResolverFindsLocalhost() async throws {
        let addresses = try #require(await HostResolver.system.resolve("localhost"))
        #expect(addresses.contains { $0.restriction == "loopback" })
    }
}

/// Counts resolver calls.
final class LookupCounter: Sendable {
    private let calls = Mutex(0)
    func add() { self.calls.withLock { $0 += 1 } }
    var count: Int { self.calls.withLock { $0 } }
}
