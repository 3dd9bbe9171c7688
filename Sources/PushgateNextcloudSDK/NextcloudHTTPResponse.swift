public import Foundation

/// What came back for a ``NextcloudHTTPRequest``.
public struct NextcloudHTTPResponse: Sendable, Hashable {
    /// The HTTP status code.
    public var status: Int
    /// Header fields by name, as the transport reported them.
    public var headers: [String: String]
    /// The body; empty if there was none.
    public var body: Data

    /// Describes a response.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of the header field `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return self.headers.first { $0.key.lowercased() == wanted }?.value
    }
}
