import PushgateCore
import Synchronization

/// The id each request's log lines carry (`hb.request.id`): the process's random prefix, then a counter
/// as 16 hex digits, the text Hummingbird's `RequestID` writes.
///
/// Written at the default log level for every request, so its text is made from the counter's bytes in
/// one step (Hummingbird's formats the counter with `String(_:radix:)`, then counts its characters to pad
/// it, which cost more than the rest of the access-log line's fields together).
struct GatewayRequestID: CustomStringConvertible, Sendable {
    private let number: UInt64

    init() {
        self.number = Self.counter.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// For tests: the id with this counter value.
    init(number: UInt64) {
        self.number = number
    }

    var description: String {
        Self.prefix + Self.sixteenDigits(self.number)
    }

    /// Appends ``description``'s UTF-8 bytes to `bytes`, without making the string (a log line's id).
    func append(to bytes: inout [UInt8]) {
        bytes.append(contentsOf: Self.prefixBytes)
        withUnsafeBytes(of: self.number.bigEndian) { Hex.appendLowercase($0, to: &bytes) }
    }

    /// `value` as 16 lowercase hex digits, leading zeros kept.
    static func sixteenDigits(_ value: UInt64) -> String {
        withUnsafeBytes(of: value.bigEndian) { Hex.lowercase($0) }
    }

    /// A random 64-bit number in hex without leading zeros, fixed for the process.
    static let prefix = String(UInt64.random(in: .min ... .max), radix: 16)
    private static let prefixBytes = Array(Self.prefix.utf8)
    private static let counter = Atomic<UInt64>(UInt64.random(in: .min ... .max))
}
