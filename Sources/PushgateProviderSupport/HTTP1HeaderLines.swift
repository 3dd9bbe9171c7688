public import NIOHTTP1
import PushgateCore

/// Request headers checked once and kept as the bytes an ``HTTP1ConnectionPool`` request carries:
/// `Name: value` and CR LF for each, in order.
///
/// A name must be a token and a value must hold no CR, LF or NUL (a value from elsewhere, an access token
/// say, could otherwise add lines to the request); both are checked when a header is added, so a back end
/// that sends the same headers with every message (FCM's, until its access token changes) keeps the lines
/// and nothing is checked or copied header by header again. `Host` and `Content-Length` are the pool's to
/// write: headers of those names are left out. A header that cannot be sent is refused
/// (``HTTP1ExchangeError/refused(_:)``, naming the header, never its value).
public struct HTTP1HeaderLines: Sendable {
    /// The lines' bytes.
    public private(set) var bytes: [UInt8] = []

    /// No headers.
    public init() {}

    /// The lines of `headers`, in order (less `Host` and `Content-Length`).
    public init(_ headers: HTTPHeaders) throws(HTTP1ExchangeError) {
        for (name, value) in headers { try self.append(name: name, value: value) }
    }

    /// The lines of `fields`, in order (less `Host` and `Content-Length`).
    public init(_ fields: [(name: String, value: String)]) throws(HTTP1ExchangeError) {
        for field in fields { try self.append(name: field.name, value: field.value) }
    }

    /// The lines of headers written in the code: each name a token, no value with a line break or NUL
    /// (anything else is a programming error, and traps).
    public init(constant fields: [(name: String, value: String)]) {
        do {
            try self.init(fields)
        } catch {
            preconditionFailure("\(error)")
        }
    }

    /// Adds one header after the others (nothing for `Host` or `Content-Length`).
    public mutating func append(name: String, value: String) throws(HTTP1ExchangeError) {
        guard !name.isEmpty, name.utf8Count(where: { !$0.isHTTPTokenByte }) == 0 else {
            throw .refused("a header name that is not a token")
        }
        guard value.utf8Count(where: { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") || $0 == 0 }) == 0 else {
            throw .refused("header \(name) holds a line break or NUL")
        }
        if Self.isPoolHeader(name) { return }
        self.bytes.append(contentsOf: name.utf8)
        self.bytes.append(UInt8(ascii: ":"))
        self.bytes.append(UInt8(ascii: " "))
        self.bytes.append(contentsOf: value.utf8)
        self.bytes.append(UInt8(ascii: "\r"))
        self.bytes.append(UInt8(ascii: "\n"))
    }

    /// Makes room for `count` bytes of lines in all.
    public mutating func reserveCapacity(_ count: Int) {
        self.bytes.reserveCapacity(count)
    }

    /// Whether `name` is `Host` or `Content-Length`, in any case.
    private static func isPoolHeader(_ name: String) -> Bool {
        ASCIICaseFolding.equals(name, "host") || ASCIICaseFolding.equals(name, "content-length")
    }
}
