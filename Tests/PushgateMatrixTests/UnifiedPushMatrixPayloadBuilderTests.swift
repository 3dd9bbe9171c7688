import PushgateCore
@testable import PushgateMatrix
import Testing

/// The UnifiedPush body is the request's notification without `devices`, read past rather than built: it
/// must be what reading the whole request and dropping `devices` gives, in every shape a homeserver or a
/// forged request can send.
@Suite("UnifiedPush body of a Matrix notification")
struct UnifiedPushMatrixPayloadBuilderTests {
    /// The body by its definition: the whole request read, the last `notification` object taken, its
    /// `devices` dropped.
    static func expectedNotification(_ requestBody: String) -> [String: JSONValue] {
        guard case .object(let root)? = try? JSONParser.parse(Array(requestBody.utf8)),
            case .object(var notification)? = root["notification"]
        else { return [:] }
        notification["devices"] = nil
        return notification
    }

    static let device = #"{"app_id":"im.example.up","pushkey":"https://up.example.org/up/abc?up=1","data":{"url":"https://gw.example.org/_matrix/push/v1/notify","cs":"secret"}}"#

    static let requests = [
        #"{"notification":{"event_id":"$e","room_id":"!r:example.org","type":"m.room.message","sender":"@a:example.org","#
            + #""content":{"msgtype":"m.text","body":"Hello \u00e9 \ud83d\ude00"},"counts":{"unread":2},"prio":"high","devices":[\#(device)]}}"#,
        #"{"notification":{"devices":[\#(device)],"event_id":"$e","counts":{"unread":1,"missed_calls":0}}}"#,
        #"{"notification":{"event_id":"$first","devices":[]},"notification":{"event_id":"$second","room_id":"!r","devices":[\#(device)]}}"#,
        #"{"notification":{"event_id":"$e","type":"m.room.message","devices":[\#(device)],"devices":[\#(device)]}}"#,
        #"{"notification":{"event_id":"$e","dev\u0069ces":[\#(device)],"sender":"@a:example.org"}}"#,
        #"{"notification":{"event_id":"$e","event_id":"$later","devices":[\#(device)]}}"#,
        #"{"other":[1,{"x":null}],"notification":{"id":1e3,"n":-0.5,"flag":true,"none":null,"devices":[\#(device)]}}"#,
        #"{"notification":"not an object"}"#,
        #"{"notification":{"event_id":"$e","devices":[\#(device)]},"notification":[]}"#,
        #"["not an object"]"#,
        // Keys out of order, repeated at every level, with escapes; values the text reader leaves to the
        // long way (a key outside ASCII, a fraction).
        #"{"notification":{"type":"m.room.message","counts":{"unread":1,"missed_calls":2,"unread":3},"content":{"z":[{"b":1,"a":2}],"a":"\/\n\""},"#
            + #""a b":1,"a":0,"ab":2,"room_id":"!r","devices":[\#(device)]}}"#,
        #"{"notification":{"event_id":"$e","sender_display_name":"Zoë","content":{"é":1},"devices":[\#(device)]}}"#,
        #"{"notification":{"event_id":"$e","content":{"n":1.25},"devices":[\#(device)]}}"#,
        #"{"notification":{"event_id":"$e","content":{"a\"b":1},"devices":[\#(device)]}}"#,
    ]

    @Test(arguments: Self.requests)
    func theBodyIsTheNotificationWithoutDevices(requestBody: String) {
        let bodies = UnifiedPushMatrixPayloadBuilder.bodies(requestBody: Array(requestBody.utf8))
        let notification = Self.expectedNotification(requestBody)
        // Byte for byte what the value written by JSONText is, whichever way the body was made.
        #expect(bodies.preferred == (try? JSONText.encode(.object(["notification": .object(notification)]))))
        #expect(bodies == UnifiedPushMatrixPayloadBuilder.bodiesAsBuilt(Array(requestBody.utf8)))
        // The `event_id_only` form is offered when it differs from the whole notification.
        let reduced = notification.filter { ["event_id", "room_id", "prio", "counts"].contains($0.key) }
        #expect(bodies.fallback == (reduced == notification ? nil : try? JSONText.encode(.object(["notification": .object(reduced)]))))
    }

    /// What homeservers send is written while it is read, without building the notification.
    @Test(arguments: Array(Self.requests[0...5] + Self.requests[7...8] + [Self.requests[10]]))
    func aHomeserverRequestIsWrittenWhileItIsRead(requestBody: String) {
        #expect(UnifiedPushMatrixPayloadBuilder.bodiesAsRead(Array(requestBody.utf8)) != nil)
    }

    @Test func aNotificationTooLargeForUnifiedPushIsSentInTheEventIDOnlyForm() throws {
        let body = String(repeating: "x", count: 5000)
        let request = #"{"notification":{"event_id":"$e","room_id":"!r","prio":"low","counts":{"unread":3},"#
            + #""content":{"body":"\#(body)"},"devices":[\#(Self.device)]}}"#
        let bodies = UnifiedPushMatrixPayloadBuilder.bodies(requestBody: Array(request.utf8))
        #expect(bodies.preferred == Array(#"{"notification":{"counts":{"unread":3},"event_id":"$e","prio":"low","room_id":"!r"}}"#.utf8))
        #expect(bodies.fallback == nil)
    }
}
