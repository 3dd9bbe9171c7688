/// Sends the SDK's HTTP requests.
///
/// ``URLSessionNextcloudHTTPTransport`` is the default. Supply another (an app's own HTTP stack, a test
/// double) to ``NextcloudPushRegistrar/init(transport:userAgent:)``.
public protocol NextcloudHTTPTransport: Sendable {
    /// Sends `request` and returns the response, whatever its status.
    ///
    /// Throw only when no HTTP response arrived (no connection, TLS failure, timeout); a 4xx or 5xx answer
    /// is a response, not an error. Do not follow the convention of logging requests: they carry app
    /// passwords and push tokens.
    func send(_ request: NextcloudHTTPRequest) async throws -> NextcloudHTTPResponse
}
