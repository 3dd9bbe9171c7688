import Foundation
import Logging
import PushgateCore
import PushgateStatusWire
import PushgateStore
import SwiftProtobuf

/// Takes a PushNotificationRegistration (AMM type 16) in status-go's validation order and answers with a
/// PushNotificationRegistrationResponse: `VERSION_MISMATCH` for a version not above the stored one (or
/// below 1), `UNSUPPORTED_TOKEN_TYPE` for a token type no configured app delivers to, `MALFORMED_MESSAGE`
/// for every other refusal, `INTERNAL_ERROR` when the store fails;
/// `request_id` is the SHAKE-256 of the encrypted payload in every case.
struct StatusRegistrationHandler: Sendable {
    let identity: StatusServerIdentity
    let store: any StatusServerStore
    let topics: StatusListeningTopics
    let logger: Logger
    /// Whether a registration's token type (and APNs topic) has an app to deliver through.
    var serves: @Sendable (Protobuf_PushNotificationRegistration) -> Bool = { _ in true }

    /// What became of a registration, for counters.
    enum Result: String, Sendable {
        case registered, unregistered, versionMismatch = "version_mismatch", malformed, internalError = "internal_error"
        case unsupportedTokenType = "unsupported_token_type"
    }

    func handle(_ message: StatusInboundMessage) async -> (Protobuf_PushNotificationRegistrationResponse, Result) {
        var response = Protobuf_PushNotificationRegistrationResponse()
        response.requestID = Data(Keccak.shake256(message.payload, outputCount: 64))
        let result = await self.validateAndSave(message)
        switch result {
        case .registered, .unregistered:
            response.success = true
        case .versionMismatch:
            response.error = .versionMismatch
        case .malformed:
            response.error = .malformedMessage
        case .unsupportedTokenType:
            response.error = .unsupportedTokenType
        case .internalError:
            response.error = .internalError
        }
        return (response, result)
    }

    private func validateAndSave(_ message: StatusInboundMessage) async -> Result {
        guard !message.payload.isEmpty else { return .malformed }
        let key = self.identity.privateKey.sharedSecretX(with: message.sender)
        guard let plain = try? RegistrationCipher.open(message.payload, key: key) else { return .malformed }
        guard let registration = try? Protobuf_PushNotificationRegistration(serializedBytes: plain) else { return .malformed }
        guard registration.version >= 1 else { return .versionMismatch }
        guard StatusUUID.isValid(registration.installationID) else { return .malformed }
        let keyHash = StatusTopic.keyHash(message.sender)
        let stored: StatusRegistrationRecord?
        do {
            stored = try await self.store.statusRegistration(publicKeyHash: keyHash, installationID: registration.installationID)
        } catch {
            self.logger.errorUnlessStopping("status: cannot read a registration", error: error)
            return .internalError
        }
        if let stored, registration.version <= stored.version { return .versionMismatch }
        if registration.unregister {
            return await self.save(StatusRegistrationRecord(publicKeyHash: keyHash, installationID: registration.installationID, version: registration.version, registration: nil))
                ?? .unregistered
        }
        guard StatusUUID.isValid(registration.accessToken) else { return .malformed }
        guard !registration.grant.isEmpty,
            StatusGrant.verify(grant: Array(registration.grant), clientKey: message.sender, serverKey: self.identity.publicKey, accessToken: registration.accessToken)
        else { return .malformed }
        guard !registration.deviceToken.isEmpty else { return .malformed }
        guard registration.tokenType != .unknownTokenType else { return .malformed }
        // Accepted, its notifications would be answered SUCCESS and sent nowhere.
        guard self.serves(registration) else { return .unsupportedTokenType }
        let record = StatusRegistrationRecord(
            publicKeyHash: keyHash, installationID: registration.installationID, version: registration.version, registration: plain
        )
        if let failure = await self.save(record) { return failure }
        self.topics.addQueryTopic(keyHash: keyHash)
        return .registered
    }

    /// Saves a row; nil on success, else the answer (a concurrent newer registration wins).
    private func save(_ record: StatusRegistrationRecord) async -> Result? {
        do {
            return try await self.store.saveStatusRegistration(record) ? nil : .versionMismatch
        } catch {
            self.logger.errorUnlessStopping("status: cannot save a registration", error: error)
            return .internalError
        }
    }
}
