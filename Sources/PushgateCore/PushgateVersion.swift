/// The version Pushgate reports to callers that ask (gorush's `/version`, `X-GORUSH-VERSION`).
public enum PushgateVersion {
    /// The release this source is, or will be.
    public static let current = "0.5.0-dev"
}
