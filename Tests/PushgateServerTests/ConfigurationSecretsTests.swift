import Foundation
import PushgateTestSupport
import Testing

/// `check-config` and `serve` name the key and the problem, never the value of a secret-bearing key or
/// a raw line of the file.
@Suite("Configuration errors keep secrets")
struct ConfigurationSecretsTests {
    /// A stand-in key body: what must not appear in any output.
    static let keyBody = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgSECRETSECRETSECRET"
    static let inlinePEM = "-----BEGIN PRIVATE KEY-----\\n\(keyBody)\\n-----END PRIVATE KEY-----\\n"

    @Test(arguments: [
        ("im.example.web", "{type: webpush, vapid_private_key: \"\(inlinePEM)\", vapid_contact_email: a@example.org}", "vapid_private_key"),
        ("im.example.ios", "{type: apns, keyfile: \"\(inlinePEM)\", key_id: ABC, team_id: TEAM, topic: im.example.ios}", "keyfile"),
        ("im.example.ios2", "{type: apns, certfile: \"\(inlinePEM)\"}", "certfile"),
        ("im.example.android", "{type: gcm, api_version: v1, project_id: p, service_account_file: \"{\\\"private_key\\\": \\\"\(keyBody)\\\"}\"}", "service_account_file"),
        // Bare secrets, with no PEM or JSON around them.
        ("im.example.huawei", "{type: hms, app_id: '104523', app_secret_file: \(keyBody)}", "app_secret_file"),
        ("im.example.ios3", "{type: apns, keyfile: 'MIGHAgEAMBMG/\(keyBody)', key_id: ABC, team_id: TEAM, topic: im.example.ios}", "keyfile"),
    ])
    func inlineKeyMaterialWhereAPathBelongsIsNotPrinted(app: String, settings: String, key: String) async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", "apps:\n  \(app): \(settings)\n")
        let result = try await GatewayProcess.run(["check-config", "--config", config])
        #expect(result.status == 2)
        let output = result.output + result.errors
        #expect(output.contains("apps.\(app).\(key)"), "\(output)")
        #expect(!output.contains(Self.keyBody), "\(output)")
        #expect(!output.contains("BEGIN PRIVATE KEY"), "\(output)")
    }

    /// The summary names the Waku node and gorush by scheme, host, port and path; user names, passwords
    /// and query strings stay out.
    @Test func statusServiceURLsArePrintedWithoutCredentials() async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", """
            status:
              waku_rest_url: 'http://wakuuser:WakuPW789@127.0.0.1:8645'
              gorush_url: 'https://gorushuser:GorushPW000@gorush.example/api/push?token=QueryTok111'
            """)
        let result = try await GatewayProcess.run(["check-config", "--config", config])
        #expect(result.status == 0, "\(result.output + result.errors)")
        let output = result.output + result.errors
        #expect(output.contains("http://***@127.0.0.1:8645"), "\(output)")
        #expect(output.contains("https://***@gorush.example/api/push?…"), "\(output)")
        for secret in ["wakuuser", "WakuPW789", "gorushuser", "GorushPW000", "QueryTok111"] {
            #expect(!output.contains(secret), "\(output)")
        }
    }

    @Test func yamlErrorsGiveThePositionNotTheLine() async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", """
            database: {url: 'postgres://pushgate:hunter2-secret@db:5432/pushgate'
            proxy: 'http://user:proxy-secret@proxy.example:3128'
              broken: [
            """)
        for command in ["check-config", "serve"] {
            let result = try await GatewayProcess.run([command, "--config", config])
            #expect(result.status == 2)
            let output = result.output + result.errors
            #expect(output.contains("line"), "\(output)")
            #expect(!output.contains("hunter2-secret"), "\(output)")
            #expect(!output.contains("proxy-secret"), "\(output)")
        }
    }
}
