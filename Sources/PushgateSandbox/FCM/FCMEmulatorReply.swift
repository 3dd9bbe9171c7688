/// An answer of the FCM emulator, independent of the HTTP server that sends it.
public struct FCMEmulatorReply: Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// Extra headers (`Retry-After`); `Content-Type` is always JSON.
    public var retryAfter: String?
    /// The JSON body.
    public var body: String

    init(status: Int, retryAfter: String? = nil, body: String) {
        self.status = status
        self.retryAfter = retryAfter
        self.body = body
    }

    init(error: FCMErrorBody, retryAfter: String? = nil) {
        self.init(status: error.error.code, retryAfter: retryAfter, body: error.json)
    }
}
