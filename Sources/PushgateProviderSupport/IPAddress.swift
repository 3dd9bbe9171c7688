#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address, classified so that endpoints on local and private networks can be refused.
public enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    case v4([UInt8])
    case v6([UInt8])

    /// The TLS server name (SNI, and the name the certificate is checked against) for `host`: the host
    /// itself, or nil for an address literal, whose certificate is checked against the address instead.
    public static func tlsServerName(forHost host: String) -> String? {
        IPAddress(literal: host) == nil ? host : nil
    }

    /// Parses a numeric address (`10.0.0.1`, `::1`, `[fe80::1]`); nil for host names.
    public init?(literal: String) {
        var text = literal
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        if let zone = text.firstIndex(of: "%") { text = String(text[..<zone]) }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self = .v4(withUnsafeBytes(of: &v4) { Array($0) })
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            self = .v6(withUnsafeBytes(of: &v6) { Array($0) })
            return
        }
        return nil
    }

    /// Why this address must not be contacted without an `allowed_endpoints` entry; nil for public addresses.
    ///
    /// Refused are the ranges of IANA's IPv4 and IPv6 special-purpose address registries that are not
    /// globally reachable (loopback, private, shared, link-local, documentation, benchmarking, reserved,
    /// multicast, discard-only, …). IPv6 addresses that carry an IPv4 address (IPv4-mapped, IPv4-compatible,
    /// NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the IPv4 address they carry.
    public var restriction: String? {
        switch self {
        case .v4(let bytes):
            return Self.firstMatch(bytes, in: Self.specialIPv4)
        case .v6(let bytes):
            if let embedded = Self.embeddedIPv4(bytes) {
                return IPAddress.v4(embedded).restriction
            }
            return Self.firstMatch(bytes, in: Self.specialIPv6)
        }
    }

    /// The IPv4 address an IPv6 address carries, for the forms that route to it: IPv4-mapped
    /// (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`, but not `::` or `::1`), NAT64 (`64:ff9b::a.b.c.d`)
    /// and 6to4 (`2002:aabb:ccdd::/48`).
    static func embeddedIPv4(_ b: [UInt8]) -> [UInt8]? {
        let tail = Array(b[12..<16])
        if b[0..<10].allSatisfy({ $0 == 0 }), b[10] == 0xff, b[11] == 0xff { return tail }
        if b[0..<12].allSatisfy({ $0 == 0 }), !(tail[0] == 0 && tail[1] == 0 && tail[2] == 0 && tail[3] <= 1) { return tail }
        if b[0..<12] == [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0] { return tail }
        if b[0] == 0x20, b[1] == 0x02 { return Array(b[2..<6]) }
        return nil
    }

    /// One special-purpose range: the prefix bytes, its length in bits, and why it is refused.
    struct SpecialRange: Sendable {
        let prefix: [UInt8]
        let bits: Int
        let reason: String

        func contains(_ address: [UInt8]) -> Bool {
            var remaining = self.bits
            for (index, byte) in self.prefix.enumerated() where remaining > 0 {
                let mask: UInt8 = remaining >= 8 ? 0xff : ~(0xff >> UInt8(remaining))
                if address[index] & mask != byte & mask { return false }
                remaining -= 8
            }
            return true
        }
    }

    static let specialIPv4: [SpecialRange] = [
        SpecialRange(prefix: [0], bits: 8, reason: "unspecified"),
        SpecialRange(prefix: [10], bits: 8, reason: "private"),
        SpecialRange(prefix: [100, 64], bits: 10, reason: "private"),  // shared address space
        SpecialRange(prefix: [127], bits: 8, reason: "loopback"),
        SpecialRange(prefix: [169, 254], bits: 16, reason: "link-local"),
        SpecialRange(prefix: [172, 16], bits: 12, reason: "private"),
        SpecialRange(prefix: [192, 0, 0], bits: 24, reason: "special-purpose"),  // IETF protocol assignments
        SpecialRange(prefix: [192, 0, 2], bits: 24, reason: "documentation"),
        SpecialRange(prefix: [192, 88, 99], bits: 24, reason: "special-purpose"),  // 6to4 relay anycast
        SpecialRange(prefix: [192, 168], bits: 16, reason: "private"),
        SpecialRange(prefix: [198, 18], bits: 15, reason: "benchmarking"),
        SpecialRange(prefix: [198, 51, 100], bits: 24, reason: "documentation"),
        SpecialRange(prefix: [203, 0, 113], bits: 24, reason: "documentation"),
        SpecialRange(prefix: [224], bits: 4, reason: "multicast"),
        SpecialRange(prefix: [255, 255, 255, 255], bits: 32, reason: "broadcast"),
        SpecialRange(prefix: [240], bits: 4, reason: "reserved"),
    ]

    static let specialIPv6: [SpecialRange] = [
        SpecialRange(prefix: [UInt8](repeating: 0, count: 16), bits: 128, reason: "unspecified"),
        SpecialRange(prefix: [UInt8](repeating: 0, count: 15) + [1], bits: 128, reason: "loopback"),
        SpecialRange(prefix: [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], bits: 48, reason: "private"),  // local-use NAT64
        SpecialRange(prefix: [0x01, 0x00, 0, 0, 0, 0, 0, 0], bits: 64, reason: "discard-only"),
        SpecialRange(prefix: [0x20, 0x01, 0x0d, 0xb8], bits: 32, reason: "documentation"),
        SpecialRange(prefix: [0x20, 0x01, 0x00], bits: 23, reason: "special-purpose"),  // IETF protocol assignments, Teredo
        SpecialRange(prefix: [0x3f, 0xff, 0x00], bits: 20, reason: "documentation"),
        SpecialRange(prefix: [0x5f, 0x00], bits: 16, reason: "special-purpose"),  // SRv6 SIDs
        SpecialRange(prefix: [0xfc], bits: 7, reason: "private"),
        SpecialRange(prefix: [0xfe, 0x80], bits: 10, reason: "link-local"),
        SpecialRange(prefix: [0xfe, 0xc0], bits: 10, reason: "site-local"),
        SpecialRange(prefix: [0xff], bits: 8, reason: "multicast"),
    ]

    private static func firstMatch(_ address: [UInt8], in ranges: [SpecialRange]) -> String? {
        ranges.first { $0.contains(address) }?.reason
    }

    public var description: String {
        switch self {
        case .v4(let b): return b.map(String.init).joined(separator: ".")
        case .v6(let b):
            return stride(from: 0, to: 16, by: 2).map { String(UInt16(b[$0]) << 8 | UInt16(b[$0 + 1]), radix: 16) }.joined(separator: ":")
        }
    }
}
