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
    public var restriction: String? {
        switch self {
        case .v4(let b):
            if b == [0, 0, 0, 0] { return "unspecified" }
            if b[0] == 0 { return "unspecified" }
            if b[0] == 127 { return "loopback" }
            if b[0] == 10 || (b[0] == 172 && (b[1] & 0xf0) == 16) || (b[0] == 192 && b[1] == 168) { return "private" }
            if b[0] == 100 && (b[1] & 0xc0) == 64 { return "private" }  // 100.64/10, shared address space
            if b[0] == 169 && b[1] == 254 { return "link-local" }
            if b[0] >= 224 && b[0] <= 239 { return "multicast" }
            if b == [255, 255, 255, 255] { return "broadcast" }
            return nil
        case .v6(let b):
            if b.allSatisfy({ $0 == 0 }) { return "unspecified" }
            if b.prefix(15).allSatisfy({ $0 == 0 }) && b[15] == 1 { return "loopback" }
            if b.prefix(10).allSatisfy({ $0 == 0 }) && b[10] == 0xff && b[11] == 0xff {
                return IPAddress.v4(Array(b[12...])).restriction  // IPv4-mapped
            }
            if (b[0] & 0xfe) == 0xfc { return "private" }
            if b[0] == 0xfe && (b[1] & 0xc0) == 0x80 { return "link-local" }
            if b[0] == 0xff { return "multicast" }
            return nil
        }
    }

    public var description: String {
        switch self {
        case .v4(let b): return b.map(String.init).joined(separator: ".")
        case .v6(let b):
            return stride(from: 0, to: 16, by: 2).map { String(UInt16(b[$0]) << 8 | UInt16(b[$0 + 1]), radix: 16) }.joined(separator: ":")
        }
    }
}
