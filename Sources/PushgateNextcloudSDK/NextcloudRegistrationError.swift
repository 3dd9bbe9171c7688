/// Why registering or unregistering a device failed.
///
/// No case carries a push token, key or password.
public enum NextcloudRegistrationError: Error, Sendable, CustomStringConvertible {
    /// No HTTP response arrived; the transport's error is attached.
    case transport(any Error)
    /// A request URL could not be formed from the server or proxy URL given (attached).
    case invalidURL(String)
    /// The Nextcloud server answered 401: the login or app password is wrong or was revoked.
    case unauthorized
    /// The Nextcloud server refused the request with `status`. For 400, `message` is the OCS error:
    /// `INVALID_PUSHTOKEN_HASH`, `INVALID_DEVICE_KEY`, `INVALID_PROXY_SERVER` (an http proxy URL is only
    /// accepted for `localhost`, `*.internal` and `*.local` and needs a `/` after the host and port) or
    /// `INVALID_SESSION_TOKEN` (the login did not use an app password).
    case rejectedByServer(status: Int, message: String?)
    /// The Nextcloud server answered with success but a body that is not the expected OCS JSON.
    case invalidServerResponse(status: Int, reason: String)
    /// The push proxy answered `status` instead of 200 (400 malformed or bad signature, 403 not allowed or
    /// unknown device, 409 conflict).
    case rejectedByProxy(status: Int)

    /// A short explanation.
    public var description: String {
        switch self {
        case .transport(let error): "no response: \(error)"
        case .invalidURL(let url): "cannot form a request URL from \(url)"
        case .unauthorized: "the Nextcloud server refused the login (401)"
        case .rejectedByServer(let status, let message): "the Nextcloud server refused the request (\(status)\(message.map { " \($0)" } ?? ""))"
        case .invalidServerResponse(let status, let reason): "the Nextcloud server's answer (\(status)) is not usable: \(reason)"
        case .rejectedByProxy(let status): "the push proxy refused the request (\(status))"
        }
    }
}
