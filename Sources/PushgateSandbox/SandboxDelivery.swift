public import Foundation
import Synchronization

/// One notification an emulator accepted (or refused), as `GET /sandbox/deliveries` lists it.
public struct SandboxDelivery: Sendable, Codable, Equatable {
    /// `apns`, `fcm` or `webpush`.
    public var provider: String
    /// The device token or subscription endpoint id the notification was for.
    public var token: String
    /// The HTTP status the emulator answered.
    public var status: Int
    /// The provider's reason, when it refused.
    public var reason: String?
    /// The request headers that matter to the provider (lower-case names).
    public var headers: [String: String]
    /// The notification as the device would see it (for Web Push, the decrypted plaintext).
    public var body: String
    /// When it arrived.
    public var receivedAt: Date

    /// Creates a record.
    public init(provider: String, token: String, status: Int, reason: String?, headers: [String: String], body: String, receivedAt: Date = Date()) {
        self.provider = provider
        self.token = token
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
        self.receivedAt = receivedAt
    }
}

/// The deliveries every emulator records, in arrival order, bounded so a long run does not grow forever.
public final class SandboxDeliveryLog: Sendable {
    private let entries = Mutex<[SandboxDelivery]>([])
    /// How many deliveries are kept; older ones are dropped first.
    public let capacity: Int

    /// Creates an empty log.
    public init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    /// Records a delivery.
    public func record(_ delivery: SandboxDelivery) {
        self.entries.withLock { entries in
            entries.append(delivery)
            if entries.count > self.capacity { entries.removeFirst(entries.count - self.capacity) }
        }
    }

    /// Every kept delivery, oldest first.
    public var all: [SandboxDelivery] { self.entries.withLock { $0 } }

    /// Forgets every delivery.
    public func clear() { self.entries.withLock { $0.removeAll() } }
}
