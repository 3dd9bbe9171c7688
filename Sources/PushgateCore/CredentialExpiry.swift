public import Foundation

/// How close a dated credential is to its end, in the steps the gateway warns at: 30, 7 and 1 days
/// before it, and once it has passed.
public enum CredentialExpiry: Sendable, Comparable {
    /// More than 30 days left.
    case valid
    /// At most `days` (30, 7 or 1) days left.
    case within(days: Int)
    /// Expired: the provider refuses it.
    case expired

    /// The days before the end at which a warning is due, widest first.
    public static let warningDays = [30, 7, 1]

    /// Where `notAfter` stands at `now`.
    public init(notAfter: Date, now: Date) {
        let left = notAfter.timeIntervalSince(now)
        if left <= 0 {
            self = .expired
            return
        }
        let step = Self.warningDays.last { left <= Double($0) * 86_400 }
        self = step.map { .within(days: $0) } ?? .valid
    }

    /// Whether the log says something at this step.
    public var needsWarning: Bool { self != .valid }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }

    private var rank: Int {
        switch self {
        case .valid: 0
        case .within(let days): 100 - days
        case .expired: 1_000
        }
    }
}
