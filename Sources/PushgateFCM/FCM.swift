/// The Firebase Cloud Messaging HTTP v1 back end: constants shared by its types.
public enum FCM {
    /// The OAuth 2.0 scope an access token needs to send messages.
    public static let messagingScope = "https://www.googleapis.com/auth/firebase.messaging"
    /// Google's production FCM endpoint.
    public static let defaultBaseURL = "https://fcm.googleapis.com"
    /// The OAuth 2.0 JWT-bearer grant type (RFC 7523).
    public static let jwtBearerGrantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
}
