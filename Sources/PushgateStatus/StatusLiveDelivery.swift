import PushgateCore
import PushgateStatusWire

/// The Status server's delivery as the last configuration reload left it: the notification texts, the
/// payload style, the iOS and Android apps and the APNs apps by topic change live; what a push request
/// being handled read stays its own.
struct StatusLiveDelivery: StatusNotificationSink {
    let current: LiveValue<StatusDelivery>

    func deliver(_ accepted: [StatusAccepted]) async throws {
        try await self.current.current.deliver(accepted)
    }

    func serves(_ registration: Protobuf_PushNotificationRegistration) -> Bool {
        self.current.current.serves(registration)
    }
}
