import PushgateConfig
public import PushgateHTTP

/// The Nextcloud front end's counts since start, for the operator console: registrations, notification
/// batches, and batches refused over the fair-use limit. Shared by the routes a reload makes anew.
public final class NextcloudFigures: Sendable {
    let registrations = ConsoleCounter()
    let batches = ConsoleCounter()
    let rateLimited = ConsoleCounter()

    /// Creates the counts at 0.
    public init() {}

    /// What the operator console shows.
    public var figures: [FrontEndFigure] {
        [
            FrontEndFigure(key: "registrations", label: "Device registrations", value: .count(self.registrations.value)),
            FrontEndFigure(key: "batches", label: "Notification batches", value: .count(self.batches.value)),
            FrontEndFigure(key: "rate_limited", label: "Batches over the fair-use limit", value: .count(self.rateLimited.value)),
        ]
    }
}

extension NextcloudSettings {
    /// Whether the section names an app to deliver to (else every registration is refused).
    var servesAnApp: Bool { self.fcmApp != nil || self.apnsApp != nil || !self.routes.isEmpty }
}
