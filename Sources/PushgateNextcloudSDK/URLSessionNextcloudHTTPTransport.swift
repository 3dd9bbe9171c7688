#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

/// The default ``NextcloudHTTPTransport``, on `URLSession`.
///
/// Its own session stores no cookies and caches nothing: Nextcloud answers OCS requests with session
/// cookies that would otherwise outlive the app-password login they belong to.
public struct URLSessionNextcloudHTTPTransport: NextcloudHTTPTransport {
    /// The session requests go through.
    public let session: URLSession

    /// Uses `session`, or by default an ephemeral session without cookies or cache and a 60-second timeout.
    public init(session: URLSession? = nil) {
        self.session = session ?? Self.makeDefaultSession()
    }

    /// Sends `request` through ``session``.
    /// - Throws: the session's error when no HTTP response arrived.
    public func send(_ request: NextcloudHTTPRequest) async throws -> NextcloudHTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        urlRequest.httpBody = request.body
        let (body, response) = try await self.session.data(for: urlRequest)
        guard let http = response as? HTTPURLResponse else {
            throw URLError(.badServerResponse)
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String {
                headers[name] = value
            }
        }
        return NextcloudHTTPResponse(status: http.statusCode, headers: headers, body: body)
    }

    private static func makeDefaultSession() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpShouldSetCookies = false
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = 60
        return URLSession(configuration: configuration)
    }
}
