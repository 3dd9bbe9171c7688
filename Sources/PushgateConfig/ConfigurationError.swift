/// A configuration that cannot be used, with the key at fault.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The dotted path of the offending key (`http.port`, `apps.im.example.ios.type`), or empty for the file.
    public let key: String
    /// What is wrong.
    public let message: String

    /// Creates an error about `key`.
    public init(key: String, _ message: String) {
        self.key = key
        self.message = message
    }

    public var description: String {
        self.key.isEmpty ? self.message : "\(self.key): \(self.message)"
    }
}
