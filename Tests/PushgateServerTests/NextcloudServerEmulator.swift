import AsyncHTTPClient
import Crypto
import CryptoExtras
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import PushgateTestSupport
import Synchronization

/// A Nextcloud server, as far as push notifications go, built from nextcloud/notifications' `Push.php` and
/// `PushController.php`: it registers devices over OCS (checking what the real server checks, deriving the
/// device identifier and its signature the same way) and posts encrypted, signed pushes to each device's
/// proxy as `notifications[N]` form fields, deleting the devices the proxy reports unknown.
final class NextcloudServerEmulator: Sendable {
    /// One registered device, as `notifications_pushhash` keeps it.
    struct Device: Sendable {
        let login: String
        let tokenID: Int
        let deviceIdentifier: String
        let devicePublicKey: String
        let pushTokenHash: String
        let proxyServer: String
    }

    struct User: Sendable {
        let login: String
        let appPassword: String
        let key: _RSA.Signing.PrivateKey
        let tokenID: Int
    }

    /// How the server encrypts subjects: OAEP on Nextcloud 35+, PKCS#1 v1.5 before.
    enum Padding {
        case oaep, pkcs1
    }

    let host: String
    private let users: [String: User]
    private let devices = Mutex<[Device]>([])

    /// Every user gets a key of their own, generated with ``OffPool`` away from the pool that runs the servers.
    init(host: String, users: [String]) async throws {
        self.host = host
        let keys = try await OffPool.run { try users.map { _ in try _RSA.Signing.PrivateKey(keySize: .bits2048) } }
        var table: [String: User] = [:]
        for (index, login) in users.enumerated() {
            table[login] = User(login: login, appPassword: "app-password-\(login)", key: keys[index], tokenID: 4242 + index)
        }
        self.users = table
    }

    func user(_ login: String) -> User { self.users[login]! }
    var registered: [Device] { self.devices.withLock { $0 } }

    /// The raw identifier `json_encode([cloudId, tokenId])` (slashes escaped, as PHP does).
    func rawIdentifier(_ user: User) -> String {
        #"["\#(user.login)@\#(self.host)",\#(user.tokenID)]"#.replacingOccurrences(of: "/", with: "\\/")
    }

    /// `POST` and `DELETE /ocs/v2.php/apps/notifications/api/v2/push`.
    func addRoutes(to router: Router<BasicRequestContext>) {
        router.post("/ocs/v2.php/apps/notifications/api/v2/push") { request, context -> Response in
            guard let user = self.authenticate(request) else { return Response(status: .unauthorized) }
            let body = try await request.body.collect(upTo: 1 << 16)
            let fields = Self.form(String(buffer: body))
            let hash = fields["pushTokenHash"] ?? ""
            guard hash.count == 128, hash.allSatisfy({ "0123456789abcdef".contains($0) }) else { return Self.ocs(400, ["message": "INVALID_PUSHTOKEN_HASH"]) }
            let key = fields["devicePublicKey"] ?? ""
            guard Self.isAcceptedDeviceKey(key) else { return Self.ocs(400, ["message": "INVALID_DEVICE_KEY"]) }
            let proxy = fields["proxyServer"] ?? ""
            guard proxy.hasPrefix("https://") || proxy.range(of: #"^http://(localhost|[a-z0-9.-]*\.(internal|local))(:\d{0,5})?/"#, options: .regularExpression) != nil
            else { return Self.ocs(400, ["message": "INVALID_PROXY_SERVER"]) }
            let raw = Data(self.rawIdentifier(user).utf8)
            let signature = try user.key.signature(for: SHA512.hash(data: raw), padding: .insecurePKCS1v1_5).rawRepresentation.base64EncodedString()
            let identifier = Data(SHA512.hash(data: raw)).base64EncodedString()
            self.devices.withLock { devices in
                devices.removeAll { $0.login == user.login && $0.tokenID == user.tokenID }
                devices.append(Device(login: user.login, tokenID: user.tokenID, deviceIdentifier: identifier, devicePublicKey: key, pushTokenHash: hash, proxyServer: proxy))
            }
            return Self.ocs(201, ["publicKey": user.key.publicKey.pemRepresentation, "deviceIdentifier": identifier, "signature": signature])
        }
        router.delete("/ocs/v2.php/apps/notifications/api/v2/push") { request, context -> Response in
            guard let user = self.authenticate(request) else { return Response(status: .unauthorized) }
            let removed = self.devices.withLock { devices in
                let before = devices.count
                devices.removeAll { $0.login == user.login && $0.tokenID == user.tokenID }
                return before != devices.count
            }
            return Self.ocs(removed ? 202 : 200, [:])
        }
    }

    /// Pushes `plaintext` to every device of `login`, as `Push::pushToDevice` and
    /// `sendNotificationsToProxies` do; deletes the devices the proxy lists in `unknown`.
    /// - Returns: the proxy's status and body for each proxy posted to.
    func push(
        _ plaintext: String, to login: String, priority: String, type: String, padding: Padding = .oaep,
        forgeSignature: Bool = false
    ) async throws -> (status: Int, body: String) {
        let user = self.user(login)
        let targets = self.registered.filter { $0.login == login }
        var entries: [String] = []
        for device in targets {
            let deviceKey = try _RSA.Encryption.PublicKey(pemRepresentation: device.devicePublicKey)
            let ciphertext = try deviceKey.encrypt(Data(plaintext.utf8), padding: padding == .oaep ? .PKCS1_OAEP : ._WEAK_AND_INSECURE_PKCS_V1_5)
            let signer = forgeSignature ? try await OffPool.run { try _RSA.Signing.PrivateKey(keySize: .bits2048) } : user.key
            let signature = try signer.signature(for: SHA512.hash(data: ciphertext), padding: .insecurePKCS1v1_5).rawRepresentation.base64EncodedString()
            entries.append(Self.entry([
                ("deviceIdentifier", device.deviceIdentifier), ("pushTokenHash", device.pushTokenHash),
                ("subject", Data(ciphertext).base64EncodedString()), ("signature", signature), ("priority", priority), ("type", type),
            ]))
        }
        guard let proxy = targets.first?.proxyServer else { return (0, "") }
        let answer = try await self.post(form: Self.buildQuery(entries), to: proxy)
        self.forgetUnknown(in: answer.body)
        return answer
    }

    /// Posts a raw form body to a proxy's `/notifications`, as Nextcloud's HTTP client does.
    func post(form: String, to proxy: String) async throws -> (status: Int, body: String) {
        var url = proxy
        while url.hasSuffix("/") { url.removeLast() }
        var request = HTTPClientRequest(url: url + "/notifications")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "User-Agent", value: "Nextcloud-Server-Crawler/33.0.0")
        request.body = .bytes(ByteBuffer(string: form))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), String(buffer: body))
    }

    /// `handleProxyResponse`: a body with both `unknown` and `failed` deletes every listed device.
    private func forgetUnknown(in body: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
            object["failed"] != nil, let unknown = object["unknown"] as? [String]
        else { return }
        self.devices.withLock { devices in devices.removeAll { unknown.contains($0.deviceIdentifier) } }
    }

    private func authenticate(_ request: Request) -> User? {
        guard let header = request.headers[.authorization], header.hasPrefix("Basic "),
            let decoded = Data(base64Encoded: String(header.dropFirst(6))).map({ String(decoding: $0, as: UTF8.self) }),
            let colon = decoded.firstIndex(of: ":"),
            request.headers[.init("OCS-APIRequest")!] == "true",
            let user = self.users[String(decoded[..<colon])], user.appPassword == String(decoded[decoded.index(after: colon)...])
        else { return nil }
        return user
    }

    /// The server's key rule: `-----BEGIN PUBLIC KEY-----\n`, 450 or 451 bytes, the end marker at 425.
    static func isAcceptedDeviceKey(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard key.hasPrefix("-----BEGIN PUBLIC KEY-----\n"), bytes.count == 450 || bytes.count == 451 else { return false }
        let end = Array("\n-----END PUBLIC KEY-----".utf8) + (bytes.count == 451 ? [UInt8(ascii: "\n")] : [])
        return Array(bytes[425...]) == end
    }

    /// One entry as `json_encode` writes it: the keys in this order, `/` escaped.
    static func entry(_ fields: [(String, String)]) -> String {
        "{" + fields.map { "\"\($0.0)\":\"\($0.1.replacingOccurrences(of: "/", with: "\\/"))\"" }.joined(separator: ",") + "}"
    }

    /// `http_build_query(['notifications' => $entries])`.
    static func buildQuery(_ entries: [String]) -> String {
        entries.enumerated().map { "\(Self.urlencode("notifications[\($0.offset)]"))=\(Self.urlencode($0.element))" }.joined(separator: "&")
    }

    /// PHP `urlencode`: letters, digits and `-_.` stay, space is `+`, everything else `%XX`.
    static func urlencode(_ text: String) -> String {
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
        allowed.insert(" ")
        return (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "").replacingOccurrences(of: " ", with: "+")
    }

    static func form(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (part: Substring) in part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            fields[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return fields
    }

    private static func ocs(_ status: Int, _ data: [String: String]) -> Response {
        let object: [String: Any] = ["ocs": ["meta": ["status": status < 300 ? "ok" : "failure", "statuscode": status, "message": "OK"], "data": data]]
        let body = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
        return Response(status: .init(code: status), headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
