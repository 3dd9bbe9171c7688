import Dispatch
import PushgateCore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Resolves a host name to its addresses with the system resolver (`getaddrinfo`), on one of Dispatch's
/// global worker threads.
///
/// On Darwin that keeps the blocking call off Swift's cooperative pool. On Linux it does not: Swift's
/// global executor runs on the same Dispatch root queue, so a lookup holds one of the threads that run
/// Swift tasks for as long as it blocks, and libdispatch adds a thread only when it next checks the pool
/// (about once a second) and finds its workers blocked. A thread of its own per lookup would leave the
/// pool alone, but nothing would then bound the number of threads while a resolver hangs; lookups are
/// rare instead (Web Push remembers each name's addresses for a minute, Nextcloud resolves one name per
/// identity proof), and bounded: at most ``maximumLookupsInFlight`` block at once (others wait for one of
/// their places, without a thread), and a caller waits at most ``lookupTimeout`` in all.
public struct HostResolver: Sendable {
    /// What a lookup found.
    public enum Answer: Sendable, Equatable {
        /// The name's addresses (never empty).
        case addresses([IPAddress])
        /// The resolver says the name does not exist (or has no address): asking again will not help.
        case noSuchHost
        /// The lookup failed in a way that may pass (no answer in time, a server failure).
        case failed
    }

    /// The lookup, telling a name that does not exist from a lookup that failed.
    public let lookup: @Sendable (String) async -> Answer

    /// Creates a resolver from a lookup that tells why a name did not resolve.
    public init(lookup: @escaping @Sendable (String) async -> Answer) {
        self.lookup = lookup
    }

    /// Creates a resolver from a lookup (tests use fixed answers); nil counts as a failed lookup.
    public init(resolve: @escaping @Sendable (String) async -> [IPAddress]?) {
        self.lookup = { host in
            guard let addresses = await resolve(host), !addresses.isEmpty else { return .failed }
            return .addresses(addresses)
        }
    }

    /// The name's addresses; nil when it does not resolve, whatever the reason.
    public func resolve(_ host: String) async -> [IPAddress]? {
        if case .addresses(let addresses) = await self.lookup(host) { return addresses }
        return nil
    }

    /// How many system lookups may block a thread at once.
    public static let maximumLookupsInFlight = 16
    /// How long a caller waits for a system lookup.
    public static let lookupTimeout = Duration.seconds(10)

    /// The system resolver, bounded.
    public static let system = HostResolver.bounded(Self.blockingLookup, limit: Self.maximumLookupsInFlight, timeout: Self.lookupTimeout)

    /// A resolver that runs `blockingLookup` on Dispatch's worker threads, at most `limit` at once; more
    /// callers wait for a place (up to 64 times `limit` of them; one more fails at once). A caller waits
    /// at most `timeout` in all (then it fails, and a lookup under way keeps its place until the call
    /// returns).
    public static func bounded(_ blockingLookup: @escaping @Sendable (String) -> Answer, limit: Int, timeout: Duration) -> HostResolver {
        let places = ConcurrencyGate(permits: limit, limit: limit * 64)
        return HostResolver(lookup: { host in
            let deadline = ContinuousClock.now + timeout
            guard await places.enter(until: deadline) == .admitted else { return .failed }
            return await withCheckedContinuation { continuation in
                let once = ResumeOnce(continuation)
                DispatchQueue.global().async {
                    let answer = blockingLookup(host)
                    places.leave()
                    once.resume(with: .success(answer))
                }
                let remaining = Int(clamping: max(.zero, deadline - .now).nanosecondsClamped)
                DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(remaining)) { once.resume(with: .success(.failed)) }
            }
        })
    }


    private static func blockingLookup(_ host: String) -> Answer {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>? = nil
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            // EAI_NONAME: the name does not exist; EAI_NODATA (glibc): it exists without an address. Any
            // other failure (EAI_AGAIN, EAI_FAIL, a system error) may pass.
            return Self.isPermanent(status) ? .noSuchHost : .failed
        }
        defer { freeaddrinfo(first) }
        var addresses: [IPAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let socketAddress = entry.pointee.ai_addr {
                switch entry.pointee.ai_family {
                case AF_INET:
                    let address = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                    addresses.append(.v4(withUnsafeBytes(of: address) { Array($0) }))
                case AF_INET6:
                    let address = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                    addresses.append(.v6(withUnsafeBytes(of: address) { Array($0) }))
                default:
                    break
                }
            }
            cursor = entry.pointee.ai_next
        }
        return addresses.isEmpty ? .noSuchHost : .addresses(addresses)
    }

    private static func isPermanent(_ status: Int32) -> Bool {
        #if canImport(Glibc)
        // EAI_NODATA is a GNU extension (-5), not exported by the Glibc module.
        return status == EAI_NONAME || status == -5
        #else
        return status == EAI_NONAME
        #endif
    }
}
