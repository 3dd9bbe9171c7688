/// Status message ids (`v1protocol.MessageID`, status-wire.md §3.4): how the server names a query in its
/// answer and deduplicates push requests.
public enum StatusMessageID {
    /// Keccak-256(65-byte uncompressed author key ‖ data); Keccak-256(data) when there is no author.
    /// `data` is the marshalled ApplicationMetadataMessage exactly as sent or received.
    public static func compute(author: Secp256k1.PublicKey?, data: [UInt8]) -> [UInt8] {
        Keccak.keccak256((author?.uncompressed ?? []) + data)
    }
}
