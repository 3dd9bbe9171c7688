import Foundation
import HTTPTypes
public import Hummingbird
public import Logging
import NIOCore
import Synchronization

/// A UnifiedPush distributor's push server on loopback (what ntfy or NextPush is to a phone): it issues
/// endpoints, accepts messages for them and records what the app on the device would receive.
///
/// Endpoints look like ntfy's, `http://<host>:<port>/up/<id>?up=1`, and a message must arrive at the
/// endpoint exactly: a request whose query string was lost is refused as unknown (404). A message must be
/// 1 to 4096 bytes (413 otherwise), as the UnifiedPush specifications say, and is answered 201. Special ids
/// make each failure: `gone` → 404, `expired` → 410, `throttled` → 429 with `Retry-After: 7`, `failing` →
/// 500, `moved` → 301 to another endpoint (a redirect, which senders must not follow).
///
/// `POST /sandbox/unifiedpush/endpoints` issues an endpoint, as a distributor does when an app registers:
/// `{"endpoint": "…"}`. Every message is recorded in the ``SandboxDeliveryLog`` as provider `unifiedpush`,
/// with the `TTL`, `Urgency`, `Content-Encoding` and `Content-Type` it came with and its body as text.
public final class UnifiedPushEmulator: Sendable {
    /// Where deliveries are recorded.
    public let log: SandboxDeliveryLog
    private let issued = Mutex<Set<String>>([])

    /// Creates an emulator with no endpoints.
    public init(log: SandboxDeliveryLog) {
        self.log = log
    }

    /// Issues an endpoint under `baseURL` (`http://host:port`); `id` picks its id (128 random bits,
    /// base64url, when nil; the special ids make their failures).
    public func issue(baseURL: String, id: String? = nil) -> String {
        let id = id ?? Self.randomID()
        self.issued.withLock { _ = $0.insert(id) }
        return "\(baseURL)/up/\(id)?up=1"
    }

    /// Adds `POST /up/:id` and `POST /sandbox/unifiedpush/endpoints` to `router`.
    /// - Parameter baseURL: the scheme, host and port requests arrive at, for the endpoints it issues.
    public func addRoutes<Context: RequestContext>(to router: Router<Context>, baseURL: @escaping @Sendable () -> String) {
        router.post("/up/:id") { request, context -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            let answer = self.judge(
                id: context.parameters.get("id") ?? "", query: request.uri.query, body: Array(buffer: body),
                header: { name in HTTPField.Name(name).flatMap { request.headers[$0] } }, baseURL: baseURL()
            )
            var headers: HTTPFields = [:]
            if let retryAfter = answer.retryAfter { headers[.retryAfter] = retryAfter }
            if let location = answer.location { headers[.location] = location }
            return Response(status: HTTPResponse.Status(code: answer.status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: answer.reason ?? "")))
        }
        router.post("/sandbox/unifiedpush/endpoints") { _, _ -> Response in
            let endpoint = self.issue(baseURL: baseURL())
            let json = (try? JSONSerialization.data(withJSONObject: ["endpoint": endpoint], options: [.withoutEscapingSlashes])) ?? Data()
            return Response(status: .created, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: json)))
        }
    }

    /// A Hummingbird application serving the emulator.
    /// - Parameters:
    ///   - host: the address to bind.
    ///   - port: the port (0 picks a free one, reported to `onServerRunning`).
    ///   - deliveries: when given, `GET /sandbox/deliveries` answers its JSON.
    public func makeApplication(
        host: String = "127.0.0.1", port: Int, deliveries: (@Sendable () -> [UInt8])? = nil,
        logger: Logger = Logger(label: "pushgate.sandbox.unifiedpush"), onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router()
        let bound = BoundPort(port)
        self.addRoutes(to: router) { "http://\(host):\(bound.value)" }
        if let deliveries {
            router.get("/sandbox/deliveries") { _, _ in
                Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: deliveries())))
            }
        }
        return Application(
            router: router, configuration: .init(address: .hostname(host, port: port)),
            onServerRunning: { channel in
                let actual = channel.localAddress?.port ?? port
                bound.value = actual
                await onServerRunning(actual)
            },
            logger: logger
        )
    }

    /// The emulator's answer to one message: the status, the reason (also the plain-text body), and the
    /// `Retry-After` and `Location` headers.
    struct Answer: Equatable {
        var status: Int
        var reason: String?
        var retryAfter: String? = nil
        var location: String? = nil
    }

    /// Judges one `POST /up/<id>` and records it.
    /// - Parameter header: a request header's value by case-insensitive name.
    func judge(id: String, query: String?, body: [UInt8], header: (String) -> String?, baseURL: String) -> Answer {
        var recorded: [String: String] = [:]
        for name in ["ttl", "urgency", "content-encoding", "content-type"] {
            if let value = header(name) { recorded[name] = value }
        }
        let text = String(decoding: body, as: UTF8.self)
        func answer(_ answer: Answer) -> Answer {
            self.log.record(
                SandboxDelivery(provider: "unifiedpush", token: id, status: answer.status, reason: answer.reason, headers: recorded, body: answer.status == 201 ? text : "")
            )
            return answer
        }
        switch id {
        case "gone": return answer(Answer(status: 404, reason: "no such endpoint"))
        case "expired": return answer(Answer(status: 410, reason: "endpoint expired"))
        case "throttled": return answer(Answer(status: 429, reason: "slow down", retryAfter: "7"))
        case "failing": return answer(Answer(status: 500, reason: "push server failure"))
        case "moved": return answer(Answer(status: 301, reason: "moved", location: "\(baseURL)/up/demo?up=1"))
        default: break
        }
        guard self.issued.withLock({ $0.contains(id) }), query?.split(separator: "&").contains("up=1") == true else {
            return answer(Answer(status: 404, reason: "no such endpoint"))
        }
        guard !body.isEmpty, body.count <= 4096 else { return answer(Answer(status: 413, reason: "a message is 1 to 4096 bytes")) }
        return answer(Answer(status: 201, reason: nil))
    }

    private static func randomID() -> String {
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255) }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// The port a server bound (known once it runs, when it was asked for port 0).
private final class BoundPort: Sendable {
    private let port: Mutex<Int>
    init(_ port: Int) { self.port = Mutex(port) }
    var value: Int {
        get { self.port.withLock { $0 } }
        set { self.port.withLock { $0 = newValue } }
    }
}
