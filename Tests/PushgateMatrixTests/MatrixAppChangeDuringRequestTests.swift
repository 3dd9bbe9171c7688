import CoreMetrics
import Foundation
import PushgateCore
import PushgateDelivery
@testable import PushgateMatrix
import PushgateStoreSQLite
import Testing

@Suite("Matrix notify: an app that changes during a request")
struct MatrixAppChangeDuringRequestTests {
    /// A reload can make a device's app a UnifiedPush app after the request's UnifiedPush bodies were made
    /// (none, as no device was one's then): the device fails for now, and the homeserver sends the request
    /// again; its pushkey is not rejected, which would delete its pusher.
    @Test func aDeviceWhoseAppBecameUnifiedPushIsTriedAgainNotRejected() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("matrix-\(UUID().uuidString).sqlite").path
        let store = try await SQLiteStore.open(path: path, logger: MatrixNotifyRouteTests.quiet)
        let unifiedPush = RecordingProvider(appID: "*", platform: .unifiedPush)
        let dispatcher = Dispatcher(
            directory: ProviderDirectory([unifiedPush]), store: store, metrics: DeliveryMetrics(factory: NOOPMetricsHandler.instance),
            logger: MatrixNotifyRouteTests.quiet
        )
        let handler = MatrixNotifyHandler(
            dispatcher: dispatcher, apps: [:], store: store, metrics: MatrixMetrics(factory: NOOPMetricsHandler.instance), logger: MatrixNotifyRouteTests.quiet
        )
        let notification = try MatrixRequestParser.parse(Array(MatrixNotifyRouteTests.request(devices: #"{"app_id":"chat.example","pushkey":"https://up.example/e1"}"#).utf8))
        let result = await handler.deliver(notification, to: notification.devices[0], unifiedPush: nil, deadline: .now + .seconds(5))
        #expect(result == .failed(reason: "the app changed during the request"))
        #expect(unifiedPush.deliveries.isEmpty)
    }
}
