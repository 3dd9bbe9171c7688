public import Foundation

/// Decides whether a push endpoint (a Web Push subscription's, a UnifiedPush pushkey) may be contacted.
///
/// - With `allowed_endpoints` set, the endpoint's `host[:port]` must match one of its globs (`*`, `?`,
///   case-insensitive, whole text, as Sygnal).
/// - Endpoints must be `https`; `http` is accepted only for hosts matched by `allowed_endpoints`.
/// - A host that is, or resolves to, a loopback, private, link-local, unspecified or multicast address is
///   refused unless `allowed_endpoints` matches it, so endpoints cannot aim the gateway at internal
///   services. The addresses checked are the ones connected to (``Decision/allowed(addresses:)``), so a
///   name cannot resolve to a public address for the check and a private one for the connection.
/// - A name's addresses are remembered for ``resolutionLifetime`` (at most ``resolutionCacheSize``
///   names), so a busy endpoint costs no resolver call per message; checks of one name while it is
///   being looked up wait for that lookup (``LookupsUnderWay``), so a burst of deliveries to one push
///   server asks the resolver once. A check waits for a lookup until its delivery's deadline at most
///   (``Decision/lookupUnfinished``); the lookup goes on and its answer is remembered all the same.
public struct PushEndpointPolicy: Sendable {
    /// The policy's answer for one endpoint.
    public enum Decision: Sendable, Equatable {
        /// The endpoint may be contacted, at one of `addresses` (checked public addresses, or the literal);
        /// empty for hosts listed in `allowed_endpoints`, which are connected to by name.
        case allowed(addresses: [IPAddress])
        /// The endpoint must not be contacted.
        case refused(reason: String)
        /// The host name did not resolve; the check can be tried again later.
        case unresolved
        /// The resolver says the host name does not exist: trying again will not help.
        case noSuchHost
        /// The deadline came before the host name's lookup answered: nothing is known of the host yet,
        /// and the lookup goes on for the next try.
        case lookupUnfinished
    }

    /// How long a name's resolved addresses are used before it is resolved again.
    static let resolutionLifetime: Duration = .seconds(60)
    /// The most names remembered.
    static let resolutionCacheSize = 1024

    private let allowed: [HostGlob]?
    private let resolver: HostResolver
    private let resolutions = ResolvedNames()
    private let lookups = LookupsUnderWay()

    /// Creates a policy from `allowed_endpoints` (nil: any public https endpoint), resolving host names
    /// with `resolver` (tests give fixed answers).
    public init(allowedEndpoints: [String]?, resolver: HostResolver = .system) {
        self.allowed = allowedEndpoints.map { $0.map(HostGlob.init) }
        self.resolver = resolver
    }

    /// How many host-name lookups are under way.
    var lookupsUnderWay: Int { self.lookups.count }

    /// Checks `endpoint`, resolving its host when it is a name, waiting for a lookup until `deadline` at
    /// most (nil: as long as the resolver takes).
    public func check(_ endpoint: URL, deadline: ContinuousClock.Instant? = nil) async -> Decision {
        await self.check(PushEndpoint(endpoint), deadline: deadline)
    }

    /// Checks an endpoint whose parts were read already, resolving its host when it is a name, waiting for
    /// a lookup until `deadline` at most (nil: as long as the resolver takes).
    public func check(_ endpoint: PushEndpoint, deadline: ContinuousClock.Instant? = nil) async -> Decision {
        guard let scheme = endpoint.scheme, scheme == "https" || scheme == "http" else {
            return .refused(reason: "endpoint is not an https URL")
        }
        guard let hostAndPort = endpoint.hostAndPort, let host = endpoint.host else {
            return .refused(reason: "endpoint has no host")
        }
        let listed = self.allowed?.contains { $0.matches(hostAndPort) } ?? false
        if self.allowed != nil, !listed {
            return .refused(reason: "endpoint host is not in allowed_endpoints")
        }
        if listed { return .allowed(addresses: []) }
        guard scheme == "https" else {
            return .refused(reason: "endpoint is not https")
        }
        let addresses: [IPAddress]
        if let literal = IPAddress(literal: host) {
            addresses = [literal]
        } else {
            let name = host.hasSuffix(".") ? String(host.dropLast()) : host
            if name.lowercased() == "localhost" || name.lowercased().hasSuffix(".localhost") {
                return .refused(reason: "endpoint host is a loopback name")
            }
            if let remembered = self.resolutions.addresses(of: name) {
                addresses = remembered
            } else {
                let resolutions = self.resolutions
                let answer = await self.lookups.answer(
                    for: name, from: self.resolver, by: deadline ?? .now + HostResolver.lookupTimeout + .seconds(1)
                ) { answer in
                    guard case .addresses(let resolved) = answer, !resolved.isEmpty else { return }
                    resolutions.remember(resolved, of: name, for: Self.resolutionLifetime, limit: Self.resolutionCacheSize)
                }
                switch answer {
                case .addresses(let resolved) where !resolved.isEmpty:
                    addresses = resolved
                case .noSuchHost:
                    return .noSuchHost
                case .addresses, .failed:
                    return .unresolved
                case nil:
                    return .lookupUnfinished
                }
            }
        }
        if let restriction = addresses.lazy.compactMap(\.restriction).first {
            return .refused(reason: "endpoint host is a \(restriction) address")
        }
        return .allowed(addresses: addresses)
    }
}
