import Testing

@testable import PushgateConfig

/// An error about a file-path setting prints the path, never a secret pasted in its place.
@Suite struct ConfigurationErrorPathTests {
    /// What exists in these tests' pretend file system.
    static let existing: Set<String> = ["/etc/pushgate", "keys", "/run/credentials/pushgate.service/apns.p8"]
    static func exists(_ path: String) -> Bool { Self.existing.contains(path) }

    @Test(arguments: [
        "/etc/pushgate/apns.p8",  // missing file in a directory that exists
        "/etc/pushgte/apns.p8",  // a typo in an absolute path is still a path
        "./apns.p8", "../keys/vapid.pem", "~/keys/vapid.pem",
        "keys/apns.p8",  // relative, its directory exists
        "apns.p8", "service-account.json", "AuthKey_ABC123DEFG.p8",  // plain file names
        "/run/credentials/pushgate.service/apns.p8",
    ])
    func pathsAreShown(_ path: String) {
        #expect(ConfigurationError.looksLikePath(path, exists: Self.exists))
    }

    @Test(arguments: [
        "7f3c9a1b2d4e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70",  // an HMS app secret (hex)
        "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg+/SECRET/SECRETSECRETSECRETxyz",  // a bare key body with `/`
        "BPhO0t5x1Ed3cbnLsdH8I8GhQD2kOpkmMZO0tB5hLqHw0V4bGfUq8a7lq9zM0Tq2kM8wJmQw1cH5u2bX1cQ4m0s",  // a raw VAPID key
        "/3q7ZkF0Yw2mVb+9hQ1xR/Lk8sTn0pEuJcA4dWfGi5yo=",  // a base64 key that begins with `/`
        "/dGhpcy1pcy1hLXNlY3JldC1hcHAtc2VjcmV0",  // base64 of an app secret, `/` first
        "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJURUFNIn0.c2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJlc2ln",  // a JWT
        "-----BEGIN PRIVATE KEY-----\nMIGH\n-----END PRIVATE KEY-----\n",
        "{\"private_key\": \"x\"}",
        "",
    ])
    func secretsAreNotShown(_ value: String) {
        #expect(!ConfigurationError.looksLikePath(value, exists: Self.exists))
        #expect(ConfigurationError.shownPath(value) == ConfigurationError.pathNotShown)
    }
}
