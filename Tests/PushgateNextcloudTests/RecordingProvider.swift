import Foundation
import PushgateCore
import Synchronization

/// A back end for route tests: it records each push it is handed and answers by the token's first
/// characters (`dead` invalid, `cafe` another topic's token, `busy` retry later, `once` retry later the first time and delivered after,
/// `nope` rejected, anything else delivered), as the sandbox's failure tokens do.
final class RecordingProvider: PushProvider {
    struct Push: Sendable {
        let token: String
        let notification: PushNotification
    }

    let appID: String
    let platform: Platform
    private let pushes = Mutex<[Push]>([])

    init(appID: String, platform: Platform) {
        self.appID = appID
        self.platform = platform
    }

    func deliver(_ notification: PushNotification, to token: String, deadline: ContinuousClock.Instant) async -> DeliveryOutcome {
        let earlier = self.pushes.withLock { pushes in
            defer { pushes.append(Push(token: token, notification: notification)) }
            return pushes.contains { $0.token == token }
        }
        switch token.prefix(4) {
        case "once": return earlier ? .delivered : .retryLater(after: nil, reason: "ServiceUnavailable")
        case "dead": return .invalidToken(reason: "Unregistered")
        case "cafe": return .invalidToken(reason: "DeviceTokenNotForTopic")
        case "busy": return .retryLater(after: .seconds(30), reason: "TooManyRequests")
        case "nope": return .rejected(reason: "PayloadTooLarge")
        default: return .delivered
        }
    }

    var received: [Push] { self.pushes.withLock { $0 } }
}
