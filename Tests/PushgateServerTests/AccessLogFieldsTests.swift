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
        let samples: [Int64] = [0, 1, 9, 10, 99, 100, 120, 123, 999, 1000, 1001, 1010, 1500, 12_345, 100_000, 123_456_789, -1, -999, -1000, -1001, -1500, -123_456]
        for microseconds in samples + (0..<2000).map({ _ in Int64.random(in: 0..<50_000_000) }) {
            #expect(AccessLogFields.milliseconds(microseconds: microseconds) == "\(Double(microseconds) / 1000)", "\(microseconds)")
        }
    }

    @Test func aRequestIDReadsAsHummingbirdsFormattingWritesIt() {
        let samples: [UInt64] = [0, 1, 15, 16, 0xff, 0x1234_5678, .max - 1, .max] + (0..<2000).map { _ in UInt64.random(in: .min ... .max) }
        for value in samples {
            let digits = String(value, radix: 16)
            let padded = String(repeating: "0", count: 16 - digits.count) + digits
            #expect(GatewayRequestID.sixteenDigits(value) == padded)
            #expect(GatewayRequestID(number: value).description == GatewayRequestID.prefix + padded)
            var bytes = Array("id=".utf8)
            GatewayRequestID(number: value).append(to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == "id=" + GatewayRequestID.prefix + padded)
        }
    }

    @Test func eachRequestGetsTheNextID() {
        let first = GatewayRequestID().description, second = GatewayRequestID().description
        #expect(first != second)
        #expect(first.hasPrefix(GatewayRequestID.prefix) && second.hasPrefix(GatewayRequestID.prefix))
        let firstNumber = UInt64(first.dropFirst(GatewayRequestID.prefix.count), radix: 16)
        let secondNumber = UInt64(second.dropFirst(GatewayRequestID.prefix.count), radix: 16)
        #expect(firstNumber.map { $0 &+ 1 } == secondNumber)
    }
}
