/// A registration's grant (gorush-and-status.md §3.5): the client's recoverable signature of
/// Keccak-256(client key ‖ server key ‖ access token), both keys compressed, the token as UTF-8.
public enum StatusGrant {
    /// The signed material (32 bytes).
    public static func material(clientKey: Secp256k1.PublicKey, serverKey: Secp256k1.PublicKey, accessToken: String) -> [UInt8] {
        Keccak.keccak256(clientKey.compressed + serverKey.compressed + Array(accessToken.utf8))
    }

    /// Whether `grant` is `clientKey`'s signature of the material: the key recovered from it equals
    /// `clientKey` (status-go's `verifyGrantSignature`).
    public static func verify(grant: [UInt8], clientKey: Secp256k1.PublicKey, serverKey: Secp256k1.PublicKey, accessToken: String) -> Bool {
        let material = Self.material(clientKey: clientKey, serverKey: serverKey, accessToken: accessToken)
        return (try? Secp256k1.recover(signature65: grant, hash32: material)) == clientKey
    }
}
