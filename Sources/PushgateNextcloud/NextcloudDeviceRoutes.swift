import Foundation
import Hummingbird
public import Logging
import PushgateCore
public import PushgateHTTP
public import PushgateStore

/// `POST /devices` and `DELETE /devices` of the Nextcloud push proxy protocol, as real clients call them:
/// form bodies on both, query strings on DELETE, unknown fields ignored, success exactly 200, and bare
/// status codes otherwise (400 malformed or bad signature, 403 unknown or foreign on DELETE, 409 an
/// identifier already registered under another key, unless `cloudId` names a user whose own server
/// publishes the new key).
public struct NextcloudDeviceRoutes: Sendable {
    /// The store namespace of Nextcloud registrations.
    public static let namespace = "nextcloud"

    private let store: any PushStore
    private let router: NextcloudAppRouter
    private let pathPrefix: String
    private let identityProof: NextcloudIdentityProof
    private let logger: Logger
    private let figures: NextcloudFigures

    /// Creates the routes; `figures` counts registrations for the operator console.
    public init(
        store: any PushStore, router: NextcloudAppRouter, pathPrefix: String, identityProof: NextcloudIdentityProof, logger: Logger,
        figures: NextcloudFigures = NextcloudFigures()
    ) {
        self.figures = figures
        self.store = store
        self.router = router
        self.pathPrefix = pathPrefix
        self.identityProof = identityProof
        self.logger = logger
    }

    /// The routes, under the configured prefix.
    public var routes: [GatewayRoute] {
        [
            GatewayRoute(.post, self.pathPrefix + "/devices") { request, context in
                try await Self.answeringStoreErrors(context: context) { try await self.register(request, context: context) }
            },
            GatewayRoute(.delete, self.pathPrefix + "/devices") { request, context in
                try await Self.answeringStoreErrors(context: context) { try await self.unregister(request, context: context) }
            },
        ]
    }

    /// Runs a route, answering 503 (with `Retry-After`) when the store fails: the client keeps its
    /// registration state and tries again.
    private static func answeringStoreErrors(context: GatewayRequestContext, _ route: () async throws -> Response) async throws -> Response {
        do {
            return try await route()
        } catch let error as StoreError {
            context.logger.warning("nextcloud: the store is not available", metadata: ["error": "\(error)"])
            return NextcloudErrorResponse.storeUnavailable
        }
    }

    private func fields(_ request: Request, context: GatewayRequestContext) async throws -> [String: String] {
        var fields = NextcloudForm.parse(Substring(request.uri.query ?? ""))
        guard let body = try await request.readableBody(upTo: context.maxUploadSize) else {
            throw NextcloudDeviceRequest.Malformed(reason: "the request body could not be read")
        }
        let text = String(buffer: body)
        if request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true {
            // The published documentation shows JSON bodies; accept them too.
            if let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] {
                for (key, value) in object { if let string = value as? String { fields[key] = string } }
            }
        } else {
            fields.merge(NextcloudForm.parse(Substring(text))) { _, body in body }
        }
        return fields
    }

    func register(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let device: NextcloudDeviceRequest
        do {
            device = try NextcloudDeviceRequest(fields: try await self.fields(request, context: context), requirePushToken: true)
        } catch let error as NextcloudDeviceRequest.Malformed {
            context.logger.info("nextcloud: registration refused", metadata: ["reason": "\(error.reason)"])
            return Response(status: .badRequest)
        }
        let token = device.pushToken ?? ""
        // The header first, then Android Files' form field: a route for its User-Agent matches either.
        let userAgents = [request.headers[.userAgent] ?? ""] + (device.userAgentField.map { [$0] } ?? [])
        guard let choice = self.router.choose(userAgents: userAgents, pushToken: token) else {
            context.logger.warning("nextcloud: no app is configured for this device", metadata: ["token": "\(Redaction.fingerprint(token))"])
            return Response(status: .badRequest)
        }
        let existing = try await self.store.device(namespace: Self.namespace, deviceID: device.deviceIdentifier)
        // The cloudId whose server vouched for this identifier's key; kept while the key stays.
        var provenCloudID = existing?.attributes[Self.cloudIDAttribute]
        if let existing, existing.publicKey != device.userPublicKey {
            // Another key owns this identifier: only the server of the user it was proven for can vouch for
            // the new one. Any server can publish any key for a user of its own, so a cloudId the row was
            // not proven for proves nothing about this identifier (its digest does not reveal whose it is).
            guard let cloudID = device.cloudID else { return Response(status: .conflict) }
            guard existing.attributes[Self.cloudIDAttribute] == cloudID else {
                context.logger.info("nextcloud: the identifier was not registered with a proof for this cloudId")
                return Response(status: .conflict)
            }
            guard await self.proves(cloudID: cloudID, key: device.userPublicKey, context: context) else {
                return Response(status: .conflict)
            }
        } else if provenCloudID == nil, let cloudID = device.cloudID, await self.proves(cloudID: cloudID, key: device.userPublicKey, context: context) {
            provenCloudID = cloudID
        }
        var attributes: [String: String] = [:]
        if let voipApp = choice.voipApp { attributes["voip_app"] = voipApp }
        if let provenCloudID { attributes[Self.cloudIDAttribute] = provenCloudID }
        let now = Date()
        try await self.store.saveDevice(
            DeviceRegistration(
                namespace: Self.namespace, deviceID: device.deviceIdentifier, appID: choice.app, pushToken: token,
                publicKey: device.userPublicKey, attributes: attributes, createdAt: existing?.createdAt ?? now, updatedAt: now
            )
        )
        // A device that registers again may have been refused by a provider before; it is valid now.
        _ = try await self.store.clearInvalidToken(appID: choice.app, pushToken: token)
        self.figures.add(.registrations)
        context.logger.info("nextcloud: device registered", metadata: ["app": "\(choice.app)", "token": "\(Redaction.fingerprint(token))"])
        return Response(status: .ok)
    }

    /// The device attribute holding the `cloudId` whose server published the registration's key.
    static let cloudIDAttribute = "cloud_id"

    /// Whether the server named by `cloudID` publishes `key` as its user's identity-proof key.
    private func proves(cloudID: String, key: String, context: GatewayRequestContext) async -> Bool {
        do {
            let published = try await self.identityProof.publicKey(cloudID: cloudID)
            guard NextcloudIdentityProof.sameKey(published, key) else {
                context.logger.info("nextcloud: identity proof names another key")
                return false
            }
            return true
        } catch {
            context.logger.info("nextcloud: identity proof failed", metadata: ["reason": "\(error)"])
            return false
        }
    }

    func unregister(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let device: NextcloudDeviceRequest
        do {
            device = try NextcloudDeviceRequest(fields: try await self.fields(request, context: context), requirePushToken: false)
        } catch is NextcloudDeviceRequest.Malformed {
            return Response(status: .badRequest)
        }
        guard let existing = try await self.store.device(namespace: Self.namespace, deviceID: device.deviceIdentifier),
            existing.publicKey == device.userPublicKey
        else { return Response(status: .forbidden) }
        _ = try await self.store.deleteDevice(namespace: Self.namespace, deviceID: device.deviceIdentifier)
        return Response(status: .ok)
    }
}
