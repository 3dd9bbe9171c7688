import NIOCore
import PushgateCore

/// The access log's text for a request's client address and duration, written directly: through
/// `SocketAddress.ipAddress` (`inet_ntop` and a C string) and `Double`'s description they were a tenth of
/// the cost of the line, written for every request.
enum AccessLogFields {
    /// The address as `SocketAddress.ipAddress` writes it: dotted decimal for IPv4, that property's text
    /// for the rest.
    static func client(_ address: SocketAddress?) -> String {
        guard let address else { return "-" }
        guard case .v4(let v4) = address else { return address.ipAddress ?? "-" }
        // A `sockaddr_in` holds the address in network order at offset 4 (after the family and the port,
        // on Linux and on the BSDs alike): its first byte is the first number.
        return withUnsafeBytes(of: v4.address) { address in
            String(unsafeUninitializedCapacity: 15) { text in
                var count = 0
                for index in 4..<8 {
                    if index > 4 {
                        text[count] = UInt8(ascii: ".")
                        count += 1
                    }
                    count = DecimalDigits.write(UInt64(address[index]), into: text, at: count)
                }
                return count
            }
        }
    }

    /// `microseconds` as milliseconds, as `Double(microseconds) / 1000` describes itself: the fraction
    /// without trailing zeros, and at least one digit after the point (`1.0`, `0.25`, `12.345`).
    static func milliseconds(microseconds: Int64) -> String {
        let magnitude = microseconds.magnitude
        var fraction = magnitude % 1000
        var digits = 3
        while digits > 1, fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        // At most a sign, 20 digits, the point and 3 digits.
        return String(unsafeUninitializedCapacity: 25) { text in
            var count = 0
            if microseconds < 0 {
                text[count] = UInt8(ascii: "-")
                count += 1
            }
            count = DecimalDigits.write(magnitude / 1000, into: text, at: count)
            text[count] = UInt8(ascii: ".")
            count += 1
            // The fraction's digits, zero-padded on the left to `digits`.
            for place in stride(from: digits - 1, through: 0, by: -1) {
                text[count + place] = UInt8(ascii: "0") + UInt8(fraction % 10)
                fraction /= 10
            }
            return count + digits
        }
    }
}
