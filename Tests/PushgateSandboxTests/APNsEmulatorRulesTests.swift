import Foundation
@testable import PushgateSandbox
import Testing

@Suite("APNs emulator rules")
struct APNsEmulatorRulesTests {
    static let rules = APNsEmulatorRules(bundleID: "im.example.ios")
    static let token = String(repeating: "a1", count: 32)
    static let headers = ["apns-topic": "im.example.ios", "apns-push-type": "alert"]

    static func verdict(_ body: String, headers: [String: String] = Self.headers) -> APNsEmulatorRules.Verdict {
        Self.rules.verdict(for: .init(token: Self.token, headers: headers, body: Array(body.utf8)))
    }

    @Test func thePayloadMustBeAJSONObjectWhoseApsIfAnyIsAnObject() {
        #expect(Self.verdict(#"{"aps":{"alert":"hi"},"x":[1,2.5e3,null,true]}"#) == .accepted)
        #expect(Self.verdict(#" {"aps":{}} "#) == .accepted)
        // As APNs: a payload without aps (Sygnal's event_id_only form) and an empty one are delivered.
        #expect(Self.verdict(#"{"event_id":"$e","room_id":"!r:example.org","unread_count":2}"#) == .accepted)
        #expect(Self.verdict("{}") == .accepted)
        for body in ["", "null", "[]", #"{"aps":1}"#, #"{"aps":[]}"#, #"{"aps":null}"#, #"{"aps":{}"#, #"{"aps":{}} x"#, "{'aps':{}}"] {
            #expect(Self.verdict(body) == .init(status: 400, reason: "PayloadEmpty"), "\(body)")
        }
    }

    @Test func sizeLimitsDependOnThePushType() {
        func payload(size: Int) -> String {
            let (prefix, suffix) = (#"{"aps":{"alert":""#, #""}}"#)
            return prefix + String(repeating: "x", count: size - prefix.utf8.count - suffix.utf8.count) + suffix
        }
        let alert = payload(size: 4096)
        #expect(alert.utf8.count == 4096)
        #expect(Self.verdict(alert) == .accepted)
        let tooLarge = payload(size: 4097)
        #expect(Self.verdict(tooLarge) == .init(status: 413, reason: "PayloadTooLarge"))
        let voip = ["apns-topic": "im.example.ios.voip", "apns-push-type": "voip"]
        #expect(Self.verdict(tooLarge, headers: voip) == .accepted)
    }

    @Test(arguments: [
        ("alert", "im.example.ios", nil),
        ("alert", "im.example.ios.complication", nil),
        ("widgets", "im.example.ios.push-type.liveactivity", nil),
        ("voip", "im.example.ios.voip", nil),
        ("complication", "im.example.ios.complication", nil),
        ("fileprovider", "im.example.ios.pushkit.fileprovider", nil),
        ("liveactivity", "im.example.ios.push-type.liveactivity", nil),
        ("location", "im.example.ios.location-query", nil),
        ("pushtotalk", "im.example.ios.voip-ptt", nil),
        ("alert", "im.example.ios.voip", "DeviceTokenNotForTopic"),
        ("voip", "im.example.ios", "DeviceTokenNotForTopic"),
        ("voip", "im.example.ios.voip-ptt", "DeviceTokenNotForTopic"),
        ("liveactivity", "im.example.ios", "DeviceTokenNotForTopic"),
        ("pushtotalk", "im.example.ios.complication", "DeviceTokenNotForTopic"),
        ("alert", "im.other.ios", "TopicDisallowed"),
        ("alert", "im.example.ios.voipx", "TopicDisallowed"),
        ("alert", "IM.EXAMPLE.IOS", "TopicDisallowed"),
        ("alert", "", "MissingTopic"),
        ("Alert", "im.example.ios", "InvalidPushType"),
        ("email", "im.example.ios", "InvalidPushType"),
    ] as [(String, String, String?)])
    func eachPushTypeGoesToItsOwnTopic(pushType: String, topic: String, reason: String?) {
        let verdict = Self.verdict(#"{"aps":{}}"#, headers: ["apns-topic": topic, "apns-push-type": pushType])
        #expect(verdict == (reason.map { .init(status: 400, reason: $0) } ?? .accepted))
    }

    @Test func withoutATopicTheRequestIsRefused() {
        #expect(Self.verdict(#"{"aps":{}}"#, headers: [:]) == .init(status: 400, reason: "MissingTopic"))
    }

    /// `apns-id` must be a canonical UUID (8-4-4-4-12 hex digits, either case). Foundation's
    /// `UUID(uuidString:)` checks the length and the hyphens, but its `sscanf` also takes a space or a sign
    /// in place of a digit; those are refused.
    @Test func anAPNsIDIsACanonicalUUID() {
        var candidates = [
            "123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000", "", "-",
            "123e4567e89b12d3a456426614174000", "{123e4567-e89b-12d3-a456-426614174000}",
            "123e4567-e89b-12d3-a456-4266141740000", "123e4567-e89b-12d3-a456-42661417400",
            "123e4567-e89b-12d3-a456_426614174000", "123e4567-e89b-12d3-a456-42661417400g",
            " 23e4567-e89b-12d3-a456-426614174000", "+23e4567-e89b-12d3-a456-426614174000",
            "0x3e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a4-56426614174000",
            "123e4567-e89b-12d3-a456-42661417400é", "urn:uuid:123e4567-e89b-12d3-a456-426614174000",
        ]
        // Every one-character change of a valid identifier.
        let valid = Array("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
        for position in valid.indices {
            for replacement in ["0", "9", "a", "f", "A", "F", "g", "G", "-", " ", "x", "+", "\u{0}"] {
                var changed = valid
                changed[position] = Character(replacement)
                candidates.append(String(changed))
            }
        }
        var accepted = 0
        for candidate in candidates {
            let canonical = UUID(uuidString: candidate) != nil && candidate.filter { $0 == "-" }.count == 4
                && candidate.allSatisfy { $0.isHexDigit || $0 == "-" }
            accepted += canonical ? 1 : 0
            #expect(APNsEmulatorRules.isUUID(candidate) == canonical, "\(candidate)")
            let verdict = Self.verdict(#"{"aps":{}}"#, headers: Self.headers.merging(["apns-id": candidate]) { $1 })
            #expect(verdict == (canonical ? .accepted : .init(status: 400, reason: "BadMessageId")), "\(candidate)")
        }
        #expect(accepted > 100)
    }

    @Test func theDeviceTokenComesFromTheDevicePath() {
        #expect(APNsEmulatorConnectionHandler.deviceToken(inPath: "/3/device/abc") == "abc")
        #expect(APNsEmulatorConnectionHandler.deviceToken(inPath: "/3/device/abc?x=1") == "abc")
        #expect(APNsEmulatorConnectionHandler.deviceToken(inPath: "/3/device/") == nil)
        #expect(APNsEmulatorConnectionHandler.deviceToken(inPath: "/3/device/a/b") == nil)
        #expect(APNsEmulatorConnectionHandler.deviceToken(inPath: "/3/devices/abc") == nil)
        #expect(APNsEmulatorConnectionHandler.deviceToken(inPath: "/3/device") == nil)
    }

    @Test func errorBodiesAreAPNsJSON() throws {
        #expect(String(decoding: APNsEmulatorConnectionHandler.errorBody(reason: "BadDeviceToken"), as: UTF8.self) == #"{"reason":"BadDeviceToken"}"#)
        let unregistered = APNsEmulatorConnectionHandler.errorBody(reason: "Unregistered", now: Date(timeIntervalSince1970: 1_700_000_000.5))
        #expect(String(decoding: unregistered, as: UTF8.self) == #"{"reason":"Unregistered","timestamp":1700000000500}"#)
    }
}
