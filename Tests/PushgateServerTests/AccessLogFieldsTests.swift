import NIOCore
@testable import PushgateServer
import Testing

/// The access log's fields, written directly, read as the general formatting they replace reads.
@Suite("Access log fields")
struct AccessLogFieldsTests {
    @Test(arguments: ["127.0.0.1", "0.0.0.0", "255.255.255.255", "10.20.30.40", "192.168.1.100", "1.2.3.4", "::1", "2001:db8::8a2e:370:7334", "::ffff:10.0.0.1"])
    func aClientAddressReadsAsSocketAddressWritesIt(address: String) throws {
        let socketAddress = try SocketAddress(ipAddress: address, port: 443)
        #expect(AccessLogFields.client(socketAddress) == socketAddress.ipAddress)
    }

    @Test func noAddressIsADash() {
        #expect(AccessLogFields.client(nil) == "-")
    }

    @Test func durationsReadAsTheDoubleDescribesThem() {
        let samples: [Int64] = [0, 1, 9, 10, 99, 100, 120, 123, 999, 1000, 1001, 1010, 1500, 12_345, 100_000, 123_456_789, -1, -1500]
        for microseconds in samples + (0..<2000).map({ _ in Int64.random(in: 0..<50_000_000) }) {
            #expect(AccessLogFields.milliseconds(microseconds: microseconds) == "\(Double(microseconds) / 1000)", "\(microseconds)")
        }
    }
}
