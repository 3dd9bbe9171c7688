public import Foundation

/// Registers a device for Nextcloud push notifications, and unregisters it: first at the account's
/// Nextcloud server (OCS), then at the push proxy (`/devices`).
///
/// ```swift
/// let registrar = NextcloudPushRegistrar(userAgent: "Mozilla/5.0 (iOS) Nextcloud-iOS/30.0.0")
/// let registration = try await registrar.register(
///     pushToken: apnsTokenHex, deviceKey: deviceKey,
///     proxyServer: URL(string: "https://push.example.com/")!, credentials: credentials)
/// // keep `registration` (and `deviceKey`) with the account
/// ```
///
/// The proxy URL is sent to the server, which stores it exactly as given and posts each push to it with
/// trailing slashes removed and `/notifications` appended. The server accepts `https` URLs, and plain
/// `http` only for `localhost`, `*.internal` and `*.local`, and then only with a `/` after the host and
/// port (`http://localhost:8080/` passes, `http://localhost:8080` does not). Recent servers also refuse
/// proxies on local or private addresses unless `allow_local_remote_servers` is set.
public struct NextcloudPushRegistrar: Sendable {
    /// The `User-Agent` used when ``init(transport:userAgent:)`` is given none. The server classifies
    /// unknown agents as app type `unknown`, which receives every notification.
    public static let defaultUserAgent = "PushgateNextcloudSDK/1.0"

    /// Sends the requests.
    public let transport: any NextcloudHTTPTransport
    /// The `User-Agent` of every request, to the server and to the proxy.
    ///
    /// The server derives the device's app type from it: `Mozilla/5.0 (Android) Nextcloud-Talk v…` and
    /// `Mozilla/5.0 (iOS) Nextcloud-Talk v…` register a `talk` device (Talk notifications only);
    /// `Mozilla/5.0 (Android) Nextcloud-android/…` and `Mozilla/5.0 (iOS) Nextcloud-iOS/…` a `nextcloud`
    /// device (everything but Talk when the user also has Talk); anything else `unknown`.
    public let userAgent: String

    /// Creates a registrar.
    /// - Parameters:
    ///   - transport: sends the HTTP requests; by default `URLSession`.
    ///   - userAgent: the `User-Agent` of every request (see ``userAgent``).
    public init(transport: any NextcloudHTTPTransport = URLSessionNextcloudHTTPTransport(), userAgent: String = Self.defaultUserAgent) {
        self.transport = transport
        self.userAgent = userAgent
    }

    // MARK: - Registration

    /// Registers the device for pushes to one account: ``registerAtServer(pushToken:deviceKey:proxyServer:credentials:publicKeyTrailingNewline:)``,
    /// then ``registerAtProxy(pushToken:registration:)``, as the Nextcloud apps do after both 200 and 201.
    ///
    /// Call it again whenever the push token changes; the server keeps the device identifier.
    /// - Parameters:
    ///   - pushToken: the APNs or FCM token, exactly as the proxy should deliver to it.
    ///   - deviceKey: the device's key pair; the server encrypts pushes with its public key.
    ///   - proxyServer: the push proxy's base URL (see the type's discussion for what the server accepts).
    ///   - credentials: the account's server, login and app password.
    ///   - publicKeyTrailingNewline: whether the public key PEM ends with `"\n"` (451 bytes, the default) or
    ///     not (450 bytes).
    /// - Returns: what to keep for verifying pushes and for unregistering.
    /// - Throws: ``NextcloudRegistrationError``.
    public func register(
        pushToken: String, deviceKey: NextcloudDeviceKey, proxyServer: URL, credentials: NextcloudCredentials,
        publicKeyTrailingNewline: Bool = true
    ) async throws(NextcloudRegistrationError) -> NextcloudPushRegistration {
        let registration = try await self.registerAtServer(
            pushToken: pushToken, deviceKey: deviceKey, proxyServer: proxyServer, credentials: credentials,
            publicKeyTrailingNewline: publicKeyTrailingNewline
        )
        try await self.registerAtProxy(pushToken: pushToken, registration: registration)
        return registration
    }

    /// Step 1 of ``register(pushToken:deviceKey:proxyServer:credentials:publicKeyTrailingNewline:)``:
    /// `POST <server>/ocs/v2.php/apps/notifications/api/v2/push?format=json` with the form fields
    /// `pushTokenHash` (see ``pushTokenHash(_:)``), `devicePublicKey` and `proxyServer`, HTTP basic
    /// authentication and `OCS-APIRequest: true`.
    /// - Returns: the server's answer (200 unchanged or 201 created or updated).
    /// - Throws: ``NextcloudRegistrationError/unauthorized`` for 401,
    ///   ``NextcloudRegistrationError/rejectedByServer(status:message:)`` for any other status but 200 and
    ///   201, ``NextcloudRegistrationError/invalidServerResponse(status:reason:)`` if the body lacks the
    ///   user public key, device identifier or signature.
    public func registerAtServer(
        pushToken: String, deviceKey: NextcloudDeviceKey, proxyServer: URL, credentials: NextcloudCredentials,
        publicKeyTrailingNewline: Bool = true
    ) async throws(NextcloudRegistrationError) -> NextcloudPushRegistration {
        let body = FormURLEncoding.encode([
            ("pushTokenHash", pushTokenHash(pushToken)),
            ("devicePublicKey", deviceKey.publicKeyPEM(trailingNewline: publicKeyTrailingNewline)),
            ("proxyServer", proxyServer.absoluteString),
        ])
        var headers = self.ocsHeaders(credentials)
        headers["Content-Type"] = FormURLEncoding.contentType
        let request = NextcloudHTTPRequest(method: "POST", url: try Self.ocsPushURL(credentials.server), headers: headers, body: body)
        let response = try await self.send(request)
        switch response.status {
        case 200, 201:
            break
        case 401:
            throw .unauthorized
        default:
            throw .rejectedByServer(status: response.status, message: OCSResponse.errorMessage(response.body))
        }
        guard let data = OCSResponse.data(response.body) else {
            throw .invalidServerResponse(status: response.status, reason: "no OCS data object")
        }
        guard let userPublicKey = data["publicKey"] as? String, NextcloudPushAccount.isUserPublicKey(userPublicKey) else {
            throw .invalidServerResponse(status: response.status, reason: "publicKey is missing or not an RSA public key")
        }
        guard let deviceIdentifier = data["deviceIdentifier"] as? String, !deviceIdentifier.isEmpty else {
            throw .invalidServerResponse(status: response.status, reason: "deviceIdentifier is missing")
        }
        guard let signature = data["signature"] as? String, !signature.isEmpty else {
            throw .invalidServerResponse(status: response.status, reason: "signature is missing")
        }
        return NextcloudPushRegistration(
            userPublicKey: userPublicKey, deviceIdentifier: deviceIdentifier, deviceIdentifierSignature: signature,
            proxyServer: proxyServer
        )
    }

    /// Step 2 of ``register(pushToken:deviceKey:proxyServer:credentials:publicKeyTrailingNewline:)``:
    /// `POST <proxy>/devices` with the form fields `pushToken`, `deviceIdentifier`,
    /// `deviceIdentifierSignature` and `userPublicKey`.
    /// - Throws: ``NextcloudRegistrationError/rejectedByProxy(status:)`` unless the proxy answers exactly 200.
    public func registerAtProxy(pushToken: String, registration: NextcloudPushRegistration) async throws(NextcloudRegistrationError) {
        let body = FormURLEncoding.encode([
            ("pushToken", pushToken),
            ("deviceIdentifier", registration.deviceIdentifier),
            ("deviceIdentifierSignature", registration.deviceIdentifierSignature),
            ("userPublicKey", registration.userPublicKey),
        ])
        try await self.sendToProxy(method: "POST", proxyServer: registration.proxyServer, body: body)
    }

    // MARK: - Unregistration

    /// Stops pushes to this device for one account: ``unregisterAtServer(credentials:)``, then
    /// ``unregisterAtProxy(registration:)`` (whether or not the server still had a registration).
    /// - Returns: the server's answer.
    /// - Throws: ``NextcloudRegistrationError``; when the server step fails the proxy is not contacted.
    ///   A proxy that no longer knows the device answers 403
    ///   (``NextcloudRegistrationError/rejectedByProxy(status:)``).
    @discardableResult
    public func unregister(
        registration: NextcloudPushRegistration, credentials: NextcloudCredentials
    ) async throws(NextcloudRegistrationError) -> NextcloudServerUnregistration {
        let outcome = try await self.unregisterAtServer(credentials: credentials)
        try await self.unregisterAtProxy(registration: registration)
        return outcome
    }

    /// Step 1 of ``unregister(registration:credentials:)``:
    /// `DELETE <server>/ocs/v2.php/apps/notifications/api/v2/push?format=json` for the app password in
    /// `credentials`.
    /// - Returns: ``NextcloudServerUnregistration/deleted`` for 202, ``NextcloudServerUnregistration/notRegistered`` for 200.
    /// - Throws: ``NextcloudRegistrationError/unauthorized`` for 401,
    ///   ``NextcloudRegistrationError/rejectedByServer(status:message:)`` for any other status.
    public func unregisterAtServer(credentials: NextcloudCredentials) async throws(NextcloudRegistrationError) -> NextcloudServerUnregistration {
        let request = NextcloudHTTPRequest(method: "DELETE", url: try Self.ocsPushURL(credentials.server), headers: self.ocsHeaders(credentials))
        let response = try await self.send(request)
        switch response.status {
        case 202: return .deleted
        case 200: return .notRegistered
        case 401: throw .unauthorized
        default: throw .rejectedByServer(status: response.status, message: OCSResponse.errorMessage(response.body))
        }
    }

    /// Step 2 of ``unregister(registration:credentials:)``: `DELETE <proxy>/devices` with the form fields
    /// `deviceIdentifier`, `deviceIdentifierSignature` and `userPublicKey` in the body.
    /// - Throws: ``NextcloudRegistrationError/rejectedByProxy(status:)`` unless the proxy answers exactly 200.
    public func unregisterAtProxy(registration: NextcloudPushRegistration) async throws(NextcloudRegistrationError) {
        let body = FormURLEncoding.encode([
            ("deviceIdentifier", registration.deviceIdentifier),
            ("deviceIdentifierSignature", registration.deviceIdentifierSignature),
            ("userPublicKey", registration.userPublicKey),
        ])
        try await self.sendToProxy(method: "DELETE", proxyServer: registration.proxyServer, body: body)
    }

    // MARK: - Requests

    private func ocsHeaders(_ credentials: NextcloudCredentials) -> [String: String] {
        let basic = Data("\(credentials.login):\(credentials.appPassword)".utf8).base64EncodedString()
        return [
            "Authorization": "Basic \(basic)",
            "OCS-APIRequest": "true",
            "Accept": "application/json",
            "User-Agent": self.userAgent,
        ]
    }

    private func sendToProxy(method: String, proxyServer: URL, body: Data) async throws(NextcloudRegistrationError) {
        let url = try Self.url(proxyServer, appending: "/devices")
        let headers = ["Content-Type": FormURLEncoding.contentType, "User-Agent": self.userAgent]
        let response = try await self.send(NextcloudHTTPRequest(method: method, url: url, headers: headers, body: body))
        guard response.status == 200 else {
            throw .rejectedByProxy(status: response.status)
        }
    }

    private func send(_ request: NextcloudHTTPRequest) async throws(NextcloudRegistrationError) -> NextcloudHTTPResponse {
        do {
            return try await self.transport.send(request)
        } catch {
            throw .transport(error)
        }
    }

    private static func ocsPushURL(_ server: URL) throws(NextcloudRegistrationError) -> URL {
        try Self.url(server, appending: "/ocs/v2.php/apps/notifications/api/v2/push?format=json")
    }

    /// `base` without trailing slashes, then `suffix`; as the server builds `<proxy>/notifications`.
    private static func url(_ base: URL, appending suffix: String) throws(NextcloudRegistrationError) -> URL {
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        guard let url = URL(string: text + suffix), url.scheme != nil, url.host != nil else {
            throw .invalidURL(base.absoluteString)
        }
        return url
    }
}
