public import Foundation

/// What a decrypted Nextcloud push says.
///
/// The server sends one of four JSON plaintexts (nextcloud/notifications `Push::encodeNotif` and
/// `Push::encodeDeleteNotifs`):
///
/// | Plaintext | Message |
/// |---|---|
/// | `{"nid":525210,"app":"spreed","subject":"…","type":"chat","id":"t0k3n"}` | ``notification(_:)`` |
/// | `{"nid":1337,"delete":true}` | ``delete(nid:)`` |
/// | `{"nids":[1,2,3],"delete-multiple":true}` | ``deleteMultiple(nids:)`` |
/// | `{"delete-all":true}` | ``deleteAll`` |
public enum NextcloudPushMessage: Sendable, Hashable {
    /// A new notification to show.
    case notification(NextcloudPushNotification)
    /// The notification `nid` was dismissed or resolved elsewhere: remove it from the device.
    case delete(nid: Int)
    /// These notifications were dismissed (at most 10 per push): remove them from the device.
    case deleteMultiple(nids: [Int])
    /// Every notification of the account was dismissed: remove them all from the device.
    case deleteAll

    /// Reads a decrypted subject.
    /// - Parameter plaintext: the JSON the device key decrypted.
    /// - Throws: ``NextcloudPushError/malformedPlaintext(reason:)`` when it is not one of the four
    ///   messages (not JSON, not an object, a required field missing or of the wrong type).
    public init(plaintext: Data) throws(NextcloudPushError) {
        guard (try? JSONSerialization.jsonObject(with: plaintext)) is [String: Any] else {
            throw .malformedPlaintext(reason: "not a JSON object")
        }
        let fields: PlaintextFields
        do {
            fields = try JSONDecoder().decode(PlaintextFields.self, from: plaintext)
        } catch let DecodingError.typeMismatch(_, context) {
            throw .malformedPlaintext(reason: "\(context.codingPath.last?.stringValue ?? "a field") has the wrong type")
        } catch {
            throw .malformedPlaintext(reason: "unreadable fields")
        }
        if fields.deleteAll == true {
            self = .deleteAll
        } else if fields.deleteMultiple == true {
            guard let nids = fields.nids else { throw .malformedPlaintext(reason: "delete-multiple without nids") }
            self = .deleteMultiple(nids: nids)
        } else if fields.delete == true {
            guard let nid = fields.nid else { throw .malformedPlaintext(reason: "delete without nid") }
            self = .delete(nid: nid)
        } else {
            guard let nid = fields.nid else { throw .malformedPlaintext(reason: "nid is missing") }
            guard let app = fields.app else { throw .malformedPlaintext(reason: "app is missing") }
            guard let type = fields.type else { throw .malformedPlaintext(reason: "type is missing") }
            guard let subject = fields.subject else { throw .malformedPlaintext(reason: "subject is missing") }
            guard let id = fields.id else { throw .malformedPlaintext(reason: "id is missing") }
            self = .notification(NextcloudPushNotification(app: app, type: type, subject: subject, id: id, nid: nid))
        }
    }
}

/// Every field any of the four plaintexts has, each optional.
private struct PlaintextFields: Decodable {
    var nid: Int?
    var nids: [Int]?
    var app: String?
    var type: String?
    var subject: String?
    var id: String?
    var delete: Bool?
    var deleteMultiple: Bool?
    var deleteAll: Bool?

    enum CodingKeys: String, CodingKey {
        case nid, nids, app, type, subject, id, delete
        case deleteMultiple = "delete-multiple"
        case deleteAll = "delete-all"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.nid = try container.decodeIfPresent(Int.self, forKey: .nid)
        self.nids = try container.decodeIfPresent([Int].self, forKey: .nids)
        self.app = try container.decodeIfPresent(String.self, forKey: .app)
        self.type = try container.decodeIfPresent(String.self, forKey: .type)
        self.subject = try container.decodeIfPresent(String.self, forKey: .subject)
        self.delete = try container.decodeIfPresent(Bool.self, forKey: .delete)
        self.deleteMultiple = try container.decodeIfPresent(Bool.self, forKey: .deleteMultiple)
        self.deleteAll = try container.decodeIfPresent(Bool.self, forKey: .deleteAll)
        // The object id is a string for most apps but a JSON number for some (file ids): keep its text.
        if try !container.contains(.id) || container.decodeNil(forKey: .id) {
            self.id = nil
        } else if let text = try? container.decode(String.self, forKey: .id) {
            self.id = text
        } else if let number = try? container.decode(Int64.self, forKey: .id) {
            self.id = String(number)
        } else if let number = try? container.decode(UInt64.self, forKey: .id) {
            self.id = String(number)
        } else {
            throw DecodingError.typeMismatch(
                String.self, .init(codingPath: container.codingPath + [CodingKeys.id], debugDescription: "id is neither a string nor an integer")
            )
        }
    }
}
