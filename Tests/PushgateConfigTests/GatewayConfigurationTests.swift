import Foundation
import PushgateConfig
import Testing

@Suite("Configuration")
struct GatewayConfigurationTests {
    /// A sygnal.yaml as Sygnal's documentation shows one, with each app type.
    static let sygnalYAML = """
        log:
          setup:
            version: 1
            formatters:
              normal: {format: "%(asctime)s [%(process)d] %(levelname)-5s %(name)s %(message)s"}
            handlers:
              stderr: {class: logging.StreamHandler, formatter: normal, stream: ext://sys.stderr}
            loggers:
              sygnal.access: {propagate: false, handlers: [stderr], level: INFO}
              sygnal: {propagate: false, handlers: [stderr], level: DEBUG}
            root: {handlers: [stderr], level: INFO}
            disable_existing_loggers: false
          access:
            x_forwarded_for: true
        http:
          bind_addresses: ['127.0.0.1', '::1']
          port: 5005
        metrics:
          prometheus: {enabled: true, address: '127.0.0.1', port: 8001}
          opentracing: {enabled: false}
          sentry: {enabled: false}
        proxy: 'http://user:secret@proxy.example:3128'
        apps:
          im.example.ios:
            type: apns
            keyfile: /etc/pushgate/AuthKey_ABC123.p8
            key_id: ABC123
            team_id: TEAM123
            topic: im.example.ios
            platform: production
            push_type: alert
          im.example.android.*:
            type: gcm
            api_version: v1
            project_id: example-project
            service_account_file: /etc/pushgate/fcm.json
            fcm_options:
              android: {ttl: '3600s'}
          im.example.web:
            type: webpush
            vapid_private_key: /etc/pushgate/vapid.pem
            vapid_contact_email: ops@example.im
            allowed_endpoints: ['*.push.services.mozilla.com', 'fcm.googleapis.com']
        """

    @Test func defaultsMatchSygnalAndTheEmbeddedStore() {
        let configuration = GatewayConfiguration()
        #expect(configuration.http.bindAddresses == ["127.0.0.1"])
        #expect(configuration.http.port == 5000)
        #expect(configuration.http.maxRequestBodySize == 1_048_576)
        #expect(configuration.database == .sqlite(path: "pushgate.sqlite"))
        #expect(configuration.apps.isEmpty)
        #expect(configuration.log.level == "info")
        #expect(configuration.log.format == .text)
        #expect(!configuration.metrics.prometheusListenerEnabled)
    }

    @Test func ioThreadsDefaultToOnePerCore() throws {
        let defaults = GatewayConfiguration().http
        #expect(defaults.ioThreads == nil)
        #expect([1, 2, 3, 4, 8, 64].map { defaults.ioThreadCount(cores: $0) } == [1, 2, 3, 4, 8, 64])
        let set = try GatewayConfiguration(yaml: "http: {io_threads: 3}").http
        #expect(set.ioThreads == 3)
        #expect(set.ioThreadCount(cores: 2) == 3)
        #expect(set.ioThreadCount(cores: 64) == 3)
    }

    @Test func computeThreadsDefaultToHalfTheCoresAtLeastTwoOrTheCoresTheIOThreadsLeave() throws {
        let defaults = GatewayConfiguration().http
        #expect(defaults.computeThreads == nil)
        // With a loop on every core, half the cores and at least two (one on a single core): encryption
        // is not held to one core.
        #expect([1, 2, 3, 4, 8, 64].map { defaults.computeThreadCount(cores: $0) } == [1, 2, 2, 2, 4, 32])
        let io = try GatewayConfiguration(yaml: "http: {io_threads: 3}").http
        #expect([2, 3, 4, 8].map { io.computeThreadCount(cores: $0) } == [1, 1, 1, 5])
        let set = try GatewayConfiguration(yaml: "http: {io_threads: 1, compute_threads: 2}").http
        #expect(set.computeThreads == 2)
        #expect(set.computeThreadCount(cores: 2) == 2)
        #expect(set.computeThreadCount(cores: 64) == 2)
    }

    @Test func aSygnalConfigurationIsReadAsSygnalReadsIt() throws {
        let configuration = try GatewayConfiguration(yaml: Self.sygnalYAML)
        #expect(configuration.http.bindAddresses == ["127.0.0.1", "::1"])
        #expect(configuration.http.port == 5005)
        #expect(configuration.log.level == "debug")
        #expect(configuration.log.accessUsesForwardedFor)
        #expect(configuration.metrics.prometheusListenerEnabled)
        #expect(configuration.metrics.prometheusPort == 8001)
        #expect(configuration.proxy == "http://user:secret@proxy.example:3128")
        #expect(configuration.apps.map(\.id) == ["im.example.ios", "im.example.android.*", "im.example.web"])
        #expect(configuration.apps.map(\.kind) == [.apns, .gcm, .webpush])
        #expect(try configuration.apps[0].options.string("topic") == "im.example.ios")
        #expect(try configuration.apps[2].options.stringList("allowed_endpoints") == ["*.push.services.mozilla.com", "fcm.googleapis.com"])
        #expect(try configuration.apps[1].options.section("fcm_options")?.section("android")?.string("ttl") == "3600s")
        #expect(configuration.warnings.isEmpty, "\(configuration.warnings)")
        #expect(configuration.database == .default)
    }

    /// Globs that some app id matches both of make those ids ambiguous (their pushkeys rejected): warned,
    /// the catch-all `*` aside.
    @Test func overlappingGlobsAreWarned() throws {
        let configuration = try GatewayConfiguration(yaml: """
            apps:
              "im.example.*": {type: gcm, project_id: p, service_account_file: s}
              "im.example.beta.*": {type: gcm, project_id: p, service_account_file: s}
              "org.other.*": {type: gcm, project_id: p, service_account_file: s}
              "*": {type: gcm, project_id: p, service_account_file: s}
              im.example.exact: {type: gcm, project_id: p, service_account_file: s}
            """)
        #expect(configuration.warnings == [
            "apps: im.example.* and im.example.beta.* both match some app ids, which are then ambiguous and their pushkeys rejected; make the globs disjoint or configure those ids exactly",
        ])
    }

    @Test func unknownKeysAreWarningsNotFailures() throws {
        let configuration = try GatewayConfiguration(yaml: """
            http: {port: 5000, keepalive: true}
            frobnicate: {a: 1}
            db: {dbfile: sygnal.db}
            log: {colour: true}
            metrics: {prometheus: {enabled: false, path: /x}, opentracing: {enabled: true}}
            """)
        let warnings = configuration.warnings.joined(separator: "\n")
        #expect(warnings.contains("http.keepalive"))
        #expect(warnings.contains("frobnicate"))
        #expect(warnings.contains("db:"))
        #expect(warnings.contains("log.colour"))
        #expect(warnings.contains("metrics.prometheus.path"))
        #expect(warnings.contains("metrics.opentracing.enabled"))
    }

    @Test(arguments: [
        ("http: {port: abc}", "http.port"),
        ("http: {port: 70000}", "http.port"),
        ("http: {bind_addresses: [1.2.3.4, {a: b}]}", "http.bind_addresses[1]"),
        ("http: {bind_addresses: []}", "http.bind_addresses"),
        ("http: [1, 2]", "http"),
        ("http: {max_request_body_size: 0}", "http.max_request_body_size"),
        ("http: {io_threads: 0}", "http.io_threads"),
        ("http: {io_threads: two}", "http.io_threads"),
        ("http: {compute_threads: 0}", "http.compute_threads"),
        ("log: {level: loud}", "log.level"),
        ("log: {format: xml}", "log.format"),
        ("apps: {com.example: {keyfile: x}}", "apps.com.example.type"),
        ("apps: {com.example: {type: sygnal.apnspushkin.ApnsPushkin}}", "apps.com.example.type"),
        ("apps: {com.example: apns}", "apps.com.example"),
        ("database: {url: 'mysql://x'}", "database.url"),
        ("database: {url: 'postgres://host-only'}", "database.url"),
        ("database: {url: 'postgres://u@h/db?sslmode=sometimes'}", "database.url"),
        ("database: {url: 'sqlite:'}", "database.url"),
        ("proxy: 'socks5://proxy:1080'", "proxy"),
        ("metrics: {prometheus: {enabled: yes-please}}", "metrics.prometheus.enabled"),
        ("nextcloud: {routes: 3}", "nextcloud.routes"),
        ("nextcloud: {routes: [{user_agent: '(', app: a}]}", "nextcloud.routes[0].user_agent"),
        ("nextcloud: {routes: [{app: a}]}", "nextcloud.routes[0]"),
        ("nextcloud: {rate_limit: {notifications: many}}", "nextcloud.rate_limit.notifications"),
        ("nextcloud: {rate_limit: {notifications: 10, window: 0}}", "nextcloud.rate_limit.window"),
        ("nextcloud: {rate_limit: 5}", "nextcloud.rate_limit"),
        ("nextcloud: {identity_proof: {allowed_hosts: {a: b}}}", "nextcloud.identity_proof.allowed_hosts"),
        ("nextcloud: {identity_proof: {timeout: 600}}", "nextcloud.identity_proof.timeout"),
        ("nextcloud: {max_batch_size: 0}", "nextcloud.max_batch_size"),
        ("nextcloud: {delivery_timeout: -1}", "nextcloud.delivery_timeout"),
    ])
    func invalidValuesNameTheirKey(yaml: String, key: String) {
        #expect {
            _ = try GatewayConfiguration(yaml: yaml)
        } throws: { error in
            (error as? ConfigurationError)?.key == key
        }
    }

    @Test func malformedYAMLIsAClearError() {
        #expect(throws: ConfigurationError.self) { try GatewayConfiguration(yaml: "http: {port: [") }
        #expect(throws: ConfigurationError.self) { try GatewayConfiguration(yaml: "- just\n- a list\n") }
        #expect(throws: ConfigurationError.self) { try GatewayConfiguration(yaml: "apps:\n  a: {type: apns}\n  a: {type: gcm}\n") }
    }

    @Test func theNextcloudSectionIsRead() throws {
        let configuration = try GatewayConfiguration(yaml: """
            nextcloud:
              path_prefix: push/
              fcm_app: files.android
              routes: [{user_agent: 'Nextcloud-Talk', app: talk.ios, voip_app: talk.ios.voip}]
            """)
        #expect(configuration.nextcloud.pathPrefix == "/push")
        #expect(configuration.nextcloud.fcmApp == "files.android")
        #expect(configuration.nextcloud.routes.first?.voipApp == "talk.ios.voip")
        #expect(configuration.nextcloud.rateLimit == nil)
        #expect(configuration.nextcloud.maxBatchSize == 1000)
        #expect(configuration.nextcloud.identityProof == .init())
        #expect(configuration.warnings.isEmpty)
        // A misspelt key of a route is named.
        let misspelt = try GatewayConfiguration(yaml: "nextcloud: {routes: [{user_agent: Talk, app: talk.ios, voip_ap: talk.ios.voip}]}")
        #expect(misspelt.warnings == ["unknown key nextcloud.routes[0].voip_ap (ignored)"])
    }

    @Test func nextcloudLimitsAndTheIdentityProofAreRead() throws {
        let configuration = try GatewayConfiguration(yaml: """
            nextcloud:
              alert_text: Neue Benachrichtigung
              delivery_timeout: 4
              max_batch_size: 300
              rate_limit: {notifications: 5000, window: 60, x_forwarded_for: true, burst: 3}
              identity_proof: {timeout: 2, allowed_hosts: ['cloud.internal'], http_hosts: ['*.local']}
            """)
        let nextcloud = configuration.nextcloud
        #expect(nextcloud.alertText == "Neue Benachrichtigung")
        #expect(nextcloud.deliveryTimeout == .seconds(4))
        #expect(nextcloud.maxBatchSize == 300)
        #expect(nextcloud.rateLimit == .init(notifications: 5000, window: .seconds(60), useForwardedFor: true))
        #expect(nextcloud.identityProof.timeout == .seconds(2))
        #expect(nextcloud.identityProof.allowedHosts == ["cloud.internal"])
        #expect(nextcloud.identityProof.httpHosts == ["*.local"])
        #expect(configuration.warnings == ["unknown key nextcloud.rate_limit.burst (ignored)"])
        // A fair-use section that limits nothing, and a VoIP app without the APNs app it pairs with, are
        // more likely mistakes than choices: each is warned about.
        let off = try GatewayConfiguration(yaml: "nextcloud: {rate_limit: {notifications: 0}, apns_voip_app: talk.voip}")
        #expect(off.nextcloud.rateLimit == nil)
        #expect(off.warnings == [
            "nextcloud.rate_limit.notifications is 0: the fair-use limit is off",
            "nextcloud.apns_voip_app is set without apns_app, the app whose devices it serves: it is never used",
        ])
        // A limit of 0 means none.
        #expect(try GatewayConfiguration(yaml: "nextcloud: {rate_limit: {notifications: 0}}").nextcloud.rateLimit == nil)
    }

    @Test func anEmptyFileMeansDefaults() throws {
        #expect(try GatewayConfiguration(yaml: "") == GatewayConfiguration())
        #expect(try GatewayConfiguration(yaml: "# nothing\n") == GatewayConfiguration())
    }

    @Test func quotedNumbersAndASingleBindAddressAreAccepted() throws {
        let configuration = try GatewayConfiguration(yaml: "http: {port: '5001', bind_addresses: '0.0.0.0'}")
        #expect(configuration.http.port == 5001)
        #expect(configuration.http.bindAddresses == ["0.0.0.0"])
    }

    /// A key that takes text reads what was written, where YAML 1.1 types a plain scalar as a number or
    /// a boolean: an APNs key id with a leading zero (an octal integer), a team id with one `E` among
    /// digits (a float: infinity), a text `Yes`. Keys that take numbers read them as YAML does.
    @Test func textKeysReadWhatWasWrittenWhereYAMLSeesANumber() throws {
        let configuration = try GatewayConfiguration(yaml: """
            apps:
              im.example.ios: {type: apns, key_id: 0123456701, team_id: 1234E56789, topic: Yes, max_connections: 010, ping_interval: 30}
            """)
        let options = configuration.apps[0].options
        #expect(try options.string("key_id") == "0123456701")
        #expect(try options.string("team_id") == "1234E56789")
        #expect(try options.string("topic") == "Yes")
        #expect(try options.int("max_connections") == 8)
        #expect(try options.int("ping_interval") == 30)
        #expect(try options.string("ping_interval") == "30")
    }

    @Test func databaseURLs() throws {
        #expect(try DatabaseSettings.parse(url: "sqlite:/var/lib/pushgate/db.sqlite") == .sqlite(path: "/var/lib/pushgate/db.sqlite"))
        #expect(try DatabaseSettings.parse(url: "sqlite://relative.sqlite") == .sqlite(path: "relative.sqlite"))
        guard case .postgres(let settings) = try DatabaseSettings.parse(url: "postgresql://push%40gate:p%3Ass@db.internal:6543/pg?sslmode=require", maximumConnections: 7) else {
            Issue.record("expected postgres settings")
            return
        }
        #expect(settings.host == "db.internal")
        #expect(settings.port == 6543)
        #expect(settings.username == "push@gate")
        #expect(settings.password == "p:ss")
        #expect(settings.database == "pg")
        #expect(settings.sslMode == .require)
        #expect(settings.maximumConnections == 7)
        let display = DatabaseSettings.postgres(settings).displayDescription
        #expect(!display.contains("p:ss"))
    }

    /// A URL parameter Pushgate does not read is named: a misspelt `ssl_mode=require` would otherwise
    /// leave TLS at `prefer` without a word. The password never shows in the warning.
    @Test func databaseURLParametersNotReadAreWarnedOf() throws {
        let configuration = try GatewayConfiguration(
            yaml: "database: {url: 'postgres://push:s3cret@db.internal/pg?ssl_mode=require&sslmode=disable&application_name=gw'}"
        )
        #expect(
            configuration.warnings == [
                "database.url: parameter application_name is not read (ignored; Pushgate reads sslmode only)",
                "database.url: parameter ssl_mode is not read (ignored; Pushgate reads sslmode only)",
            ]
        )
        #expect(!configuration.warnings.joined().contains("s3cret"))
        #expect(try GatewayConfiguration(yaml: "database: {url: 'postgres://push@db/pg?sslmode=require'}").warnings.isEmpty)
    }

    @Test func legacySygnalDatabaseSectionIsIgnoredWithAWarning() throws {
        let configuration = try GatewayConfiguration(yaml: "database: {name: sqlite3, args: {dbfile: sygnal.db}}")
        #expect(configuration.database == .default)
        #expect(configuration.warnings.contains { $0.contains("legacy") })
    }

    @Test func databaseSectionIsRead() throws {
        let configuration = try GatewayConfiguration(yaml: "database: {url: 'postgres://pushgate@127.0.0.1:5432/pushgate', max_connections: 4}")
        guard case .postgres(let settings) = configuration.database else {
            Issue.record("expected postgres")
            return
        }
        #expect(settings.maximumConnections == 4)
        #expect(settings.sslMode == .prefer)
        #expect(settings.password == nil)
    }

    @Test func pythonLogLevelNamesAreUnderstood() throws {
        #expect(try GatewayConfiguration(yaml: "log: {setup: {root: {level: WARNING}}}").log.level == "warning")
        #expect(try GatewayConfiguration(yaml: "log: {setup: {root: {level: ERROR}}, level: debug}").log.level == "debug")
        #expect(try GatewayConfiguration(yaml: "log: {level: CRITICAL, format: json}").log == {
            var log = LogSettings()
            log.level = "critical"
            log.format = .json
            return log
        }())
    }

    @Test func theFileComesFromTheOptionThenPushgateThenSygnalVariables() {
        let both = ["PUSHGATE_CONFIG": "/etc/pushgate.yaml", "SYGNAL_CONF": "/etc/sygnal.yaml"]
        #expect(ConfigurationSource.resolve(option: "/x.yaml", environment: both) == .file(path: "/x.yaml", origin: "--config"))
        #expect(ConfigurationSource.resolve(option: nil, environment: both) == .file(path: "/etc/pushgate.yaml", origin: "PUSHGATE_CONFIG"))
        #expect(ConfigurationSource.resolve(option: nil, environment: ["SYGNAL_CONF": "/etc/sygnal.yaml"]) == .file(path: "/etc/sygnal.yaml", origin: "SYGNAL_CONF"))
        #expect(ConfigurationSource.resolve(option: nil, environment: ["SYGNAL_CONF": ""]) == .defaults)
        #expect(ConfigurationSource.resolve(option: nil, environment: [:]) == .defaults)
    }

    @Test func aMissingFileIsAConfigurationError() {
        #expect(throws: ConfigurationError.self) {
            try ConfigurationSource.file(path: "/nonexistent/pushgate.yaml", origin: "--config").load()
        }
    }
}
