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
        ["h": .string(StatusServerIdentity.hex(accepted.keyHash)), "i": .string(accepted.installationID), "v": .string(String(accepted.version))]
    }

    func deliveryEnded(_ report: DeliveryReport, appID: String, token: String, outcome: DeliveryOutcome) async {
        self.metrics.deliveryEnded(outcome)
        guard case .invalidToken = outcome else { return }
        guard let hashText = report.context["h"]?.stringValue, let keyHash = Self.bytes(hex: hashText),
            let installationID = report.context["i"]?.stringValue, let versionText = report.context["v"]?.stringValue,
            let version = UInt64(versionText)
        else { return }
        do {
            if try await self.store.dropStatusRegistration(publicKeyHash: keyHash, installationID: installationID, version: version) {
                self.metrics.registrationDropped()
                self.logger.info("status: dropped a registration whose device token the provider refused", metadata: ["app": "\(appID)"])
            }
        } catch {
            self.logger.error("status: cannot drop a registration with a dead token", metadata: ["error": "\(error)"])
        }
    }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            result.append(high << 4 | low)
            index += 2
        }
        return result
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
