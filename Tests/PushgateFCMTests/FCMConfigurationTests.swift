import Foundation
import PushgateConfig
import PushgateCore
@testable import PushgateFCM
import PushgateSandbox
import Testing

/// Reading a `type: gcm` app.
@Suite("FCM configuration")
struct FCMConfigurationTests {
    static func serviceAccountFile(_ directory: TemporaryDirectory) throws -> String {
        let path = directory.path("sa.json")
        try FCMEmulator().writeServiceAccount(baseURL: "https://oauth2.googleapis.com", to: path)
        return path
    }

    static func error(_ lines: [String]) throws -> ConfigurationError? {
        let settings = try appSettings(lines)
        return #expect(throws: ConfigurationError.self) { try FCMConfiguration(settings: settings) }
    }

    @Test func theLegacyAPIIsRefusedNamingTheV1Keys() throws {
        let legacy = try Self.error(["type: gcm", "api_version: legacy", "api_key: AAAA"])
        #expect(legacy?.key == "apps.\(testAppID).api_version")
        let apiKey = try Self.error(["type: gcm", "api_key: AAAA"])
        #expect(apiKey?.key == "apps.\(testAppID).api_key")
        for error in [legacy, apiKey] {
            let message = error?.message ?? ""
            #expect(message.contains("legacy"))
            #expect(message.contains("api_version: v1"))
            #expect(message.contains("project_id"))
            #expect(message.contains("service_account_file"))
        }
        #expect(try Self.error(["type: gcm", "api_version: v2", "project_id: p", "service_account_file: x"])?.key == "apps.\(testAppID).api_version")
    }

    @Test func requiredKeysAreNamed() throws {
        #expect(try Self.error(["type: gcm", "api_version: v1", "service_account_file: /x"])?.key == "apps.\(testAppID).project_id")
        let missing = try Self.error(["type: gcm", "api_version: v1", "project_id: p"])
        #expect(missing?.key == "apps.\(testAppID).service_account_file")
        #expect(missing?.description.hasPrefix("apps.\(testAppID).service_account_file: ") == true)
    }

    @Test func unreadableOrInvalidServiceAccountsNameTheKey() throws {
        let directory = try TemporaryDirectory()
        let unreadable = try Self.error(["type: gcm", "project_id: p", "service_account_file: \(directory.path("absent.json"))"])
        #expect(unreadable?.key == "apps.\(testAppID).service_account_file")
        #expect(unreadable?.message.contains("cannot read") == true)

        let notJSON = try directory.write("bad.json", "{\"type\": \"service_account\"}")
        #expect(try Self.error(["type: gcm", "project_id: p", "service_account_file: \(notJSON)"])?.key == "apps.\(testAppID).service_account_file")

        let badKey = try directory.write("key.json", """
            {"type": "service_account", "private_key_id": "k", "private_key": "-----BEGIN PRIVATE KEY-----\\nAAAA\\n-----END PRIVATE KEY-----\\n",
             "client_email": "a@b.iam.gserviceaccount.com", "token_uri": "https://oauth2.googleapis.com/token"}
            """)
        let keyError = try Self.error(["type: gcm", "project_id: p", "service_account_file: \(badKey)"])
        #expect(keyError?.key == "apps.\(testAppID).service_account_file")
        #expect(keyError?.message.contains("private_key") == true)
    }

    @Test func defaultsAndSygnalKeys() throws {
        let directory = try TemporaryDirectory()
        let path = try Self.serviceAccountFile(directory)
        let configuration = try FCMConfiguration(settings: try appSettings([
            "type: gcm", "api_version: v1", "project_id: example-project", "service_account_file: \(path)",
            "send_badge_counts: false", "fcm_options: {android: {notification: {channel_id: c}}, apns: {headers: {apns-priority: '10'}}}",
            "surprise: 1",
        ]))
        #expect(configuration.appID == testAppID)
        #expect(configuration.projectID == "example-project")
        #expect(configuration.maxConnections == 20)
        #expect(configuration.inflightRequestLimit == 512)
        #expect(configuration.sendBadgeCounts == false)
        #expect(configuration.baseURL == "https://fcm.googleapis.com")
        #expect(configuration.sendURL == "https://fcm.googleapis.com/v1/projects/example-project/messages:send")
        #expect(configuration.caFile == nil)
        #expect(configuration.serviceAccount.tokenURI == "https://oauth2.googleapis.com/token")
        #expect(configuration.fcmOptions["android"] == .object(["notification": .object(["channel_id": .string("c")])]))
        #expect(configuration.fcmOptions["apns"] == .object(["headers": .object(["apns-priority": .string("10")])]))
        #expect(configuration.unknownKeys == ["apps.\(testAppID).surprise"])
        // fcm_options members FCM does not know (misspelt, or a message's target) are named.
        let misspelt = try FCMConfiguration(settings: try appSettings([
            "type: gcm", "api_version: v1", "project_id: example-project", "service_account_file: \(path)",
            "fcm_options: {andriod: {ttl: 60s}, token: t, android: {priorty: high, ttl: 60s}}",
        ]))
        #expect(
            misspelt.unknownKeys == [
                "apps.\(testAppID).fcm_options.andriod", "apps.\(testAppID).fcm_options.token", "apps.\(testAppID).fcm_options.android.priorty",
            ]
        )
    }

    @Test func pushgateExtensionsAreChecked() throws {
        let directory = try TemporaryDirectory()
        let path = try Self.serviceAccountFile(directory)
        let base = ["type: gcm", "project_id: p", "service_account_file: \(path)"]
        let configuration = try FCMConfiguration(settings: try appSettings(base + ["base_url: http://127.0.0.1:8080/", "max_connections: 3"]))
        #expect(configuration.sendURL == "http://127.0.0.1:8080/v1/projects/p/messages:send")
        #expect(configuration.maxConnections == 3)
        #expect(try Self.error(base + ["base_url: ftp://x"])?.key == "apps.\(testAppID).base_url")
        #expect(try Self.error(base + ["ca_file: \(directory.path("none.pem"))"])?.key == "apps.\(testAppID).ca_file")
        #expect(try Self.error(base + ["max_connections: 0"])?.key == "apps.\(testAppID).max_connections")
        // A project id that would change the path or the URL's meaning is refused at start-up.
        for projectID in ["'a/b'", "'a?b'", "'a#b'", "'a b'", "'a%2Fb'"] {
            let lines = ["type: gcm", "project_id: \(projectID)", "service_account_file: \(path)"]
            #expect(try Self.error(lines)?.key == "apps.\(testAppID).project_id", "\(projectID)")
        }
        #expect(try FCMConfiguration(settings: try appSettings(["type: gcm", "project_id: 'example.com:my-project'", "service_account_file: \(path)"])).projectID == "example.com:my-project")
    }
}
