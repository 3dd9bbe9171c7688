import Dispatch
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
/// identity proof).
public struct HostResolver: Sendable {
    /// The lookup; nil when the name does not resolve.
    public let resolve: @Sendable (String) async -> [IPAddress]?

    /// Creates a resolver from a lookup (tests use fixed answers).
    public init(resolve: @escaping @Sendable (String) async -> [IPAddress]?) {
        self.resolve = resolve
    }

    /// The system resolver.
    public static let system = HostResolver { host in
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: Self.blockingLookup(host))
            }
        }
    }

    private static func blockingLookup(_ host: String) -> [IPAddress]? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>? = nil
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return nil }
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
        return addresses.isEmpty ? nil : addresses
    }
}
