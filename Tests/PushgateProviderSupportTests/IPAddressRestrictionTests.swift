import PushgateProviderSupport
import Testing

/// The address classification that Web Push endpoints and Nextcloud identity proofs share: every
/// special-purpose range of IANA's registries that is not globally reachable is refused, at both ends of
/// the range, and the addresses just outside stay public; IPv6 forms that carry an IPv4 address are judged
/// by it.
@Suite struct IPAddressRestrictionTests {
    /// (first address inside, last address inside, reason, addresses just outside).
    static let ranges: [(String, String, String, [String])] = [
        ("0.0.0.0", "0.255.255.255", "unspecified", ["1.0.0.0"]),
        ("10.0.0.0", "10.255.255.255", "private", ["9.255.255.255", "11.0.0.0"]),
        ("100.64.0.0", "100.127.255.255", "private", ["100.63.255.255", "100.128.0.0"]),
        ("127.0.0.0", "127.255.255.255", "loopback", ["126.255.255.255", "128.0.0.0"]),
        ("169.254.0.0", "169.254.255.255", "link-local", ["169.253.255.255", "169.255.0.0"]),
        ("172.16.0.0", "172.31.255.255", "private", ["172.15.255.255", "172.32.0.0"]),
        ("192.0.0.0", "192.0.0.255", "special-purpose", ["191.255.255.255", "192.0.1.0"]),
        ("192.0.2.0", "192.0.2.255", "documentation", ["192.0.1.255", "192.0.3.0"]),
        ("192.88.99.0", "192.88.99.255", "special-purpose", ["192.88.98.255", "192.88.100.0"]),
        ("192.168.0.0", "192.168.255.255", "private", ["192.167.255.255", "192.169.0.0"]),
        ("198.18.0.0", "198.19.255.255", "benchmarking", ["198.17.255.255", "198.20.0.0"]),
        ("198.51.100.0", "198.51.100.255", "documentation", ["198.51.99.255", "198.51.101.0"]),
        ("203.0.113.0", "203.0.113.255", "documentation", ["203.0.112.255", "203.0.114.0"]),
        ("224.0.0.0", "239.255.255.255", "multicast", ["223.255.255.255"]),
        ("240.0.0.0", "255.255.255.254", "reserved", []),
        ("255.255.255.255", "255.255.255.255", "broadcast", []),
        ("::", "::", "unspecified", []),
        ("::1", "::1", "loopback", []),
        ("64:ff9b:1::", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "private", ["64:ff9b:2::"]),
        ("100::", "100::ffff:ffff:ffff:ffff", "discard-only", ["100:0:0:1::", "ff::ffff"]),
        ("2001::", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "special-purpose", ["2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:200::"]),
        ("2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "documentation", ["2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db9::"]),
        ("3fff::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "documentation", ["3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "3fff:1000::"]),
        ("5f00::", "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "special-purpose", ["5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "5f01::"]),
        ("fc00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "private", ["fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"]),
        ("fe80::", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local", ["fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff"]),
        ("fec0::", "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "site-local", []),
        ("ff00::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "multicast", []),
    ]

    @Test(arguments: Self.ranges.indices)
    func eachSpecialRangeIsRefusedToItsEdges(index: Int) throws {
        let (first, last, reason, outside) = Self.ranges[index]
        #expect(try #require(IPAddress(literal: first)).restriction == reason, "\(first)")
        #expect(try #require(IPAddress(literal: last)).restriction == reason, "\(last)")
        for address in outside {
            #expect(try #require(IPAddress(literal: address)).restriction == nil, "\(address) is outside \(first)…\(last)")
        }
    }

    @Test(arguments: [
        ("::127.0.0.1", "loopback"),  // IPv4-compatible
        ("::ffff:127.0.0.1", "loopback"),  // IPv4-mapped
        ("::ffff:10.1.2.3", "private"),
        ("64:ff9b::7f00:1", "loopback"),  // NAT64
        ("64:ff9b::a9fe:a9fe", "link-local"),
        ("2002:7f00:1::1", "loopback"),  // 6to4
        ("2002:c0a8:101::", "private"),
        ("[::127.0.0.1]", "loopback"),
    ])
    func ipv6AddressesCarryingIPv4AreJudgedByIt(literal: String, reason: String) throws {
        #expect(try #require(IPAddress(literal: literal)).restriction == reason)
    }

    @Test(arguments: ["8.8.8.8", "93.184.216.34", "2606:4700::1111", "64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8", "2a00:1450:4001::1"])
    func publicAddressesAreNotRestricted(literal: String) throws {
        #expect(try #require(IPAddress(literal: literal)).restriction == nil)
    }
}
