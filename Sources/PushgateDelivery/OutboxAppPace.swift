import Synchronization

/// Per app, how long the outbox worker's rounds of it take, and whether one of them is out past its
/// patience: what decides whether a lane waits for an app's deliveries.
///
/// A lane waits for an app's part of a round for at most four times what that app's rounds usually take
/// (between ``floor`` and ``ceiling``; ``floor`` before any finished), and less beside a faster part or
/// when new work arrives (``OutboxRoundWait``). A part still out then is detached: it goes on by itself (the app's in-flight
/// cap bounds how many deliveries it holds) and the lane moves on. While an app has a detached part out,
/// lanes do not wait for its parts at all, so a provider that hangs costs every other app one short
/// wait, once.
final class OutboxAppPace: Sendable {
    /// The default shortest patience: well above a healthy provider's round.
    static let defaultFloor: Duration = .milliseconds(500)
    /// The default longest patience.
    static let defaultCeiling: Duration = .seconds(5)

    /// The shortest patience, which is also the patience before an app's first round has finished.
    let floor: Duration
    /// The longest patience (never below ``floor``).
    let ceiling: Duration

    private struct Pace {
        /// A moving average of the app's rounds that finished within their patience.
        var typical: Duration?
        /// The app's parts out past their patience.
        var detached = 0
    }

    private let apps = Mutex<[String: Pace]>([:])

    /// - Parameter floor: the shortest patience (and the first); the longest is the greater of it and
    ///   ``defaultCeiling``.
    init(floor: Duration = OutboxAppPace.defaultFloor) {
        self.floor = floor
        self.ceiling = max(floor, Self.defaultCeiling)
    }

    /// How long a lane may wait for `appID`'s part of a round; nil when it should not wait at all (a part
    /// of it is out past its patience already).
    func patience(_ appID: String) -> Duration? {
        self.apps.withLock { apps in
            guard let pace = apps[appID] else { return self.floor }
            guard pace.detached == 0 else { return nil }
            guard let typical = pace.typical else { return self.floor }
            return min(self.ceiling, max(self.floor, typical * 4))
        }
    }

    /// What `appID`'s rounds usually take (``floor`` before one has finished).
    func usual(_ appID: String) -> Duration {
        self.apps.withLock { $0[appID]?.typical } ?? self.floor
    }

    /// A part of `appID` went on past its patience.
    func detached(_ appID: String) {
        self.apps.withLock { $0[appID, default: Pace()].detached += 1 }
    }

    /// A part of `appID` finished after `duration`; `wasDetached` when it had been detached.
    func finished(_ appID: String, after duration: Duration, wasDetached: Bool) {
        self.apps.withLock { apps in
            var pace = apps[appID, default: Pace()]
            if wasDetached {
                pace.detached -= 1
            } else {
                pace.typical = pace.typical.map { $0 * 0.75 + duration * 0.25 } ?? duration
            }
            apps[appID] = pace
        }
    }
}
