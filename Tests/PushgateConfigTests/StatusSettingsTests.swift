import Foundation
import PushgateConfig
import Testing

@Suite("Configuration: status")
struct StatusSettingsTests {
    @Test func everyKeyIsRead() throws {
        let configuration = try GatewayConfiguration(yaml: """
            status:
              waku_rest_url: http://127.0.0.1:8645/
              pubsub_topic: /waku/2/rs/16/64
              identity_key_file: /etc/pushgate/status.key
              ios_app: im.status.ios
              android_app: im.status.android
              payload_style: legacy
              gorush_url: https://gorush.example
              texts: {mention: Someone needs you}
              poll_interval_ms: 25
              request_timeout: 3
              seen_retention_days: 7
              waku_cache_capacity: 8
              backfill_window_minutes: 15
            """)
        let status = try #require(configuration.status)
        #expect(status.wakuRESTURL == "http://127.0.0.1:8645")
        #expect(status.pubsubTopic == "/waku/2/rs/16/64")
        #expect(status.identityKeyFile == "/etc/pushgate/status.key")
        #expect(status.iosApp == "im.status.ios" && status.androidApp == "im.status.android")
        #expect(status.payloadStyle == .legacy)
        #expect(status.gorushURL == "https://gorush.example")
        #expect(status.texts.message == "You have a new message", "the legacy generation's text, where not overridden")
        #expect(status.texts.mention == "Someone needs you")
        #expect(status.pollInterval == .milliseconds(25) && status.requestTimeout == .seconds(3) && status.seenRetention == .seconds(7 * 86_400))
        #expect(status.wakuCacheCapacity == 8 && status.backfillWindow == .seconds(15 * 60))
        #expect(configuration.warnings.isEmpty)
    }

    @Test func defaultsAreStatusGosCurrentGenerationOnTheDefaultShard() throws {
        let status = try #require(try GatewayConfiguration(yaml: "status: {waku_rest_url: 'http://127.0.0.1:8645', ios_app: a}").status)
        #expect(status.pubsubTopic == "/waku/2/rs/16/32")
        #expect(status.payloadStyle == .current)
        #expect(status.texts.message == "New message in Messenger")
        #expect(status.identityKeyFile == nil && status.gorushURL == nil)
        #expect(status.wakuCacheCapacity == 50, "nwaku's default cache")
        #expect(status.backfillWindow == .seconds(3_600), "an hour of catching up from the store at most")
        #expect(try GatewayConfiguration(yaml: "http: {port: 5000}").status == nil)
    }

    @Test(arguments: [
        ("status: {ios_app: a}", "status.waku_rest_url"),
        ("status: {waku_rest_url: 'ftp://x'}", "status.waku_rest_url"),
        ("status: {waku_rest_url: 'http://x', pubsub_topic: /waku/2/default-waku/proto}", "status.pubsub_topic"),
        ("status: {waku_rest_url: 'http://x', payload_style: newest}", "status.payload_style"),
        ("status: {waku_rest_url: 'http://x', poll_interval_ms: -1}", "status.poll_interval_ms"),
        ("status: {waku_rest_url: 'http://x', waku_cache_capacity: 0}", "status.waku_cache_capacity"),
        ("status: {waku_rest_url: 'http://x', backfill_window_minutes: -5}", "status.backfill_window_minutes"),
        ("status: {waku_rest_url: 'http://x', seen_retention_days: 1, backfill_window_minutes: 1440}", "status.backfill_window_minutes"),
    ])
    func badValuesNameTheirKey(yaml: String, key: String) {
        #expect {
            try GatewayConfiguration(yaml: yaml)
        } throws: { error in
            (error as? ConfigurationError)?.key == key
        }
    }

    @Test func nothingToDeliverThroughIsAWarning() throws {
        let configuration = try GatewayConfiguration(yaml: "status: {waku_rest_url: 'http://127.0.0.1:8645', colour: blue}")
        #expect(configuration.warnings.contains { $0.contains("nothing is delivered") })
        #expect(configuration.warnings.contains { $0.contains("colour") })
    }
}
