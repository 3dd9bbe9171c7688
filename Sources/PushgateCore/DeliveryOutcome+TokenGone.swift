extension DeliveryOutcome {
    /// Reasons of ``invalidToken(reason:)`` that say the token belongs to another app rather than that it
    /// is gone: APNs `DeviceTokenNotForTopic` and `TopicDisallowed`, FCM `SENDER_ID_MISMATCH`. A
    /// misconfigured app (another topic, another Firebase project) meets them for every token it sends
    /// to, so they never remove a registration, which only the device itself could make again.
    public static let tokenOfAnotherAppReasons: Set<String> = ["DeviceTokenNotForTopic", "TopicDisallowed", "SENDER_ID_MISMATCH"]

    /// Whether the provider says the token is gone for good (unregistered, expired, malformed): the
    /// outcome on which stored registrations of the token are removed. False for every other outcome, and
    /// for a token of another app (``tokenOfAnotherAppReasons``).
    public var tokenIsGone: Bool {
        guard case .invalidToken(let reason) = self else { return false }
        return !Self.tokenOfAnotherAppReasons.contains(reason)
    }
}
