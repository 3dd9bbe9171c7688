/// A notification's payload as its front end gave it: a value, or the JSON text ``JSONText/encode(_:)``
/// writes for one (a front end that already has the text, such as the Matrix gateway's UnifiedPush body
/// read straight from the request, spares building a tree only for a back end to write it out again).
enum PushPayloadForm: Sendable {
    case value(JSONValue)
    case text([UInt8])

    /// The payload as a value; text is read back (it was written by ``JSONText``, so it reads).
    var value: JSONValue {
        switch self {
        case .value(let value): value
        case .text(let text): (try? JSONParser.parse(text)) ?? .null
        }
    }
}

extension PushNotification {
    /// Creates a notification whose payload is JSON text, exactly as ``JSONText/encode(_:)`` writes some
    /// value (compact, keys sorted): ``payloadText()`` returns it unchanged, and ``payload`` reads it.
    public init(kind: PushKind = .alert, priority: PushPriority? = nil, payloadText: [UInt8], timeToLive: Int? = nil) {
        self.init(kind: kind, priority: priority, payload: .null, timeToLive: timeToLive)
        self.payloadForm = .text(payloadText)
    }

    /// The payload's JSON text: as the front end gave it, or ``payload`` written by ``JSONText``.
    /// - Throws: what ``JSONText/encode(_:)`` throws.
    public func payloadText() throws -> [UInt8] {
        switch self.payloadForm {
        case .value(let value): try JSONText.encode(value)
        case .text(let text): text
        }
    }

    /// The payload's JSON text when the front end gave it as text; nil when it gave a value.
    public var givenPayloadText: [UInt8]? {
        if case .text(let text) = self.payloadForm { return text }
        return nil
    }
}

extension PushNotification: Hashable {
    /// Equal when every field is, the payloads compared as values (text and the value it writes are equal).
    public static func == (lhs: PushNotification, rhs: PushNotification) -> Bool {
        guard lhs.kind == rhs.kind, lhs.priority == rhs.priority, lhs.timeToLive == rhs.timeToLive, lhs.collapseID == rhs.collapseID,
            lhs.webPushUrgency == rhs.webPushUrgency, lhs.apnsTopic == rhs.apnsTopic, lhs.apnsPushType == rhs.apnsPushType,
            lhs.apnsID == rhs.apnsID, lhs.expiration == rhs.expiration, lhs.reducedPayload == rhs.reducedPayload
        else { return false }
        if case .text(let left) = lhs.payloadForm, case .text(let right) = rhs.payloadForm { return left == right }
        return lhs.payload == rhs.payload
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(self.kind)
        hasher.combine(self.priority)
        hasher.combine(self.payload)
        hasher.combine(self.timeToLive)
        hasher.combine(self.collapseID)
        hasher.combine(self.webPushUrgency)
        hasher.combine(self.apnsTopic)
        hasher.combine(self.apnsPushType)
        hasher.combine(self.apnsID)
        hasher.combine(self.expiration)
        hasher.combine(self.reducedPayload)
    }
}

extension PushNotification: Codable {
    /// The property names, as the outbox stores them.
    enum CodingKeys: String, CodingKey {
        case kind, priority, payload, timeToLive, collapseID, webPushUrgency, apnsTopic, apnsPushType, apnsID, expiration, reducedPayload
    }

    /// Reads the form ``encode(to:)`` writes (optional fields may be absent or null).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            kind: try container.decode(PushKind.self, forKey: .kind), priority: try container.decodeIfPresent(PushPriority.self, forKey: .priority),
            payload: try container.decode(JSONValue.self, forKey: .payload), timeToLive: try container.decodeIfPresent(Int.self, forKey: .timeToLive),
            collapseID: try container.decodeIfPresent(String.self, forKey: .collapseID),
            webPushUrgency: try container.decodeIfPresent(WebPushUrgency.self, forKey: .webPushUrgency),
            apnsTopic: try container.decodeIfPresent(String.self, forKey: .apnsTopic),
            apnsPushType: try container.decodeIfPresent(String.self, forKey: .apnsPushType),
            apnsID: try container.decodeIfPresent(String.self, forKey: .apnsID),
            expiration: try container.decodeIfPresent(Int64.self, forKey: .expiration)
        )
        self.reducedPayload = try container.decodeIfPresent(JSONValue.self, forKey: .reducedPayload)
    }

    /// Writes every field under its property name, nil fields left out; the payload as a value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.kind, forKey: .kind)
        try container.encodeIfPresent(self.priority, forKey: .priority)
        try container.encode(self.payload, forKey: .payload)
        try container.encodeIfPresent(self.timeToLive, forKey: .timeToLive)
        try container.encodeIfPresent(self.collapseID, forKey: .collapseID)
        try container.encodeIfPresent(self.webPushUrgency, forKey: .webPushUrgency)
        try container.encodeIfPresent(self.apnsTopic, forKey: .apnsTopic)
        try container.encodeIfPresent(self.apnsPushType, forKey: .apnsPushType)
        try container.encodeIfPresent(self.apnsID, forKey: .apnsID)
        try container.encodeIfPresent(self.expiration, forKey: .expiration)
        try container.encodeIfPresent(self.reducedPayload, forKey: .reducedPayload)
    }
}
