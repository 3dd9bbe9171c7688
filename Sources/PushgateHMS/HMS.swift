/// Huawei Push Kit (HMS) facts the back end relies on; docs/providers.md lists their public sources.
public enum HMS {
    /// Huawei's push server.
    public static let defaultBaseURL = "https://push-api.cloud.huawei.com"
    /// Huawei's OAuth 2.0 token endpoint (client-credentials grant).
    public static let defaultTokenURL = "https://oauth-login.cloud.huawei.com/oauth2/v3/token"

    /// Result codes of `messages:send` (the `code` of the answer's JSON).
    public enum Code {
        /// Sent.
        public static let success = "80000000"
        /// Some tokens were taken, others not (`msg` lists `illegal_tokens`).
        public static let partialSuccess = "80100000"
        /// A request parameter is wrong.
        public static let parameterError = "80100001"
        /// The message's structure is wrong.
        public static let badMessage = "80100003"
        /// The OAuth access token is not valid.
        public static let authenticationError = "80200001"
        /// The OAuth access token has expired.
        public static let accessTokenExpired = "80200003"
        /// The app may not send (push service not enabled, say).
        public static let notAuthorized = "80300002"
        /// Every token of the request is invalid.
        public static let invalidTokens = "80300007"
        /// The message body is over 4096 bytes.
        public static let messageTooLarge = "80300008"
        /// The number of tokens is wrong (none, or over 1000).
        public static let tokenCount = "80300010"
        /// The push server failed to ask the OAuth service.
        public static let oauthServiceFailure = "80600003"
        /// An internal error of the push server.
        public static let internalError = "81000001"
    }
}
