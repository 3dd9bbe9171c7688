/// Bytes as a dictionary or set key, hashed in bulk. `[UInt8]` itself hashes one byte at a time: for the
/// outbox's payloads that was 1.7 % of a 100-token gorush request's instructions.
public struct HashedBytes: Hashable, Sendable {
    /// The bytes.
    public let bytes: [UInt8]

    /// Wraps `bytes`.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    public func hash(into hasher: inout Hasher) {
        self.bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
