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

    @Test func thePayloadMustBeAJSONObjectWithAnApsObject() {
        #expect(Self.verdict(#"{"aps":{"alert":"hi"},"x":[1,2.5e3,null,true]}"#) == .accepted)
        #expect(Self.verdict(#" {"aps":{}} "#) == .accepted)
        for body in ["", "null", "[]", #"{"aps":1}"#, #"{"aps":[]}"#, #"{"alert":"hi"}"#, #"{"aps":{}"#, #"{"aps":{}} x"#, "{'aps':{}}"] {
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
