import Logging
import PushgateConfig
import PushgateCore
import PushgateDelivery
import PushgateGorush
import PushgateStatusWire

/// Delivers accepted Status notifications: builds the gorush request status-go would send and either
/// queues it whole for the configured gorush (`gorush_url`), or turns it into provider requests exactly
/// as gorush would and queues one per device through the outbox, with a report so that a dead token
/// drops its registration.
struct StatusDelivery: StatusNotificationSink {
    /// The app id the gorush-forwarding webhook back end is registered under.
    static let gorushAppID = "status.gorush"

    let settings: StatusSettings
    let dispatcher: Dispatcher
    let logger: Logger
    /// APNs apps by topic (a registration's `apn_topic` equal to one picks it).
    let apnsAppsByTopic: [String: String]

    init(settings: StatusSettings, apps: [AppSettings], dispatcher: Dispatcher, logger: Logger) {
        self.settings = settings
        self.dispatcher = dispatcher
        self.logger = logger
        var byTopic: [String: String] = [:]
        for app in apps where app.kind == .apns {
            if let topic = try? app.options.string("topic"), !topic.isEmpty, byTopic[topic] == nil { byTopic[topic] = app.id }
        }
        self.apnsAppsByTopic = byTopic
    }

    /// Queues the notifications. - Throws: when the outbox cannot take them (nothing was queued).
    func deliver(_ accepted: [StatusAccepted]) async throws {
        guard !accepted.isEmpty else { return }
        let request = StatusGorushRequest(style: self.settings.payloadStyle, texts: self.settings.texts)
        if self.settings.gorushURL != nil {
            let body = request.body(accepted.map(\.item))
            let notification = PushNotification(kind: .background, priority: .high, payload: .string(String(decoding: body, as: UTF8.self)))
            try await self.dispatcher.enqueue([Dispatcher.Queued(notification, appID: Self.gorushAppID, frontEnd: StatusFrontEnd.name, tokens: ["gorush"])])
            return
        }
        var groups: [Dispatcher.Queued] = []
        for entry in accepted {
            let devices: [GorushTranslation.DeviceNotification]
            do {
                devices = try GorushTranslation.deviceNotifications(body: request.body([entry.item]))
            } catch {
                self.logger.warning("status: a notification cannot be built", metadata: ["reason": "\(error)"])
                continue
            }
            for device in devices {
                guard let appID = self.app(platform: device.platform, apnTopic: entry.item.registration.apnTopic) else {
                    self.logger.debug("status: no app for the registration's token type; not delivered")
                    continue
                }
                let report = DeliveryReport(frontEnd: StatusFrontEnd.name, context: StatusOutcomeObserver.context(entry))
                groups.append(Dispatcher.Queued(device.notification, appID: appID, frontEnd: StatusFrontEnd.name, tokens: [device.token], report: report))
            }
        }
        guard !groups.isEmpty else { return }
        try await self.dispatcher.enqueue(groups)
    }

    /// Whether a registration's notifications go anywhere: to the configured gorush, else to the app for
    /// its token type (and APNs topic).
    func serves(_ registration: Protobuf_PushNotificationRegistration) -> Bool {
        Self.serves(registration, settings: self.settings, apnsAppsByTopic: self.apnsAppsByTopic)
    }

    /// ``serves(_:)`` for `settings` and the APNs apps by topic.
    static func serves(_ registration: Protobuf_PushNotificationRegistration, settings: StatusSettings, apnsAppsByTopic: [String: String]) -> Bool {
        if settings.gorushURL != nil { return true }
        switch registration.tokenType {
        case .apnToken: return Self.app(platform: 1, apnTopic: registration.apnTopic, settings: settings, apnsAppsByTopic: apnsAppsByTopic) != nil
        case .firebaseToken: return Self.app(platform: 2, apnTopic: registration.apnTopic, settings: settings, apnsAppsByTopic: apnsAppsByTopic) != nil
        default: return false
        }
    }

    /// The app for gorush's platform number: APNs by `apn_topic`, else `ios_app`; FCM `android_app`.
    func app(platform: Int, apnTopic: String) -> String? {
        Self.app(platform: platform, apnTopic: apnTopic, settings: self.settings, apnsAppsByTopic: self.apnsAppsByTopic)
    }

    private static func app(platform: Int, apnTopic: String, settings: StatusSettings, apnsAppsByTopic: [String: String]) -> String? {
        switch platform {
        case 1: apnsAppsByTopic[apnTopic] ?? settings.iosApp
        case 2: settings.androidApp
        default: nil
        }
    }
}

/// One accepted notification with the registration row it goes to.
struct StatusAccepted: Sendable {
    let item: StatusGorushRequest.Item
    let keyHash: [UInt8]
    let installationID: String
    let version: UInt64
}
