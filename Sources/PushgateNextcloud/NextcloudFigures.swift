public import Logging
import PushgateConfig
public import PushgateHTTP
public import PushgateStore

/// The Nextcloud front end's counts for the operator console (every instance's on the store):
/// registrations, notification batches, and batches refused over the fair-use limit. Shared by the
/// routes a reload makes anew.
public final class NextcloudFigures: Sendable {
    /// The counts, by ``Count``.
    public let counts: ConsoleCounts
    /// The counts' indices.
    enum Count: Int { case registrations, batches, rateLimited }

    /// Counts kept in `store` (in memory only when nil).
    public init(store: (any CounterStore)? = nil, logger: Logger = Logger(label: "pushgate.nextcloud")) {
        self.counts = ConsoleCounts(frontEnd: "nextcloud", keys: ["registrations", "batches", "rate_limited"], store: store, logger: logger)
    }

    /// Counts one event.
    func add(_ count: Count) {
        self.counts.add(at: count.rawValue)
    }

    /// What the operator console shows.
    public func figures() async -> [FrontEndFigure] {
        let values = await self.counts.values()
        return [
            FrontEndFigure(key: "registrations", label: "Device registrations", value: values[Count.registrations.rawValue]),
            FrontEndFigure(key: "batches", label: "Notification batches", value: values[Count.batches.rawValue]),
            FrontEndFigure(key: "rate_limited", label: "Batches over the fair-use limit", value: values[Count.rateLimited.rawValue]),
        ]
    }
}

extension NextcloudSettings {
    /// Whether the section names an app to deliver to (else every registration is refused).
    var servesAnApp: Bool { self.fcmApp != nil || self.apnsApp != nil || !self.routes.isEmpty }
}
