public import Foundation
public import Logging
import NIOCore
import NIOHTTP1
public import PushgateCore
import PushgateProviderSupport
public import ServiceLifecycle

/// Posts JSON to one URL the operator configured: the back end of a front end's feedback to its senders
/// (gorush's `feedback_hook_url`). The notification's payload is the body: a JSON string is sent as its
/// text (so a front end can fix the bytes), anything else as compact JSON.
///
/// Every 2xx answer is `delivered`; anything else (another status, a refused connection, the deadline) is
/// `retryLater`, so queued posts are retried through the outbox until the receiver takes them or they
/// grow too old. It runs as a `Service` so its connections close on shutdown.
public final class WebhookProvider: PushProvider, Service, CustomStringConvertible {
    /// The id it is registered under.
    public let appID: String
    /// Always `.webhook`.
    public var platform: Platform { .webhook }
    /// Where it posts.
    public let url: URL
    private let headers: HTTPHeaders
    private let timeout: Duration
    private let connections: HTTP1ConnectionPool
    private let gate: ConcurrencyGate
    private let logger: Logger

    public var description: String { "WebhookProvider(\(self.appID))" }

    /// Creates the provider.
    /// - Parameters:
    ///   - appID: the id front ends queue its posts under.
    ///   - url: the receiver.
    ///   - headers: extra request headers (`Content-Type: application/json; charset=utf-8` is always sent).
    ///   - timeout: the most one post may take.
    ///   - concurrency: the most posts in flight.
    public init(appID: String, url: URL, headers: [(name: String, value: String)], timeout: Duration, concurrency: Int = 20, logger: Logger) {
        self.appID = appID
        self.url = url
        var fields = HTTPHeaders()
        fields.add(name: "Content-Type", value: "application/json; charset=utf-8")
        fields.add(name: "User-Agent", value: "Pushgate")
        for header in headers { fields.replaceOrAdd(name: header.name, value: header.value) }
        self.headers = fields
        self.timeout = timeout
        self.gate = ConcurrencyGate(permits: concurrency)
        self.logger = logger
        self.connections = HTTP1ConnectionPool(
            proxy: nil,
            connectTimeout: .milliseconds(timeout.wholeMilliseconds), idleTimeout: .seconds(30), maximumIdlePerOrigin: 5
        )
    }

    public func run() async throws {
        try? await gracefulShutdown()
        await self.connections.shutdown()
    }

    /// Posts the payload; `token` is not used.
    public func deliver(_ notification: PushNotification, to token: String, deadline: ContinuousClock.Instant) async -> DeliveryOutcome {
        let body: [UInt8]
        if case .string(let text) = notification.payload {
            body = Array(text.utf8)
        } else {
            guard let encoded = try? notification.payload.encoded() else { return .rejected(reason: "the payload cannot be encoded") }
            body = encoded
        }
        let deadline = min(deadline, .now + self.timeout)
        let outcome = await self.gate.withPermit(until: deadline) { await self.post(body, deadline: deadline) }
        return outcome ?? .retryLater(after: nil, reason: "too many webhook posts in flight")
    }

    private func post(_ body: [UInt8], deadline: ContinuousClock.Instant) async -> DeliveryOutcome {
        do {
            let answer = try await self.connections.request(
                .POST, self.url, headers: self.headers, body: ByteBuffer(bytes: body), deadline: deadline.nioDeadline
            )
            guard (200..<300).contains(answer.status) else {
                self.logger.info("webhook: the receiver refused a post", metadata: ["app": "\(self.appID)", "status": "\(answer.status)"])
                return .retryLater(after: RetryAfter.parse(answer.retryAfter), reason: "HTTP \(answer.status)")
            }
            return .delivered
        } catch let error as HTTP1ExchangeError where error.isRefusal {
            self.logger.error("webhook: the post cannot be written", metadata: ["app": "\(self.appID)", "error": "\(error)"])
            return .rejected(reason: error.description)
        } catch {
            self.logger.info("webhook: the receiver cannot be reached", metadata: ["app": "\(self.appID)", "error": "\(error)"])
            return .retryLater(after: nil, reason: "the receiver cannot be reached")
        }
    }
}
