import Foundation
@testable import PushgateAPNs
import PushgateCore
import Testing

@Suite("APNs headers and outcome mapping")
struct APNsRequestAndOutcomeTests {
    /// The push type is the one stated, else the kind's; the app's `push_type` (Sygnal's) is the Matrix
    /// front end's to state, so an alert that states none goes as `alert` (as apns2 sends gorush's).
    @Test func thePushTypeIsTheStatedOneElseTheKinds() {
        let factory = APNsRequestFactory(topic: "im.example")
        let alert = PushNotification(kind: .alert, priority: .high, payload: .object([:]))
        let voip = PushNotification(kind: .voip, priority: .high, payload: .object([:]))
        #expect(factory.pushType(for: alert) == "alert")
        #expect(factory.priority(for: alert) == "10")
        #expect(factory.pushType(for: .voip) == "voip")
        #expect(factory.priority(for: voip) == "10")
        let statedBackground = PushNotification(kind: .alert, priority: .high, payload: .object([:]), apnsPushType: "background")
        #expect(factory.pushType(for: statedBackground) == "background")
        #expect(factory.priority(for: statedBackground) == "5")
        #expect(factory.topic(for: .voip) == "im.example.voip")
        #expect(APNsRequestFactory(topic: "im.example.voip").topic(for: .voip) == "im.example.voip")
    }

    @Test func headersCarryExpirationAndCollapseID() {
        let factory = APNsRequestFactory(topic: "im.example")
        let notification = PushNotification(kind: .alert, priority: .normal, payload: .object([:]), timeToLive: 60, collapseID: "c")
        let id = UUID()
        let headers = factory.headers(for: notification, apnsID: id, now: Date(timeIntervalSince1970: 1000.7))
        #expect(headers.map(\.name) == ["apns-topic", "apns-push-type", "apns-priority", "apns-id", "apns-expiration", "apns-collapse-id"])
        #expect(headers.map(\.value) == ["im.example", "alert", "5", id.uuidString.lowercased(), "1060", "c"])
        let long = PushNotification(payload: .object([:]), collapseID: String(repeating: "x", count: 65))
        #expect(factory.problem(with: long, body: []) != nil)
        // A time to live as large as Int allows (an outbox row of another version) saturates, not traps.
        let forever = PushNotification(payload: .object([:]), timeToLive: .max)
        let farHeaders = factory.headers(for: forever, apnsID: id, now: Date(timeIntervalSince1970: 1000))
        #expect(farHeaders.first { $0.name == "apns-expiration" }?.value == String(Int64.max))
    }

    /// A notification whose front end states no priority, time to live or collapse id gets no
    /// `apns-priority`, `apns-expiration` or `apns-collapse-id` (as apns2 sends a gorush request without
    /// them); a background push is still sent at 5, as APNs requires.
    @Test func nothingTheFrontEndLeftOutIsAdded() {
        let factory = APNsRequestFactory(topic: "im.example")
        let id = UUID()
        let headers = factory.headers(for: PushNotification(kind: .alert, payload: .object([:])), apnsID: id, now: Date(timeIntervalSince1970: 1000))
        #expect(headers.map(\.name) == ["apns-topic", "apns-push-type", "apns-id"])
        #expect(headers.map(\.value) == ["im.example", "alert", id.uuidString.lowercased()])
        #expect(factory.priority(for: PushNotification(kind: .voip, payload: .object([:]))) == nil)
        #expect(factory.priority(for: PushNotification(kind: .background, payload: .object([:]))) == "5")
    }

    @Test func aFrontEndsTopicPushTypeIDAndExpirationAreSentOrRefused() {
        let factory = APNsRequestFactory(topic: "im.example")
        let live = PushNotification(
            kind: .alert, priority: .high, payload: .object([:]), timeToLive: 60, apnsTopic: "im.example.push-type.liveactivity",
            apnsPushType: "liveactivity", apnsID: "0E3F8C2A-1B2C-4D5E-8F90-A1B2C3D4E5F6", expiration: 1_700_000_000
        )
        let headers = factory.headers(for: live, apnsID: UUID(), now: Date(timeIntervalSince1970: 1000))
        #expect(headers.map(\.value) == ["im.example.push-type.liveactivity", "liveactivity", "10", "0E3F8C2A-1B2C-4D5E-8F90-A1B2C3D4E5F6", "1700000000"])
        #expect(factory.problem(with: live, body: []) == nil)
        #expect(factory.problem(with: PushNotification(payload: .object([:]), apnsTopic: "im.other"), body: []) != nil)
        #expect(factory.problem(with: PushNotification(payload: .object([:]), apnsTopic: "im.examples"), body: []) != nil)
        #expect(factory.problem(with: PushNotification(payload: .object([:]), apnsPushType: "sms"), body: []) != nil)
        #expect(factory.problem(with: PushNotification(payload: .object([:]), apnsID: "not-a-uuid"), body: []) != nil)
        // A stated background push type is sent at priority 5, as APNs requires.
        #expect(factory.priority(for: PushNotification(priority: .high, payload: .object([:]), apnsPushType: "background")) == "5")
    }

    /// Header values go out as they are (the client's own HPACK does not check them again), so a front end's
    /// collapse id or topic that HTTP/2 forbids is refused here (RFC 9113 §8.2.1).
    @Test(arguments: [
        ("c", true), ("", true), ("élan", true), ("a b", true), (" lead", false), ("trail ", false), ("\tx", false),
        ("x\t", false), ("a\rb", false), ("a\nb", false), ("a\u{0}b", false),
    ])
    func headerValuesThatHTTP2ForbidsAreRefused(_ value: String, _ valid: Bool) {
        let factory = APNsRequestFactory(topic: "im.example")
        #expect(APNsRequestFactory.isValidFieldValue(value) == valid)
        #expect((factory.problem(with: PushNotification(payload: .object([:]), collapseID: value), body: []) == nil) == (valid || value.isEmpty))
    }

    /// The payload limit follows the push type sent: 5120 bytes for VoIP, whether the sender asked for a
    /// VoIP push or stated the VoIP push type (the Matrix front end for an app with `push_type: voip`);
    /// 4096 otherwise.
    @Test func theVoIPPayloadLimitFollowsThePushTypeSent() {
        let body = [UInt8](repeating: 0x61, count: 5000)
        let alert = PushNotification(kind: .alert, payload: .object([:]))
        #expect(APNsRequestFactory(topic: "im.example").problem(with: alert, body: body)?.hasPrefix("PayloadTooLarge") == true)
        let statedVoIP = PushNotification(kind: .alert, payload: .object([:]), apnsPushType: "voip")
        #expect(APNsRequestFactory(topic: "im.example").problem(with: statedVoIP, body: body) == nil)
        #expect(APNsRequestFactory(topic: "im.example").problem(with: PushNotification(kind: .voip, payload: .object([:])), body: body) == nil)
        #expect(APNsRequestFactory(topic: "im.example").problem(with: statedVoIP, body: body + [UInt8](repeating: 0x61, count: 200)) != nil)
    }

    @Test(arguments: [
        (200, nil, APNsResponseClassifier.Verdict.outcome(.delivered)),
        (410, "Unregistered", .outcome(.invalidToken(reason: "Unregistered"))),
        (410, "ExpiredToken", .outcome(.invalidToken(reason: "ExpiredToken"))),
        (400, "BadDeviceToken", .outcome(.invalidToken(reason: "BadDeviceToken"))),
        (400, "DeviceTokenNotForTopic", .outcome(.invalidToken(reason: "DeviceTokenNotForTopic"))),
        (400, "TopicDisallowed", .outcome(.invalidToken(reason: "TopicDisallowed"))),
        (413, "PayloadTooLarge", .outcome(.rejected(reason: "PayloadTooLarge"))),
        // The app's topic, not the device's token: the pusher stays (the Matrix front end answers 502).
        (400, "BadTopic", .outcome(.rejected(reason: "BadTopic"))),
        (400, "MissingTopic", .outcome(.rejected(reason: "MissingTopic"))),
        (400, "BadCollapseId", .outcome(.rejected(reason: "BadCollapseId"))),
        (403, "InvalidProviderToken", .outcome(.credentialsRefused(reason: "InvalidProviderToken"))),
        (403, "BadCertificate", .outcome(.credentialsRefused(reason: "BadCertificate"))),
        (403, "BadCertificateEnvironment", .outcome(.credentialsRefused(reason: "BadCertificateEnvironment"))),
        (403, "Forbidden", .outcome(.credentialsRefused(reason: "Forbidden"))),
        (403, "BadEnvironmentKeyIdInToken", .outcome(.credentialsRefused(reason: "BadEnvironmentKeyIdInToken"))),
        (403, "UnrelatedKeyIdInToken", .outcome(.credentialsRefused(reason: "UnrelatedKeyIdInToken"))),
        (403, nil, .outcome(.credentialsRefused(reason: "HTTP 403"))),
        (429, "TooManyProviderTokenUpdates", .outcome(.credentialsRefused(reason: "TooManyProviderTokenUpdates"))),
        (403, "ExpiredProviderToken", .renewProviderTokenAndRetry),
        (429, "TooManyRequests", .outcome(.retryLater(after: .seconds(7), reason: "TooManyRequests"))),
        (500, "InternalServerError", .outcome(.retryLater(after: .seconds(7), reason: "InternalServerError"))),
        (503, "Shutdown", .outcome(.retryLater(after: .seconds(7), reason: "Shutdown"))),
        (502, nil, .outcome(.retryLater(after: .seconds(7), reason: "HTTP 502"))),
        (400, "IdleTimeout", .outcome(.retryLater(after: .seconds(7), reason: "IdleTimeout"))),
        (404, nil, .outcome(.rejected(reason: "HTTP 404"))),
    ] as [(Int, String?, APNsResponseClassifier.Verdict)])
    func statusAndReasonMapToOutcomes(_ status: Int, _ reason: String?, _ expected: APNsResponseClassifier.Verdict) {
        #expect(APNsResponseClassifier.classify(status: status, reason: reason, retryAfter: .seconds(7)) == expected)
    }
}
