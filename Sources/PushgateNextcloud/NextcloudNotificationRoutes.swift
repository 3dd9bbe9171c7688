import Foundation
import Hummingbird
public import Logging
import NIOCore
public import PushgateConfig
import PushgateCore
public import PushgateDelivery
public import PushgateHTTP
public import PushgateStore

/// `POST /notifications` of the Nextcloud push proxy protocol: a Nextcloud server's batch of encrypted,
/// signed subjects, one per device.
///
/// Per entry: an unknown `deviceIdentifier` is listed in `unknown`; a `pushTokenHash` that is not the
/// SHA-512 of the stored token, a signature the stored user key does not verify, or an entry that cannot
/// be read counts as failed; the rest go to their provider at once. What a provider refuses counts as
/// failed, a token it reports invalid removes the device and lists it in `unknown`, and what it cannot
/// take now (or what the batch's deadline leaves undelivered) is queued in the outbox, so the answer
/// `{"failed": N, "unknown": [...]}` comes only after every entry is delivered, queued or counted.
///
/// Over the fair-use limit the whole batch is refused with 429 and a body that has neither `failed` nor
/// `unknown`, which is what makes the server record the limit.
public struct NextcloudNotificationRoutes: Sendable {
    private let store: any PushStore
    private let dispatcher: Dispatcher
    private let settings: NextcloudSettings
    private let rateLimiter: NextcloudRateLimiter?
    private let builder: NextcloudPushBuilder
    private let signatures = NextcloudSubjectSignature()
    private let logger: Logger
    private let figures: NextcloudFigures

    /// Creates the route; `figures` counts batches for the operator console.
    public init(store: any PushStore, dispatcher: Dispatcher, settings: NextcloudSettings, logger: Logger, figures: NextcloudFigures = NextcloudFigures()) {
        self.figures = figures
        self.store = store
        self.dispatcher = dispatcher
        self.settings = settings
        self.rateLimiter = settings.rateLimit.map { NextcloudRateLimiter(limit: $0, store: store) }
        self.builder = NextcloudPushBuilder(alertText: settings.alertText)
        self.logger = logger
    }

    /// The route, under the configured prefix.
    public var routes: [GatewayRoute] {
        [
            GatewayRoute(.post, self.settings.pathPrefix + "/notifications", maximumBodySize: self.settings.maxBatchSize * Self.bytesPerEntry) {
                request, context in try await self.notify(request, context: context)
            }
        ]
    }

    func notify(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        guard let body = try await request.readableBody(upTo: context.maxUploadSize) else {
            return NextcloudErrorResponse.response(.badRequest, "the request body could not be read")
        }
        let isJSON = request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true
        let batch: NextcloudNotificationBatch
        do {
            batch = try await ComputePool.run(readingBytes: body.readableBytes) { () throws(NextcloudNotificationBatch.Unreadable) in
                try NextcloudNotificationBatch(body: String(buffer: body), isJSON: isJSON)
            }
        } catch {
            return NextcloudErrorResponse.response(.badRequest, error.reason)
        }
        // However many entries a body within the limit holds, all are handled: Nextcloud's server never
        // sends a refused batch again, and parsing it cost what it costs.
        self.figures.add(.batches)
        if let limiter = self.rateLimiter {
            let sender = self.sender(request, context: context)
            do {
                guard try await limiter.admit(entries: batch.entries.count, sender: sender) else {
                    self.figures.add(.rateLimited)
                    context.logger.notice("nextcloud: a server is over its fair-use limit", metadata: ["entries": "\(batch.entries.count)"])
                    // Plain text: a body with `failed` and `unknown` would hide the limit from the server.
                    return Response(
                        status: .tooManyRequests, headers: [.contentType: "text/plain; charset=utf-8"],
                        body: .init(byteBuffer: ByteBuffer(string: "Rate limit reached for this server\n"))
                    )
                }
            } catch {
                return NextcloudErrorResponse.storeUnavailable
            }
        }
        let result: NextcloudBatchResult
        do {
            result = try await self.process(batch.entries)
        } catch {
            context.logger.error("nextcloud: could not read devices", metadata: ["error": "\(error)"])
            return NextcloudErrorResponse.storeUnavailable
        }
        context.logger.info(
            "nextcloud: batch handled",
            metadata: ["entries": "\(batch.entries.count)", "failed": "\(result.failed)", "unknown": "\(result.unknown.count)"]
        )
        return result.response
    }

    /// The body room each entry of a batch is allowed: a real entry is about 1.2 KB once form-encoded.
    static let bytesPerEntry = 4096

    /// How many of one batch's entries are with providers at once.
    static let deliveriesInFlightPerBatch = 32

    /// Handles every entry of a batch: checks, delivery, queueing.
    /// - Throws: a store error when the devices could not be read (nothing was sent then).
    func process(_ entries: [Result<NextcloudNotificationEntry, NextcloudNotificationEntry.Malformed>]) async throws -> NextcloudBatchResult {
        let valid = entries.compactMap { try? $0.get() }
        let devices = try await self.store.devices(namespace: NextcloudDeviceRoutes.namespace, deviceIDs: valid.map(\.deviceIdentifier))
        let byID = Dictionary(devices.map { ($0.deviceID, $0) }, uniquingKeysWith: { first, _ in first })
        var result = NextcloudBatchResult()
        result.failed = entries.count - valid.count
        var plans: [NextcloudDeliveryPlan] = []
        plans.reserveCapacity(valid.count)
        // An RSA signature check per entry: off the event loop.
        await ComputePool.run {
            for entry in valid {
                guard let device = byID[entry.deviceIdentifier] else {
                    result.addUnknown(entry.deviceIdentifier)
                    continue
                }
                switch self.plan(entry, device: device) {
                case .success(let plan): plans.append(plan)
                case .failure(let refusal):
                    result.failed += 1
                    self.logger.info("nextcloud: entry refused", metadata: ["reason": "\(refusal.reason)", "token": "\(Redaction.fingerprint(device.pushToken))"])
                }
            }
        }
        let deadline = ContinuousClock.now + self.settings.deliveryTimeout
        // A sliding window of deliveries, so one large batch does not take every in-flight slot of an app.
        // Each answer names its plan by index: a plan (a notification, a provider, strings) is not copied
        // through the task group.
        let verdicts = await withTaskGroup(of: (Int, DeliveryOutcome).self) { group in
            var verdicts: [(Int, DeliveryOutcome)] = []
            verdicts.reserveCapacity(plans.count)
            for index in plans.indices {
                if index >= Self.deliveriesInFlightPerBatch, let verdict = await group.next() { verdicts.append(verdict) }
                group.addTask { [plans] in
                    let plan = plans[index]
                    return (index, await self.dispatcher.deliver(plan.notification, via: plan.provider, token: plan.token, deadline: deadline, frontEnd: NextcloudFrontEnd.name))
                }
            }
            for await verdict in group { verdicts.append(verdict) }
            return verdicts
        }
        // Retries are queued together, one write for each distinct pause (usually one): queued one by one,
        // each waiting for its own commit, a batch that met a full app took seconds to answer.
        var retries: [Double: [Dispatcher.Queued]] = [:]
        for (index, outcome) in verdicts {
            let plan = plans[index]
            switch outcome {
            case .delivered:
                break
            case .invalidToken where outcome.tokenIsGone:
                // The dispatcher removed registrations with this exact token; a Talk iOS pair is stored
                // whole, so remove the device by its identifier too before reporting it.
                _ = try? await self.store.deleteDevice(namespace: NextcloudDeviceRoutes.namespace, deviceID: plan.deviceID)
                result.addUnknown(plan.deviceID)
            case .invalidToken:
                // Another app's token (another topic, another sender): what a misconfigured app says of
                // every device. Listed as unknown, each would be deleted by its server, and only the phone
                // could register it again; counted as failed, the device stays.
                result.failed += 1
            case .retryLater where plan.isCall, .credentialsRefused where plan.isCall:
                // A call is not queued: by the time the outbox tried again it would be long over.
                result.failed += 1
            case .retryLater, .credentialsRefused:
                let after: Duration? = if case .retryLater(let after, _) = outcome { after } else { nil }
                let retry = Dispatcher.Queued(
                    plan.notification, appID: plan.provider.appID, frontEnd: NextcloudFrontEnd.name, tokens: [plan.token]
                )
                retries[after.map(Self.seconds) ?? 0, default: []].append(retry)
            case .rejected:
                result.failed += 1
            }
        }
        let now = Date()
        for (pause, queued) in retries.sorted(by: { $0.key < $1.key }) {
            do {
                try await self.dispatcher.enqueue(queued, notBefore: now + pause)
                result.queued += queued.count
            } catch {
                result.failed += queued.count
                self.logger.error("nextcloud: could not queue notifications", metadata: ["count": "\(queued.count)", "error": "\(error)"])
            }
        }
        return result
    }

    /// Where one entry goes, after its checks.
    private func plan(_ entry: NextcloudNotificationEntry, device: DeviceRegistration) -> Result<NextcloudDeliveryPlan, NextcloudEntryRefusal> {
        guard NextcloudPushTokenHash.of(device.pushToken) == entry.pushTokenHash else {
            return .failure(.init(reason: "pushTokenHash does not match the registered token"))
        }
        guard let key = device.publicKey, self.signatures.isValid(signature: entry.signature, subject: entry.subject, publicKeyPEM: key) else {
            return .failure(.init(reason: "the signature does not verify with the user's key"))
        }
        // Split by byte: the `Character` split runs grapheme breaking over every token.
        let tokens = device.pushToken.utf8.split(separator: UInt8(ascii: " ")).map { String(Substring($0)) }
        guard let firstToken = tokens.first else { return .failure(.init(reason: "the device has no token")) }
        var appID = device.appID
        var token = firstToken
        var viaPushKit = false
        if entry.kind == .voip, tokens.count == 2, let voipApp = device.attributes["voip_app"] {
            appID = voipApp
            token = tokens[1]
            viaPushKit = true
        }
        guard case .found(let provider) = self.dispatcher.directory.lookup(appID) else {
            return .failure(.init(reason: "the device's app \(appID) is not configured"))
        }
        guard let notification = self.builder.notification(for: entry, platform: provider.platform, viaPushKit: viaPushKit) else {
            return .failure(.init(reason: "the device's app \(appID) is not an APNs or FCM app"))
        }
        return .success(
            NextcloudDeliveryPlan(deviceID: device.deviceID, provider: provider, token: token, notification: notification, isCall: entry.kind == .voip)
        )
    }

    /// The sending server: its subscription key when it sends one, else its address. Behind a proxy
    /// (`x_forwarded_for`) that is the last `X-Forwarded-For` entry, the one the proxy added: the entries
    /// before it are the client's own word, and a sender naming another server there would spend that
    /// server's allowance (or escape its own).
    private func sender(_ request: Request, context: GatewayRequestContext) -> String {
        if let key = request.headers[.init("X-Nextcloud-Subscription-Key")!], !key.isEmpty { return "key:" + key }
        if self.settings.rateLimit?.useForwardedFor == true, let last = ForwardedFor.lastEntry(request.headers[.init("X-Forwarded-For")!]) {
            return "address:" + last
        }
        return "address:" + (context.remoteAddress?.ipAddress ?? "unknown")
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        TimeInterval(duration.wholeMilliseconds) / 1000
    }
}

/// One checked entry, ready for its provider.
struct NextcloudDeliveryPlan: Sendable {
    let deviceID: String
    let provider: any PushProvider
    let token: String
    let notification: PushNotification
    /// A call (`type: voip`): never queued for later.
    let isCall: Bool
}

/// Why an entry is counted as failed before delivery.
struct NextcloudEntryRefusal: Error {
    let reason: String
}
