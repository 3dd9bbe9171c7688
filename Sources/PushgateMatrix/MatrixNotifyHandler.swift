import Crypto
import Foundation
import Hummingbird
public import Logging
import PushgateCore
public import PushgateDelivery
public import PushgateHTTP
public import PushgateStore

/// `POST /_matrix/push/v1/notify`: the Matrix Push Gateway API as Sygnal serves it, with its validation,
/// app-id matching, payloads and rejections, and these differences users asked for:
/// devices are delivered concurrently under one deadline well inside the homeserver's timeout; a
/// transient provider failure, and a provider's refusal that is not about the token, answers 502 (never a
/// silent 200); a repeated `(event_id, pushkey)` within
/// ``duplicateWindow`` is sent once (a client's test push each time); badge-clearing updates reach FCM too; pushkeys are never logged.
///
/// Devices of a `unifiedpush` app are a UnifiedPush gateway's, as common-proxies serves them: the pushkey
/// is the endpoint URL, which gets the notification without `devices` (``UnifiedPushMatrixPayloadBuilder``);
/// a pushkey whose endpoint is gone or unusable is rejected exactly as the homeserver sent it; a temporary
/// failure is queued in the durable outbox (retried with backoff, honouring `Retry-After`) and the answer
/// does not wait for it; a message the push server refuses is sent again in the `event_id_only` form, and
/// dropped (logged) if refused again. With such an app configured, `GET` on the endpoint answers
/// UnifiedPush's gateway discovery; without one it answers 405 as for any other method, and a reload that
/// adds or removes the last such app turns discovery on or off.
public struct MatrixNotifyHandler: Sendable {
    /// How long a request may spend delivering before it answers 502.
    public static let deliveryBudget: Duration = .seconds(20)
    /// How long a delivered `(event_id, pushkey)` is remembered.
    public static let duplicateWindow: Double = 600
    /// The event id of the test push Element X, Element Android and SchildiChat send from their push
    /// troubleshooting screens, the same in every test: never taken for a homeserver's retry.
    public static let clientTestEventID = "$THIS_IS_A_FAKE_EVENT_ID"

    private let dispatcher: Dispatcher
    private let apps: LiveValue<[String: MatrixAppOptions]>
    private let duplicates: MatrixDuplicateFilter
    private let metrics: MatrixMetrics
    private let logger: Logger
    private let unifiedPushDiscovery: LiveValue<Bool>

    /// The `GET` answer of a UnifiedPush Matrix gateway: the UnifiedPush documentation's member, and the
    /// top-level one common-proxies adds (which FluffyChat also reads).
    static let discoveryBody: [UInt8] = Array(#"{"gateway":"matrix","unifiedpush":{"gateway":"matrix"}}"#.utf8)

    /// Creates the handler.
    /// - Parameters:
    ///   - dispatcher: delivers to the configured apps.
    ///   - apps: per configured app id (as written in `apps`), its Matrix payload options.
    ///   - store: keeps the duplicate-suppression window, shared by every instance.
    ///   - storeIsShared: whether other instances use `store` too (PostgreSQL); when not (the embedded
    ///     SQLite store), the window is kept in memory only, with no store round trip per delivery.
    ///   - unifiedPushDiscovery: whether `GET` answers UnifiedPush's gateway discovery (a `unifiedpush`
    ///     app is configured); otherwise `GET` is 405 like any other method but `POST`.
    public init(
        dispatcher: Dispatcher, apps: [String: MatrixAppOptions], store: any PushStore, storeIsShared: Bool = true, metrics: MatrixMetrics,
        logger: Logger, unifiedPushDiscovery: Bool = false
    ) {
        self.unifiedPushDiscovery = LiveValue(unifiedPushDiscovery)
        self.dispatcher = dispatcher
        self.apps = LiveValue(apps)
        self.duplicates = MatrixDuplicateFilter(store: storeIsShared ? store : nil, window: Self.duplicateWindow)
        self.metrics = metrics
        self.logger = logger
    }

    /// Takes the Matrix options of a reloaded configuration's apps, and whether it has a `unifiedpush` app
    /// (which turns `GET`'s discovery answer on or off).
    public func replaceApps(_ apps: [String: MatrixAppOptions], unifiedPushDiscovery: Bool) {
        self.apps.replace(apps)
        self.unifiedPushDiscovery.replace(unifiedPushDiscovery)
    }

    /// The 405 `GET` answers while no `unifiedpush` app is configured: the one any other method gets.
    static let discoveryOff: GatewayErrorBody = {
        var body = GatewayErrorBody(status: .methodNotAllowed, errcode: "M_UNRECOGNIZED", message: "Unrecognized request")
        body.headers[.allow] = "POST"
        return body
    }()

    /// The routes: the endpoint, and (as Sygnal's leaf resource) any path below it; `GET` on the endpoint
    /// itself (not below it, as common-proxies and ntfy) for discovery, which answers 405 while no
    /// UnifiedPush app is configured.
    public var routes: [GatewayRoute] {
        [
            GatewayRoute(.post, "/_matrix/push/v1/notify") { request, context in try await self.handle(request, context: context) },
            GatewayRoute(.post, "/_matrix/push/v1/notify/**") { request, context in try await self.handle(request, context: context) },
            GatewayRoute(.get, "/_matrix/push/v1/notify", isAnswering: { [discovery = self.unifiedPushDiscovery] in discovery.current }) { _, _ in
                guard self.unifiedPushDiscovery.current else { throw Self.discoveryOff }
                return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: Self.discoveryBody)))
            },
        ]
    }

    func handle(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let started = ContinuousClock.now
        self.metrics.inFlight(1)
        defer { self.metrics.inFlight(-1) }
        let response = try await self.respond(request, context: context)
        self.metrics.answered(code: Int(response.status.code), duration: ContinuousClock.now - started)
        return response
    }

    private func respond(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        let notification: MatrixNotification
        do {
            notification = try await ComputePool.run(readingBytes: body.readableBytes) { () throws(MatrixRequestError) in
                try MatrixRequestParser.parse(Array(buffer: body))
            }
        } catch {
            let errcode = error.message == "Expected JSON request body" ? "M_NOT_JSON" : "M_BAD_JSON"
            return try GatewayErrorBody(status: .badRequest, errcode: errcode, message: error.message).response(from: request, context: context)
        }
        self.metrics.notificationReceived(devices: notification.devices.count)
        let deadline = ContinuousClock.now + Self.deliveryBudget
        // What UnifiedPush endpoints receive is the notification as sent: read again only when one is among the devices.
        let unifiedPush = self.hasUnifiedPushDevice(notification) ? UnifiedPushMatrixPayloadBuilder.bodies(requestBody: Array(buffer: body)) : nil
        let results: [MatrixDeviceResult]
        if notification.devices.count == 1 {
            // The usual case (Synapse sends one device a request): no child task needed.
            results = [await self.deliver(notification, to: notification.devices[0], unifiedPush: unifiedPush, deadline: deadline)]
        } else {
            results = await self.deliverConcurrently(notification, unifiedPush: unifiedPush, deadline: deadline)
        }
        if let failure = results.first(where: { if case .failed = $0 { true } else { false } }), case .failed(let reason) = failure {
            context.logger.warning("notify: a provider failed; the homeserver will retry", metadata: ["reason": "\(reason)"])
            return try GatewayErrorBody(status: .badGateway, errcode: "M_UNKNOWN", message: "A push provider failed; try again later")
                .response(from: request, context: context)
        }
        let rejected = zip(notification.devices, results).filter { $0.1 == .rejected }.map(\.0.pushkey)
        self.metrics.rejected(rejected.count)
        let json = try JSONValue.object(["rejected": .array(rejected.map(JSONValue.string))]).encoded()
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: json)))
    }

    /// Whether a device of `notification` goes to a UnifiedPush app.
    private func hasUnifiedPushDevice(_ notification: MatrixNotification) -> Bool {
        notification.devices.contains { device in
            if case .found(let provider) = self.dispatcher.directory.lookup(device.appID) { provider.platform == .unifiedPush } else { false }
        }
    }

    /// Delivers to every device at once, each in a child task, in the devices' order.
    private func deliverConcurrently(
        _ notification: MatrixNotification, unifiedPush: UnifiedPushMatrixPayloadBuilder.Bodies?, deadline: ContinuousClock.Instant
    ) async -> [MatrixDeviceResult] {
        await withTaskGroup(of: (Int, MatrixDeviceResult).self) { group in
            for (index, device) in notification.devices.enumerated() {
                group.addTask { (index, await self.deliver(notification, to: device, unifiedPush: unifiedPush, deadline: deadline)) }
            }
            var results = [MatrixDeviceResult](repeating: .done, count: notification.devices.count)
            for await (index, result) in group { results[index] = result }
            return results
        }
    }

    /// The longest pushkey taken, in bytes: Synapse's limit on the pushers it stores.
    static let maximumPushkeyLength = 512

    /// Delivers to one device and says what to answer for it; `unifiedPush` is what UnifiedPush endpoints
    /// receive (nil when no device goes to a UnifiedPush app).
    func deliver(
        _ notification: MatrixNotification, to device: MatrixDevice, unifiedPush: UnifiedPushMatrixPayloadBuilder.Bodies? = nil,
        deadline: ContinuousClock.Instant
    ) async -> MatrixDeviceResult {
        guard case .found(let provider) = self.dispatcher.directory.lookup(device.appID) else {
            self.logger.info("notify: no single app matches", metadata: ["app_id": "\(device.appID)", "token": "\(Redaction.fingerprint(device.pushkey))"])
            return .rejected
        }
        guard device.pushkey.utf8.count <= Self.maximumPushkeyLength else {
            // Synapse stores no longer pushkey, so no homeserver's pusher has one; each would be kept
            // (duplicate filter, invalid-token records, a UnifiedPush endpoint's memory) at full length.
            self.logger.info("notify: pushkey too long", metadata: ["app": "\(provider.appID)", "bytes": "\(device.pushkey.utf8.count)"])
            return .rejected
        }
        if provider.platform == .unifiedPush, unifiedPush == nil {
            // A reload made the device's app a UnifiedPush app after the request's bodies were made: the
            // homeserver sends it again (rejected, its pusher would be deleted).
            return .failed(reason: "the app changed during the request")
        }
        self.metrics.dispatched(app: provider.appID)
        let options = self.apps.current[provider.appID] ?? MatrixAppOptions()
        guard
            let (message, token) = self.message(notification, device: device, platform: provider.platform, options: options, unifiedPush: unifiedPush)
        else {
            return .done
        }
        let push: PushNotification
        switch message {
        case .reject(let reason):
            self.logger.info("notify: pusher refused", metadata: ["app": "\(provider.appID)", "reason": "\(reason)"])
            return .rejected
        case .skip:
            return .done
        case .send(let push_):
            push = push_
        }
        // Clients' test pushes carry one fixed event id, the same each time: each is sent, or a second test
        // within the window would find nothing arriving while the answer said it was delivered.
        let duplicateKey = notification.eventID.flatMap { $0 == Self.clientTestEventID ? nil : $0 }.map {
            self.duplicates.key(appID: provider.appID, eventID: $0, pushkey: device.pushkey, variant: MatrixDuplicateFilter.variant(of: device, in: notification))
        }
        if let duplicateKey, await self.duplicates.wasDelivered(duplicateKey) {
            return .done
        }
        if provider.platform == .unifiedPush {
            return await self.deliverToEndpoint(
                push, bodies: unifiedPush, via: provider, pushkey: device.pushkey, duplicateKey: duplicateKey, deadline: deadline
            )
        }
        let outcome = await self.dispatcher.deliver(push, via: provider, token: token, deadline: deadline, frontEnd: MatrixFrontEnd.name)
        switch outcome {
        case .delivered:
            if let duplicateKey { await self.duplicates.recordDelivered(duplicateKey) }
            return .done
        case .invalidToken:
            return .rejected
        case .rejected(let reason):
            // Refused for a reason that is not the token's (credentials, topic, payload): the pushkey stays,
            // and the request answers 502 as Sygnal does, so the operator sees it and the homeserver retries.
            // Never recorded as delivered, so a retry is sent again. The request's own warning reports the
            // failure once; this line (one per device, so thousands for one request) is `info`, buffered.
            self.logger.info("notify: provider refused a notification", metadata: ["app": "\(provider.appID)", "reason": "\(reason)"])
            return .failed(reason: reason)
        case .retryLater(_, let reason), .credentialsRefused(let reason):
            return .failed(reason: reason)
        }
    }

    /// Delivers to a UnifiedPush endpoint: a refused message goes again in the `event_id_only` form, a
    /// temporary failure to the outbox (the answer does not wait for it), and only a gone or unusable
    /// endpoint is rejected.
    private func deliverToEndpoint(
        _ push: PushNotification, bodies: UnifiedPushMatrixPayloadBuilder.Bodies?, via provider: any PushProvider, pushkey: String,
        duplicateKey: MatrixDuplicateFilter.Key?, deadline: ContinuousClock.Instant
    ) async -> MatrixDeviceResult {
        var sent = push
        var fallbackSent = false
        var outcome = await self.dispatcher.deliver(sent, via: provider, token: pushkey, deadline: deadline, frontEnd: MatrixFrontEnd.name)
        if case .rejected = outcome, let fallback = bodies?.fallback {
            sent = PushNotification(kind: push.kind, payloadText: fallback)
            fallbackSent = true
            outcome = await self.dispatcher.deliver(sent, via: provider, token: pushkey, deadline: deadline, frontEnd: MatrixFrontEnd.name)
        }
        switch outcome {
        case .delivered:
            if let duplicateKey { await self.duplicates.recordDelivered(duplicateKey) }
            return .done
        case .invalidToken:
            return .rejected
        case .rejected(let reason):
            // The push server refused the message itself (413, say), in both forms: sending it again would
            // be refused again, and the endpoint is not at fault, so its pushkey stays (as common-proxies).
            // At info, as the other per-device refusals: a pusher chooses its push server, and a warning
            // for each of its notifications would be the pusher's to write (the outcome is counted).
            self.logger.info(
                "notify: UnifiedPush push server refused a notification",
                metadata: ["app": "\(provider.appID)", "token": "\(Redaction.fingerprint(pushkey))", "reason": "\(reason)"]
            )
            return .done
        case .retryLater(_, let reason), .credentialsRefused(let reason):
            let after: Duration? = if case .retryLater(let after, _) = outcome { after } else { nil }
            // Queued in full, with the `event_id_only` form for a push server that refuses it as too large
            // when it is tried again.
            if !fallbackSent, let reduced = bodies?.fallbackValue {
                sent.reducedPayload = reduced
            }
            do {
                try await self.dispatcher.enqueue(
                    sent, appID: provider.appID, frontEnd: MatrixFrontEnd.name, tokens: [pushkey],
                    notBefore: Date().addingTimeInterval((after ?? .seconds(1)).timeInterval)
                )
            } catch {
                // Neither delivered nor queued: the homeserver must try again.
                self.logger.error("notify: could not queue a UnifiedPush notification", metadata: ["app": "\(provider.appID)", "error": "\(error)"])
                return .failed(reason: reason)
            }
            self.logger.info(
                "notify: UnifiedPush endpoint failing, notification queued",
                metadata: ["app": "\(provider.appID)", "token": "\(Redaction.fingerprint(pushkey))", "reason": "\(reason)"]
            )
            // Queued counts as sent: a repeat from the homeserver is not queued twice.
            if let duplicateKey { await self.duplicates.recordDelivered(duplicateKey) }
            return .done
        }
    }

    /// The provider-ready notification and token for one device, or nil when the device gets nothing.
    private func message(
        _ notification: MatrixNotification, device: MatrixDevice, platform: Platform, options: MatrixAppOptions,
        unifiedPush: UnifiedPushMatrixPayloadBuilder.Bodies?
    ) -> (MatrixPayloadMessage, String)? {
        let priority: PushPriority = notification.isLowPriority ? .normal : .high
        switch platform {
        case .apns:
            var token = device.pushkey
            if options.convertDeviceTokenToHex {
                guard let bytes = Data(base64Encoded: device.pushkey), !bytes.isEmpty else {
                    return (.reject(reason: "the pushkey is not base64"), token)
                }
                token = Hex.lowercase(bytes)
            }
            let payload = APNsMatrixPayloadBuilder.payload(for: notification, device: device, sendBadgeCounts: options.sendBadgeCounts)
            return (MatrixPayloadMessage(payload, priority: priority, apnsPushType: options.apnsPushType), token)
        case .fcm:
            var payload = FCMMatrixPayloadBuilder.payload(for: notification, device: device, sendBadgeCounts: options.sendBadgeCounts)
            if !options.fcmOptions.isEmpty, case .send(let message) = payload {
                payload = .send(JSONValue.object(options.fcmOptions).merging(message))
            }
            return (MatrixPayloadMessage(payload, priority: priority), device.pushkey)
        case .webPush:
            switch WebPushMatrixPayloadBuilder.message(for: notification, device: device) {
            case nil: return nil
            case .failure(let refusal)?: return (.reject(reason: refusal.reason), device.pushkey)
            case .success(let message)?:
                var push = PushNotification(
                    kind: .alert, priority: priority, payload: message.payload, collapseID: message.topic, webPushUrgency: message.urgency
                )
                push.reducedPayload = message.reducedPayload
                return (.send(push), message.subscription)
            }
        case .unifiedPush:
            // The endpoint URL is the token, as the homeserver sent it (never re-encoded: query strings matter).
            guard let unifiedPush else { return (.reject(reason: "no UnifiedPush body"), device.pushkey) }
            return (.send(PushNotification(kind: .alert, payloadText: unifiedPush.preferred)), device.pushkey)
        case .webhook, .hms:
            return (.reject(reason: "the app is not an APNs, FCM, Web Push or UnifiedPush app"), device.pushkey)
        }
    }

}

/// A payload decision with the notification built from it.
enum MatrixPayloadMessage {
    case send(PushNotification)
    case skip
    case reject(reason: String)

    init(_ payload: MatrixPayload, priority: PushPriority, apnsPushType: String? = nil) {
        switch payload {
        case .send(let body): self = .send(PushNotification(kind: .alert, priority: priority, payload: body, apnsPushType: apnsPushType))
        case .skip: self = .skip
        case .reject(let reason): self = .reject(reason: reason)
        }
    }
}
