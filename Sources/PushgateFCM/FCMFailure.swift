import Foundation

/// What an FCM error answer means, read from its HTTP status and Google's error body
/// (`{"error": {"code", "message", "status", "details": [{"errorCode"}, {"fieldViolations"}]}}`).
enum FCMFailure: Equatable {
    /// The token is no longer registered (`UNREGISTERED`, `NOT_FOUND`).
    case unregistered
    /// `INVALID_ARGUMENT` about the registration token itself.
    case invalidRegistrationToken(String)
    /// `INVALID_ARGUMENT` about the message.
    case invalidArgument(String)
    /// The token belongs to another sender (`SENDER_ID_MISMATCH`).
    case senderIDMismatch
    /// `QUOTA_EXCEEDED` / 429.
    case quotaExceeded
    /// `UNAVAILABLE` / 503 and other transient server errors.
    case unavailable(String)
    /// `INTERNAL` / 500.
    case internalError
    /// The access token was refused (`UNAUTHENTICATED` / 401).
    case unauthenticated
    /// `THIRD_PARTY_AUTH_ERROR` (401 or 403): the APNs certificate or key, or the Web Push key, stored in
    /// the Firebase project was refused, for an iOS or web token. Not the access token, and not the
    /// project's Android deliveries.
    case thirdPartyAuthentication
    /// `PERMISSION_DENIED` and any other refusal.
    case refused(String)

    /// Reads an error answer.
    init(status: Int, body: Data) {
        let error = (try? JSONDecoder().decode(ErrorBody.self, from: body))?.error
        let message = error?.message ?? ""
        let codes = Set((error?.details ?? []).compactMap(\.errorCode))
        let fields = (error?.details ?? []).flatMap { $0.fieldViolations ?? [] }
        let statusName = error?.status ?? ""
        // Google's messages can quote the offending value (payload content), so only codes and field
        // paths make it into reasons.
        let fieldPaths = fields.compactMap(\.field)
        var describe = "HTTP \(status)"
        if let name = codes.sorted().first ?? (statusName.isEmpty ? nil : statusName) { describe += " \(name)" }
        if !fieldPaths.isEmpty { describe += " (\(fieldPaths.joined(separator: ", ")))" }

        if codes.contains("THIRD_PARTY_AUTH_ERROR") {
            self = .thirdPartyAuthentication
        } else if codes.contains("UNREGISTERED") || statusName == "NOT_FOUND" || (status == 404 && codes.isEmpty && statusName.isEmpty) {
            self = .unregistered
        } else if codes.contains("SENDER_ID_MISMATCH") {
            self = .senderIDMismatch
        } else if codes.contains("INVALID_ARGUMENT") || statusName == "INVALID_ARGUMENT" || (status == 400 && codes.isEmpty && statusName.isEmpty) {
            let aboutToken = message.lowercased().contains("registration token")
                || fields.contains { $0.field == "message.token" || ($0.description ?? "").lowercased().contains("registration token") }
            self = aboutToken ? .invalidRegistrationToken("INVALID_ARGUMENT: the registration token is not a valid FCM registration token") : .invalidArgument(describe)
        } else if codes.contains("QUOTA_EXCEEDED") || statusName == "RESOURCE_EXHAUSTED" || status == 429 {
            self = .quotaExceeded
        } else if codes.contains("UNAVAILABLE") || statusName == "UNAVAILABLE" || status == 503 {
            self = .unavailable(describe)
        } else if codes.contains("INTERNAL") || statusName == "INTERNAL" || status == 500 {
            self = .internalError
        } else if statusName == "UNAUTHENTICATED" || status == 401 {
            self = .unauthenticated
        } else if status >= 500 {
            self = .unavailable(describe)
        } else {
            self = .refused(describe)
        }
    }

    private struct ErrorBody: Decodable {
        var error: Detail
    }

    private struct Detail: Decodable {
        var code: Int?
        var message: String?
        var status: String?
        var details: [Entry]?
    }

    private struct Entry: Decodable {
        var errorCode: String?
        var fieldViolations: [FieldViolation]?
    }

    private struct FieldViolation: Decodable {
        var field: String?
        var description: String?
    }
}
