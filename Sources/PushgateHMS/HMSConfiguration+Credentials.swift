public import PushgateCore
import PushgateProviderSupport

extension HMSConfiguration {
    /// What the app's credentials say about themselves: the Huawei app id and a fingerprint of the app
    /// secret (which carries no date), and the `ca_file`'s certificates.
    public func credentials() -> [ProviderCredential] {
        var credentials = [
            ProviderCredential(
                appID: self.appID, kind: .hmsAppSecret, file: nil,
                identity: "app id \(self.hmsAppID), secret \(ProviderCredential.fingerprint(of: Array(self.appSecret.utf8)))",
                notAfter: nil
            )
        ]
        if let caFile = self.caFile, let trustRoots = TrustRootsCredential.read(appID: self.appID, path: caFile) {
            credentials.append(trustRoots)
        }
        return credentials
    }
}
