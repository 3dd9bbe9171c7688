import Foundation
import NIOCore
import NIOHTTP1
import PushgateCore
public import PushgateConfig
public import PushgateProviderSupport

/// Looks up a user's current public key on their own Nextcloud server, so that a registration with
/// `cloudId` may take over a device identifier held under an older key:
/// `GET https://<server>/ocs/v2.php/identityproof/key/<user>` → OCS `{"data": {"public": "<PEM>"}}`.
///
/// The server name comes from the request, so the lookup is guarded like any caller-chosen outbound
/// request: https only (http for hosts `http_hosts` names), no loopback, private or link-local addresses
/// unless `allowed_hosts` names the host, the connection made to the very addresses that were checked (no
/// second lookup), no redirects, a short deadline and a small size cap.
public struct NextcloudIdentityProof: Sendable {
    /// Why no key could be had.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// `cloudId` is not `user@server`.
        case malformedCloudID
        /// The server may not be contacted.
        case refused(String)
        /// The server did not answer with a key.
        case unavailable(String)

        public var description: String {
            switch self {
            case .malformedCloudID: "cloudId is not user@server"
            case .refused(let reason): "refused: \(reason)"
            case .unavailable(let reason): "no key: \(reason)"
            }
        }
    }

    /// The most bytes an answer may have.
    static let maximumResponseSize = 64 * 1024

    private let settings: NextcloudSettings.IdentityProof
    private let resolver: HostResolver
    /// Connections to users' servers, on the checked addresses; none is kept idle (lookups are rare).
    private let connections: HTTP1ConnectionPool

    /// Creates the lookup.
    public init(settings: NextcloudSettings.IdentityProof, resolver: HostResolver = .system) {
        self.settings = settings
        self.resolver = resolver
        self.connections = HTTP1ConnectionPool(
            proxy: nil,
            connectTimeout: .milliseconds(settings.timeout.wholeMilliseconds), idleTimeout: .seconds(1), maximumIdlePerOrigin: 0,
            bodyLimit: Self.maximumResponseSize
        )
    }

    /// The URL of the key of `cloudID`'s user, or why there is none to ask.
    func keyURL(cloudID: String) throws(Failure) -> URL {
        guard let at = cloudID.lastIndex(of: "@") else { throw .malformedCloudID }
        let user = String(cloudID[..<at])
        var remote = String(cloudID[cloudID.index(after: at)...])
        guard !user.isEmpty, !remote.isEmpty else { throw .malformedCloudID }
        if !remote.hasPrefix("https://"), !remote.hasPrefix("http://") { remote = "https://" + remote }
        while remote.hasSuffix("/") { remote.removeLast() }
        guard let escapedUser = user.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-._~"))),
            let url = URL(string: "\(remote)/ocs/v2.php/identityproof/key/\(escapedUser)?format=json"),
            url.host != nil, url.user == nil, url.query == "format=json", TCPPort.connectable.contains(url.port ?? 443)
        else { throw .malformedCloudID }
        return url
    }

    /// Whether the lookup may contact `url`'s host, and where: the addresses that were checked, which the
    /// connection then goes to (a second lookup could answer differently: DNS rebinding).
    func check(_ url: URL) async throws(Failure) -> [IPAddress] {
        guard let host = url.host?.lowercased() else { throw .malformedCloudID }
        let hostAndPort = url.port.map { "\(host):\($0)" } ?? host
        func listed(_ globs: [String]) -> Bool {
            globs.map(HostGlob.init).contains { $0.matches(host) || $0.matches(hostAndPort) }
        }
        if url.scheme == "http", !listed(self.settings.httpHosts) { throw .refused("http is not allowed for this host") }
        guard url.scheme == "https" || url.scheme == "http" else { throw .refused("unsupported scheme") }
        let addresses: [IPAddress]
        if let literal = IPAddress(literal: host) {
            addresses = [literal]
        } else if let resolved = await self.resolver.resolve(host), !resolved.isEmpty {
            addresses = resolved
        } else {
            throw .unavailable("the host does not resolve")
        }
        if !listed(self.settings.allowedHosts), let restriction = addresses.lazy.compactMap(\.restriction).first {
            throw .refused("the host is on a \(restriction) address")
        }
        return addresses
    }

    /// The user's current public key (PEM) as their server publishes it.
    public func publicKey(cloudID: String) async throws(Failure) -> String {
        let url = try self.keyURL(cloudID: cloudID)
        let addresses = try await self.check(url)
        var headers = HTTPHeaders()
        headers.add(name: "Accept", value: "application/json")
        headers.add(name: "OCS-APIRequest", value: "true")
        headers.add(name: "User-Agent", value: "Pushgate")
        let answer: HTTP1Answer
        do {
            answer = try await self.connections.request(
                .GET, url, at: addresses, headers: headers, deadline: .now() + .milliseconds(self.settings.timeout.wholeMilliseconds)
            )
        } catch {
            throw .unavailable("\(error)")
        }
        // No redirects are followed; an answer over the size cap is cut short and so is not a key.
        guard answer.status == 200, answer.body.count < Self.maximumResponseSize, let key = Self.key(fromOCS: Data(answer.body)) else {
            throw .unavailable("the server answered \(answer.status) without a key")
        }
        return key
    }

    /// The `public` key of an OCS answer (v1 or v2 envelope).
    static func key(fromOCS data: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let ocs = object["ocs"] as? [String: Any],
            let payload = ocs["data"] as? [String: Any],
            let key = payload["public"] as? String, key.contains("-----BEGIN PUBLIC KEY-----")
        else { return nil }
        return key
    }

    /// Whether two PEM keys are the same key text, ignoring surrounding whitespace.
    static func sameKey(_ a: String, _ b: String) -> Bool {
        a.trimmingCharacters(in: .whitespacesAndNewlines) == b.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
