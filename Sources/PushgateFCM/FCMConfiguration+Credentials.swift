import _CryptoExtras
public import PushgateCore
import PushgateProviderSupport

extension FCMConfiguration {
    /// What the app's credentials say about themselves: the service account's project, e-mail address,
    /// key id and public-key fingerprint (its key carries no date), and the `ca_file`'s certificates.
    public func credentials() -> [ProviderCredential] {
        let account = self.serviceAccount
        let key = (try? account.signingKey()).map { ProviderCredential.fingerprint(of: $0.publicKey.derRepresentation) } ?? "unreadable"
        var credentials = [
            ProviderCredential(
                appID: self.appID, kind: .fcmServiceAccount, file: self.serviceAccountFile,
                identity: "project \(account.projectID ?? self.projectID), account \(account.clientEmail), key id \(account.privateKeyID), key \(key)",
                notAfter: nil
            )
        ]
        if let caFile = self.caFile, let trustRoots = TrustRootsCredential.read(appID: self.appID, path: caFile) {
            credentials.append(trustRoots)
        }
        return credentials
    }
}
