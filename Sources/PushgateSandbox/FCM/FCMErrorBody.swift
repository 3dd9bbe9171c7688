import Foundation

/// Google's error answer: `{"error": {"code", "message", "status", "details": [...]}}`.
struct FCMErrorBody: Encodable {
    struct Detail: Encodable {
        var code: Int
        var message: String
        var status: String
        var details: [Entry]
    }

    /// One entry of `details`: an FCM error code or a bad-request field violation.
    struct Entry: Encodable {
        var type: String
        var errorCode: String?
        var fieldViolations: [FieldViolation]?

        enum CodingKeys: String, CodingKey {
            case type = "@type"
            case errorCode
            case fieldViolations
        }
    }

    struct FieldViolation: Encodable {
        var field: String
        var description: String
    }

    var error: Detail

    /// An error with an FCM `errorCode` detail (none for `UNAUTHENTICATED`).
    init(code: Int, status: String, message: String, errorCode: String?, fieldViolations: [FieldViolation] = []) {
        var details: [Entry] = []
        if let errorCode {
            details.append(Entry(type: "type.googleapis.com/google.firebase.fcm.v1.FcmError", errorCode: errorCode))
        }
        if !fieldViolations.isEmpty {
            details.append(Entry(type: "type.googleapis.com/google.rpc.BadRequest", fieldViolations: fieldViolations))
        }
        self.error = Detail(code: code, message: message, status: status, details: details)
    }

    /// The JSON text.
    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
