/// The `Urgency` of a Web Push message (RFC 8030 §5.3): how soon the push service should wake the
/// device to deliver it, judged against its battery and network.
///
/// A front end states the urgency it means in ``PushNotification/webPushUrgency``, and the Web Push back
/// end sends exactly that. For a notification that states none but states a priority,
/// ``init(kind:priority:)`` says what that priority means; with neither, no `Urgency` is sent.
public enum WebPushUrgency: String, Sendable, Hashable, Codable, CaseIterable {
    /// `very-low`: delivered only on power and Wi-Fi (RFC 8030's example: advertisements).
    case veryLow = "very-low"
    /// `low`: delivered on power or Wi-Fi (topic updates).
    case low
    /// `normal`: delivered on neither power nor Wi-Fi (chat or calendar messages).
    case normal
    /// `high`: delivered even on low battery (incoming phone calls, time-sensitive alerts).
    case high

    /// The urgency a stated priority means when no urgency is stated: `high` for high priority; for normal
    /// priority, `low` for a background notification and `normal` otherwise.
    public init(kind: PushKind, priority: PushPriority) {
        switch (priority, kind) {
        case (.high, _): self = .high
        case (.normal, .background): self = .low
        case (.normal, .alert), (.normal, .voip): self = .normal
        }
    }
}
