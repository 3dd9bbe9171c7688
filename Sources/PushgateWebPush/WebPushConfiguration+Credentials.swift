import Crypto
public import PushgateCore

extension WebPushConfiguration {
    /// What the VAPID key says about itself: the fingerprint of its public key (the application server
    /// key browsers subscribed with); it carries no date.
    public func credentials() -> [ProviderCredential] {
        [
            ProviderCredential(
                appID: self.appID, kind: .vapidKey, file: nil,
                identity: "public key \(ProviderCredential.fingerprint(of: self.vapidKey.publicKey.derRepresentation)), contact \(self.contact)",
                notAfter: nil
            )
        ]
    }
}
