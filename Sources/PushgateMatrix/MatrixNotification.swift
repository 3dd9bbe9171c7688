public import PushgateCore

/// A device of a Push Gateway API notification: one pusher of the homeserver.
public struct MatrixDevice: Sendable, Equatable {
    /// The pusher's app id.
    public var appID: String
    /// The provider token (for Web Push, the subscription's p256dh key).
    public var pushkey: String
    /// When the pushkey last changed, in seconds.
    public var pushkeyTS: Int?
    /// The pusher's `data` without `url` (`format`, `default_payload`, custom keys).
    public var data: [String: JSONValue]?
    /// Push-rule tweaks (`sound`, `highlight`).
    public var tweaks: [String: JSONValue]?

    /// `data.default_payload`, if any.
    public var defaultPayload: JSONValue? { self.data?["default_payload"] }
}

/// The `notification` object of `POST /_matrix/push/v1/notify`, as Synapse sends it.
public struct MatrixNotification: Sendable, Equatable {
    public var eventID: String?
    public var roomID: String?
    /// The event type; Synapse's badge-only updates send `null`.
    public var type: String?
    public var sender: String?
    public var senderDisplayName: String?
    public var roomName: String?
    public var roomAlias: String?
    public var userIsTarget: Bool?
    /// `high` or `low`; absent means `high`.
    public var prio: String?
    /// The event content, when the homeserver includes it.
    public var content: [String: JSONValue]?
    /// The membership of a member event (Synapse sends it at the top level).
    public var membership: String?
    /// `counts.unread`.
    public var unread: Int?
    /// `counts.missed_calls`.
    public var missedCalls: Int?
    /// The pushers to notify (never empty once validated).
    public var devices: [MatrixDevice]

    /// Whether the homeserver asked for low priority.
    public var isLowPriority: Bool { self.prio == "low" }
}
