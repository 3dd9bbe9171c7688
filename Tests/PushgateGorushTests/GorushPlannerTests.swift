import PushgateConfig
import PushgateCore
@testable import PushgateGorush
import Testing

@Suite("gorush: routing, counting, refusals, masking and tokens")
struct GorushPlannerTests {
    static let configuration = try! GatewayConfiguration(yaml: """
        apps:
          ios.main: {type: apns, topic: com.example.main, keyfile: k, key_id: K, team_id: T}
          ios.other: {type: apns, topic: com.example.other, keyfile: k, key_id: K, team_id: T}
          android.main: {type: gcm, project_id: p, service_account_file: s}
        gorush:
          ios_app: ios.main
          android_app: android.main
          allow_unauthenticated: true
          auth_tokens: [open-sesame, {token: ios-only, apps: [ios.other]}]
        """)

    static func planner(hideToken: Bool = false) -> GorushPlanner {
        let settings = Self.configuration.gorush!
        return GorushPlanner(router: GorushAppRouter(settings: settings, apps: Self.configuration.apps), hideToken: hideToken, hideMessages: false)
    }

    static func plan(_ body: String, hideToken: Bool = false) throws -> GorushPlan {
        Self.planner(hideToken: hideToken).plan(try GorushRequestReader.notifications(Array(body.utf8)))
    }

    @Test func anIOSNotificationGoesThroughTheAppWhoseTopicItNames() throws {
        let plan = try Self.plan(#"""
            {"notifications":[
              {"platform":1,"tokens":["a"],"topic":"com.example.other"},
              {"platform":1,"tokens":["b"],"topic":"com.example.other.voip","push_type":"voip"},
              {"platform":1,"tokens":["c"],"topic":"com.example.otherwise"},
              {"platform":1,"tokens":["d"]},
              {"platform":1,"tokens":["e"],"app":"ios.other"}]}
            """#)
        #expect(plan.deliveries.map(\.appID) == ["ios.other", "ios.other", "ios.main", "ios.main", "ios.other"])
        #expect(plan.deliveries[1].notification.apnsTopic == "com.example.other.voip")
        #expect(plan.refusals.isEmpty)
    }

    @Test func countsMatchGorushAndUnservedPlatformsAreDroppedUncounted() throws {
        let plan = try Self.plan(#"""
            {"notifications":[
              {"platform":1,"tokens":["a","b"],"topic":"com.example.main"},
              {"platform":2,"tokens":["c"],"topic":"news"},
              {"platform":3,"tokens":["d"]},
              {"platform":0,"tokens":["e"]},
              {"platform":9,"tokens":["f"]}]}
            """#)
        #expect(plan.counts == 5)
        // The Android topic send comes first, then its token.
        #expect(plan.deliveries.map(\.token) == ["a", "b", "news", "c"])
    }

    /// Without `ios_app`, a notification that names a configured APNs app, or whose topic is one's, still
    /// goes to it; one that picks no app is dropped uncounted, as gorush drops a platform it does not serve.
    @Test func withoutADefaultAppANamedOrTopicsAppIsUsed() throws {
        let configuration = try GatewayConfiguration(yaml: """
            apps:
              ios.main: {type: apns, topic: com.example.main, keyfile: k, key_id: K, team_id: T}
            gorush: {allow_unauthenticated: true}
            """)
        let planner = GorushPlanner(router: GorushAppRouter(settings: configuration.gorush!, apps: configuration.apps), hideToken: false, hideMessages: false)
        let plan = planner.plan(try GorushRequestReader.notifications(Array(#"""
            {"notifications":[
              {"platform":1,"tokens":["a"],"app":"ios.main"},
              {"platform":1,"tokens":["b"],"topic":"com.example.main"},
              {"platform":1,"tokens":["c"],"topic":"com.example.unknown"},
              {"platform":3,"tokens":["d"]}]}
            """#.utf8)))
        #expect(plan.deliveries.map(\.token) == ["a", "b"])
        #expect(plan.deliveries.allSatisfy { $0.appID == "ios.main" })
        #expect(plan.refusals.isEmpty)
        #expect(plan.unserved == 2)
    }

    /// `production` and `development` pick the APNs environment, as gorush picks its client (`production`
    /// first): the app of that environment with the chosen app's topic; with none, a refusal rather than a
    /// token sent to the other environment, which APNs would answer as invalid.
    @Test func productionAndDevelopmentPickTheAPNsEnvironment() throws {
        let configuration = try GatewayConfiguration(yaml: """
            apps:
              ios.main: {type: apns, topic: com.example.main, keyfile: k, key_id: K, team_id: T}
              ios.main.dev: {type: apns, topic: com.example.main, platform: sandbox, keyfile: k, key_id: K, team_id: T}
              ios.other: {type: apns, topic: com.example.other, keyfile: k, key_id: K, team_id: T}
              ios.voip: {type: apns, topic: com.example.main.voip, keyfile: k, key_id: K, team_id: T}
              ios.voip.dev: {type: apns, topic: com.example.main.voip, platform: sandbox, keyfile: k, key_id: K, team_id: T}
              ios.other.voip: {type: apns, topic: com.example.other.voip, keyfile: k, key_id: K, team_id: T}
              ios.other.voip.dev: {type: apns, topic: com.example.other.voip, platform: sandbox, keyfile: k, key_id: K, team_id: T}
            gorush: {ios_app: ios.main, allow_unauthenticated: true}
            """)
        let planner = GorushPlanner(router: GorushAppRouter(settings: configuration.gorush!, apps: configuration.apps), hideToken: false, hideMessages: false)
        let plan = planner.plan(try GorushRequestReader.notifications(Array(#"""
            {"notifications":[
              {"platform":1,"tokens":["a"]},
              {"platform":1,"tokens":["b"],"development":true},
              {"platform":1,"tokens":["c"],"production":true},
              {"platform":1,"tokens":["d"],"production":true,"development":true},
              {"platform":1,"tokens":["e"],"app":"ios.main.dev","production":true},
              {"platform":1,"tokens":["f"],"app":"ios.main.dev"},
              {"platform":1,"tokens":["g"],"topic":"com.example.other","development":true},
              {"platform":1,"tokens":["i"],"topic":"com.example.main.voip","push_type":"voip"},
              {"platform":1,"tokens":["j"],"topic":"com.example.main.voip","push_type":"voip","development":true},
              {"platform":1,"tokens":["k"],"app":"ios.other.voip","topic":"com.example.other","push_type":"voip","development":true},
              {"platform":1,"tokens":["l"],"app":"ios.main","topic":"com.example.main.voip","push_type":"voip","development":true},
              {"platform":2,"tokens":["h"],"development":true}]}
            """#.utf8)))
        #expect(plan.deliveries.map { "\($0.token) \($0.appID)" } == [
            "a ios.main", "b ios.main.dev", "c ios.main", "d ios.main", "e ios.main", "f ios.main.dev", "i ios.voip", "j ios.voip.dev",
            "k ios.other.voip.dev", "l ios.main.dev",
        ])
        #expect(plan.refusals.map(\.token) == ["g"])
        #expect(plan.refusals.map(\.error) == ["no sandbox APNs app is configured for topic com.example.other"])
    }

    @Test func moreThan500AndroidTokensAreAllDelivered() throws {
        let tokens = (0..<1200).map { "\"tok\($0)\"" }.joined(separator: ",")
        let plan = try Self.plan(#"{"notifications":[{"platform":2,"tokens":[\#(tokens)],"message":"m"}]}"#)
        #expect(plan.deliveries.count == 1200)
        #expect(plan.counts == 1200)
    }

    @Test func failuresKnownBeforeDeliveryAreListed() throws {
        let plan = try Self.plan(#"""
            {"notifications":[
              {"notif_id":"x1","platform":1,"tokens":[""],"message":"m"},
              {"platform":1,"tokens":["t"],"app":"android.main"},
              {"platform":1,"tokens":["u"],"title":"t","data":{"aps":{}}},
              {"platform":2,"to":"via-to","message":"m"}]}
            """#)
        #expect(plan.refusals.map(\.error) == [
            "the device token cannot be empty", "app android.main is not a configured ios app",
            "data.aps cannot be combined with fields that build the aps dictionary (message, title, alert, badge, sound, …)",
        ])
        #expect(plan.refusals[0].notifID == "x1")
        #expect(plan.refusals[0].json == #"{"notif_id":"x1","type":"failed-push","platform":"ios","token":"","message":"m","error":"the device token cannot be empty"}"#)
        #expect(plan.deliveries.map(\.token) == ["via-to"])
    }

    /// A notification with nobody to send to is counted 0 and listed nowhere: `PushToAndroid` and
    /// `PushToHuawei` stop at `CheckMessage`'s "please provide at least one device token", whose error
    /// `handleNotification` (`router/server.go`) drops in sync mode, and `makeErrorLogs` has no token to
    /// list for the feedback; `PushToIOS` loops over no token. `countNotificationTargets` counts tokens and
    /// the topic. `to` is a token for FCM and HMS (`CheckMessage` appends it) but not for APNs.
    @Test(arguments: [
        (#"{"platform":2,"message":"m"}"#, 0, 0),
        (#"{"platform":2,"tokens":[],"message":"m"}"#, 0, 0),
        (#"{"platform":2,"tokens":null,"to":"","topic":"","condition":"","message":"m"}"#, 0, 0),
        (#"{"platform":2,"message":"m","app":"no.such.app"}"#, 0, 0),
        (#"{"platform":3,"message":"m"}"#, 0, 0),
        // gorush counts an iOS topic too, and sends nothing.
        (#"{"platform":1,"message":"m","topic":"com.example.main"}"#, 1, 0),
        (#"{"platform":1,"message":"m","to":"ios-to"}"#, 0, 0),
        // With a target it is sent (and counted as gorush counts it: `to` is not, a condition is not).
        (#"{"platform":2,"to":"via-to","message":"m"}"#, 0, 1),
        (#"{"platform":2,"condition":"'a' in topics","message":"m"}"#, 0, 1),
        (#"{"platform":2,"topic":"news","message":"m"}"#, 1, 1),
    ])
    func aNotificationWithoutTargetsIsCountedZeroAndNotListed(_ notification: String, _ counts: Int, _ deliveries: Int) throws {
        let plan = try Self.plan(#"{"notifications":[\#(notification)]}"#)
        #expect(plan.counts == counts)
        #expect(plan.refusals.isEmpty)
        #expect(plan.deliveries.count == deliveries)
    }

    @Test(arguments: [
        ("", ""),
        ("short", "*****"),
        ("0123456789abcdefghij", "********************"),
        ("0123456789-middle-abcdefghij", "**********-middle-**********"),
        // Go's ReplaceAll: every occurrence of the first and last ten characters.
        ("aaaaaaaaaaXaaaaaaaaaa", "**********X**********"),
    ])
    func tokensAreMaskedAsGorushMasksThem(_ token: String, _ masked: String) {
        #expect(GorushLogEntry.masked(token) == masked)
    }

    @Test func logEntriesAreWrittenAsGoWritesThem() {
        var notification = GorushNotification()
        notification.message = "<b> & \"q\""
        let entry = GorushLogEntry(failureOf: notification, platform: .android, token: "t", error: "e", hideToken: false, hideMessages: false)
        #expect(entry.json == #"{"type":"failed-push","platform":"android","token":"t","message":"\u003cb\u003e \u0026 \"q\"","error":"e"}"#)
        let hidden = GorushLogEntry(failureOf: notification, platform: .ios, token: "t", error: "e", hideToken: true, hideMessages: true)
        #expect(hidden.message == "(message redacted)")
        #expect(hidden.token == "*")
    }

    @Test func bearerTokensAreCheckedAndLimitedToTheirApps() {
        let authenticator = GorushAuthenticator(settings: Self.configuration.gorush!)
        #expect(authenticator.verdict(authorization: nil) == .allowed(apps: nil))
        #expect(authenticator.verdict(authorization: "Bearer open-sesame") == .allowed(apps: nil))
        #expect(authenticator.verdict(authorization: "bearer ios-only") == .allowed(apps: ["ios.other"]))
        #expect(authenticator.verdict(authorization: "Bearer open-sesam") == .refused("Invalid bearer token."))
        // A reverse proxy's basic authentication, passed on, is no token where none is needed.
        #expect(authenticator.verdict(authorization: "Basic b3Blbg==") == .allowed(apps: nil))
        var closed = Self.configuration.gorush!
        closed.allowUnauthenticated = false
        #expect(GorushAuthenticator(settings: closed).verdict(authorization: nil) == .refused("Missing bearer token."))
        #expect(GorushAuthenticator(settings: closed).verdict(authorization: "Basic b3Blbg==") == .refused("Invalid authorization header."))
    }

    @Test func configurationMistakesAreNamed() throws {
        #expect(throws: ConfigurationError.self) {
            try GorushFrontEnd.check(try GatewayConfiguration(yaml: "apps: {a: {type: gcm, project_id: p, service_account_file: s}}\ngorush: {ios_app: a, allow_unauthenticated: true}"))
        }
        #expect(throws: ConfigurationError.self) { try GatewayConfiguration(yaml: "gorush: {grpc: {enabled: true, port: 70000}}") }
        #expect(throws: ConfigurationError.self) { try GatewayConfiguration(yaml: "gorush: {feedback_hook_url: 'ftp://x'}") }
        let unserved = try GatewayConfiguration(yaml: "gorush: {ios_app: a}")
        #expect(unserved.warnings.contains { $0.contains("neither auth_tokens nor allow_unauthenticated") })
        #expect(unserved.gorush?.isServed == false)
        // Tokens limited to some apps beside unauthenticated callers, who may use every app: said so.
        let open = try GatewayConfiguration(yaml: "gorush: {allow_unauthenticated: true, auth_tokens: [{token: t-0123456789, apps: [a]}]}")
        #expect(open.warnings.contains { $0.hasPrefix("gorush.allow_unauthenticated: callers that send no token may use every app") }, "\(open.warnings)")
        let scoped = try GatewayConfiguration(yaml: "gorush: {auth_tokens: [{token: t-0123456789, apps: [a]}]}")
        #expect(scoped.warnings.isEmpty, "\(scoped.warnings)")
    }
}
