import PushgateCore

/// Turns an APNs answer (status and `reason`) into a ``DeliveryOutcome``, in one exhaustive switch.
enum APNsResponseClassifier {
    /// What to do with an answer.
    enum Verdict: Equatable {
        /// Report this outcome.
        case outcome(DeliveryOutcome)
        /// The provider token expired: renew it and send once more.
        case renewProviderTokenAndRetry
    }

    /// Classifies an answer.
    /// - Parameters:
    ///   - status: the HTTP status.
    ///   - reason: the `reason` of the JSON body, if any.
    ///   - retryAfter: the `Retry-After` delay, if the server sent one.
    static func classify(status: Int, reason: String?, retryAfter: Duration?) -> Verdict {
        let reasonText = reason ?? "HTTP \(status)"
        switch (status, reason) {
        case (200, _):
            return .outcome(.delivered)
        case (410, _), (400, "BadDeviceToken"?), (400, "DeviceTokenNotForTopic"?), (400, "TopicDisallowed"?):
            // Every 410 is the token's (`Unregistered`, `ExpiredToken`: "no longer active for the topic").
            // TopicDisallowed counts as the token's: Sygnal rejects the pushkey for it, and homeservers
            // rely on that to drop pushers that can never be delivered to.
            return .outcome(.invalidToken(reason: reasonText))
        case (403, "ExpiredProviderToken"?):
            return .renewProviderTokenAndRetry
        case (403, _), (429, "TooManyProviderTokenUpdates"?):
            // The app's credentials (key, team, certificate, environment), not the device or notification:
            // every 403 is ("an error with the certificate or with the provider authentication token"),
            // `InvalidProviderToken`, `BadCertificate`, `BadCertificateEnvironment`, `Forbidden`,
            // `MissingProviderToken`, `BadEnvironmentKeyIdInToken` and `UnrelatedKeyIdInToken` among them.
            return .outcome(.credentialsRefused(reason: reasonText))
        case (429, _), (500...599, _), (400, "IdleTimeout"?):
            // IdleTimeout: the connection sat idle too long; the next try goes on another.
            return .outcome(.retryLater(after: retryAfter, reason: reasonText))
        default:
            // BadTopic, PayloadTooLarge and anything new: permanent for this notification.
            return .outcome(.rejected(reason: reasonText))
        }
    }
}
