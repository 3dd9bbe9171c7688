public import Foundation

/// One figure a front end shows on the operator console's overview (``FrontEnd/figures``): a count (every
/// instance's on the store, ``ConsoleCounts``), a time, or a short text. Never a token or a notification's
/// content.
public struct FrontEndFigure: Sendable, Equatable {
    /// What the figure holds.
    public enum Value: Sendable, Equatable {
        /// A count.
        case count(Int)
        /// A moment; nil when it has not happened yet.
        case time(Date?)
        /// A short text (a state such as `reachable`).
        case text(String)
    }

    /// The figure's key in the console's JSON (snake case, unique within the front end).
    public var key: String
    /// The figure's name on the page.
    public var label: String
    /// The figure.
    public var value: Value

    /// Creates a figure.
    public init(key: String, label: String, value: Value) {
        self.key = key
        self.label = label
        self.value = value
    }
}
