public import Foundation

/// One HTTP request the SDK wants sent, described independently of any HTTP library.
///
/// The body may hold a push token or credentials travel in ``headers``: a transport must not log either.
public struct NextcloudHTTPRequest: Sendable, Hashable {
    /// The method, upper case: `POST` or `DELETE`.
    public var method: String
    /// The full URL, query included.
    public var url: URL
    /// Header fields by name. Names are unique; compare them case-insensitively.
    public var headers: [String: String]
    /// The body, or `nil` for none.
    public var body: Data?

    /// Describes a request.
    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}
