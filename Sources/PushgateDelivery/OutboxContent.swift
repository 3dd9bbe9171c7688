import PushgateCore

/// What an outbox entry delivers: the notification and the front end's report request. All the tokens of
/// one notification share one instance, so a queue of entries holds each notification once rather than a
/// copy per token.
final class OutboxContent: Sendable {
    let notification: PushNotification
    let report: DeliveryReport?

    init(notification: PushNotification, report: DeliveryReport?) {
        self.notification = notification
        self.report = report
    }
}
