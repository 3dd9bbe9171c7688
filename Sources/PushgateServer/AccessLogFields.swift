import NIOCore

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
        return withUnsafeBytes(of: v4.address) { bytes in
            var text = ""
            text.reserveCapacity(15)
            for index in 4..<8 {
                if index > 4 { text.append(".") }
                text.append(String(bytes[index]))
            }
            return text
        }
    }

    /// `microseconds` as milliseconds, as `Double(microseconds) / 1000` describes itself: the fraction
    /// without trailing zeros, and at least one digit after the point (`1.0`, `0.25`, `12.345`).
    static func milliseconds(microseconds: Int64) -> String {
        let whole = microseconds / 1000
        var fraction = abs(microseconds % 1000)
        var digits = 3
        while digits > 1, fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        let fractionText = String(fraction)
        let padding = String(repeating: "0", count: digits - fractionText.count)
        let sign = microseconds < 0 && whole == 0 ? "-" : ""
        return sign + String(whole) + "." + padding + fractionText
    }
}
