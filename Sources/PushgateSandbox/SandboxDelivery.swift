public import Foundation
import Synchronization

/// One notification an emulator accepted (or refused), as `GET /sandbox/deliveries` lists it.
public struct SandboxDelivery: Sendable, Codable, Equatable {
    /// `apns`, `fcm`, `webpush`, `hms` or `unifiedpush`.
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
///
/// It is a ring: recording is constant time however full the log is. What takes work to show (the FCM
/// emulator's sorted message JSON, the Web Push emulator's decryption as the browser would do it) may be
/// recorded as a closure, run only when ``all`` is read.
public final class SandboxDeliveryLog: Sendable {
    private struct Entry: Sendable {
        var delivery: SandboxDelivery
        /// Completes `delivery` when the log is read; nil when it is complete already.
        var completion: (@Sendable (inout SandboxDelivery) -> Void)?

        var materialized: SandboxDelivery {
            guard let completion else { return self.delivery }
            var delivery = self.delivery
            completion(&delivery)
            return delivery
        }
    }

    private struct Ring {
        var entries: [Entry] = []
        /// Where the oldest entry is once the ring is full.
        var start = 0
    }

    private let ring = Mutex(Ring())
    /// How many deliveries are kept; older ones are dropped first.
    public let capacity: Int

    /// Creates an empty log.
    public init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    /// Records a delivery.
    public func record(_ delivery: SandboxDelivery) {
        self.append(Entry(delivery: delivery, completion: nil))
    }

    /// Records a delivery whose body `body` makes when the log is read (`delivery.body` is replaced).
    func record(_ delivery: SandboxDelivery, body: @escaping @Sendable () -> String) {
        self.append(Entry(delivery: delivery, completion: { $0.body = body() }))
    }

    /// Records a delivery that `completion` completes when the log is read.
    func record(_ delivery: SandboxDelivery, completion: @escaping @Sendable (inout SandboxDelivery) -> Void) {
        self.append(Entry(delivery: delivery, completion: completion))
    }

    private func append(_ entry: Entry) {
        guard self.capacity > 0 else { return }
        self.ring.withLock { ring in
            if ring.entries.count < self.capacity {
                ring.entries.append(entry)
            } else {
                ring.entries[ring.start] = entry
                ring.start = (ring.start + 1) % self.capacity
            }
        }
    }

    /// Every kept delivery, oldest first.
    public var all: [SandboxDelivery] {
        let entries = self.ring.withLock { ring in Array(ring.entries[ring.start...] + ring.entries[..<ring.start]) }
        return entries.map(\.materialized)
    }

    /// Forgets every delivery.
    public func clear() { self.ring.withLock { $0 = Ring() } }
}
