import AsyncHTTPClient
public import Foundation
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
/// unless `allowed_hosts` names the host, no redirects, a short deadline and a small size cap.
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

    /// Creates the lookup.
    public init(settings: NextcloudSettings.IdentityProof, resolver: HostResolver = .system) {
        self.settings = settings
        self.resolver = resolver
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
            url.host != nil, url.user == nil, url.query == "format=json"
        else { throw .malformedCloudID }
        return url
    }

    /// Whether the lookup may contact `url`'s host.
    func check(_ url: URL) async throws(Failure) {
        guard let host = url.host?.lowercased() else { throw .malformedCloudID }
        let hostAndPort = url.port.map { "\(host):\($0)" } ?? host
        func listed(_ globs: [String]) -> Bool {
            globs.map(HostGlob.init).contains { $0.matches(host) || $0.matches(hostAndPort) }
        }
        if url.scheme == "http", !listed(self.settings.httpHosts) { throw .refused("http is not allowed for this host") }
        guard url.scheme == "https" || url.scheme == "http" else { throw .refused("unsupported scheme") }
        if listed(self.settings.allowedHosts) { return }
        let addresses: [IPAddress]
        if let literal = IPAddress(literal: host) {
            addresses = [literal]
        } else if let resolved = await self.resolver.resolve(host) {
            addresses = resolved
        } else {
            throw .unavailable("the host does not resolve")
        }
        if let restriction = addresses.lazy.compactMap(\.restriction).first {
            throw .refused("the host is on a \(restriction) address")
        }
    }

    /// The user's current public key (PEM) as their server publishes it.
    public func publicKey(cloudID: String) async throws(Failure) -> String {
        let url = try self.keyURL(cloudID: cloudID)
        try await self.check(url)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        let result: Result<String, Failure>
        do {
            var request = HTTPClientRequest(url: url.absoluteString)
            request.headers.add(name: "Accept", value: "application/json")
            request.headers.add(name: "OCS-APIRequest", value: "true")
            request.headers.add(name: "User-Agent", value: "Pushgate")
            let response = try await client.execute(request, timeout: .milliseconds(self.settings.timeout.wholeMilliseconds))
            let body = try await response.body.collect(upTo: Self.maximumResponseSize)
            if response.status == .ok, let key = Self.key(fromOCS: Data(body.readableBytesView)) {
                result = .success(key)
            } else {
                result = .failure(.unavailable("the server answered \(response.status.code) without a key"))
            }
        } catch let failure as Failure {
            result = .failure(failure)
        } catch {
            result = .failure(.unavailable("\(error)"))
        }
        try? await client.shutdown()
        return try result.get()
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
