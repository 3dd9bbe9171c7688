import Logging
import PushgateCore
import PushgateDelivery
import PushgateStatusWire
import PushgateStore

/// Hears how queued Status notifications ended: a token the provider calls invalid drops the
/// registration it came from (status-go never does), unless the device registered again since.
struct StatusOutcomeObserver: DeliveryOutcomeObserver {
    let frontEnd = StatusFrontEnd.name
    let store: any StatusServerStore
    let metrics: StatusMetrics
    let logger: Logger

    /// The report context of a queued notification: key hash, installation id, registration version.
    static func context(_ accepted: StatusAccepted) -> JSONValue {
        ["h": .string(Hex.lowercase(accepted.keyHash)), "i": .string(accepted.installationID), "v": .string(String(accepted.version))]
    }

    func deliveryEnded(_ report: DeliveryReport, appID: String, token: String, outcome: DeliveryOutcome) async {
        self.metrics.deliveryEnded(outcome)
        guard case .invalidToken = outcome else { return }
        guard let hashText = report.context["h"]?.stringValue, let keyHash = Hex.decode(hashText),
            let installationID = report.context["i"]?.stringValue, let versionText = report.context["v"]?.stringValue,
            let version = UInt64(versionText)
        else { return }
        do {
            if try await self.store.dropStatusRegistration(publicKeyHash: keyHash, installationID: installationID, version: version) {
                self.metrics.registrationDropped()
                self.logger.info("status: dropped a registration whose device token the provider refused", metadata: ["app": "\(appID)"])
            }
        } catch {
            self.logger.errorUnlessStopping("status: cannot drop a registration with a dead token", error: error)
        }
    }
}
