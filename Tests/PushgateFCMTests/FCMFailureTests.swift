import Foundation
@testable import PushgateFCM
import Testing

/// Reading Google's error bodies.
@Suite("FCM error classification")
struct FCMFailureTests {
    static func failure(_ status: Int, _ json: String) -> FCMFailure {
        FCMFailure(status: status, body: Data(json.utf8))
    }

    @Test func theTokensFateIsInTheDetails() {
        let unregistered = #"{"error": {"code": 404, "message": "Requested entity was not found.", "status": "NOT_FOUND", "details": [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "UNREGISTERED"}]}}"#
        #expect(Self.failure(404, unregistered) == .unregistered)
        let mismatch = #"{"error": {"code": 403, "message": "SenderId mismatch", "status": "PERMISSION_DENIED", "details": [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "SENDER_ID_MISMATCH"}]}}"#
        #expect(Self.failure(403, mismatch) == .senderIDMismatch)
        let denied = #"{"error": {"code": 403, "message": "Permission denied", "status": "PERMISSION_DENIED"}}"#
        #expect(Self.failure(403, denied) == .refused("HTTP 403 PERMISSION_DENIED"))
    }

    @Test func invalidArgumentIsAboutTheTokenOnlyWhenItSaysSo() {
        let token = #"{"error": {"code": 400, "message": "The registration token is not a valid FCM registration token", "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "INVALID_ARGUMENT"}]}}"#
        guard case .invalidRegistrationToken = Self.failure(400, token) else {
            Issue.record("a token error must be recognised")
            return
        }
        let field = #"{"error": {"code": 400, "message": "Request contains an invalid argument.", "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [{"field": "message.token", "description": "Invalid registration token"}]}]}}"#
        guard case .invalidRegistrationToken = Self.failure(400, field) else {
            Issue.record("a field violation on message.token must be recognised")
            return
        }
        let data = #"{"error": {"code": 400, "message": "Invalid value at 'message.data[0].value' (TYPE_STRING), 2", "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [{"field": "message.data[0].value", "description": "Invalid value"}]}]}}"#
        // The reason names the field but never quotes the value Google echoes.
        #expect(Self.failure(400, data) == .invalidArgument("HTTP 400 INVALID_ARGUMENT (message.data[0].value)"))
    }

    @Test func transientAndAuthenticationErrors() {
        #expect(Self.failure(429, #"{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [{"errorCode": "QUOTA_EXCEEDED"}]}}"#) == .quotaExceeded)
        #expect(Self.failure(500, "not json") == .internalError)
        #expect(Self.failure(401, #"{"error": {"code": 401, "status": "UNAUTHENTICATED"}}"#) == .unauthenticated)
        // The APNs or Web Push credentials stored in the Firebase project, not the access token.
        let thirdParty = #"{"error": {"code": 401, "message": "Auth error from APNS or Web Push Service", "status": "UNAUTHENTICATED", "details": [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "THIRD_PARTY_AUTH_ERROR"}]}}"#
        #expect(Self.failure(401, thirdParty) == .thirdPartyAuthentication)
        #expect(Self.failure(403, thirdParty.replacingOccurrences(of: "401", with: "403")) == .thirdPartyAuthentication)
        #expect(Self.failure(502, "") == .unavailable("HTTP 502"))
        #expect(Self.failure(418, "") == .refused("HTTP 418"))
    }
}
