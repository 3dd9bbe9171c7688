public import PushgateCore

/// Finds the delivery back end of an app id the way Sygnal does: an exact id wins; otherwise the one
/// configured glob that matches; none or several matching globs mean the app is unknown or ambiguous.
/// An app configured as `"*"` alone takes what no other app claims (README, UnifiedPush): matched with
/// the other globs, it would make every glob's ids ambiguous, and the homeserver would delete their pushers.
public struct ProviderDirectory: Sendable {
    /// What a lookup found.
    public enum Lookup: Sendable {
        /// The app's back end.
        case found(any PushProvider)
        /// No configured app matches.
        case unknown
        /// Several globs match and none is exact.
        case ambiguous
    }

    private let exact: [String: any PushProvider]
    private let globs: [(pattern: AppPattern, provider: any PushProvider)]
    /// The app configured as `"*"`, if any: the last resort.
    private let catchAll: (any PushProvider)?
    /// Every provider, in configuration order.
    public let providers: [any PushProvider]
    /// Each provider's identity by its app id, for ``holds(_:)``.
    private let identities: [String: ObjectIdentifier]

    /// Creates a directory of providers, each under its `appID`.
    public init(_ providers: [any PushProvider]) {
        self.providers = providers
        var exact: [String: any PushProvider] = [:]
        var globs: [(AppPattern, any PushProvider)] = []
        var catchAll: (any PushProvider)?
        for provider in providers {
            let pattern = AppPattern(provider.appID)
            if provider.appID == Self.catchAllPattern {
                catchAll = provider
            } else if pattern.isGlob {
                globs.append((pattern, provider))
            } else {
                exact[provider.appID] = provider
            }
        }
        self.exact = exact
        self.globs = globs
        self.catchAll = catchAll
        self.identities = Dictionary(providers.map { ($0.appID, ObjectIdentifier($0)) }, uniquingKeysWith: { first, _ in first })
    }

    /// Whether `provider` is the back end this directory holds for its app id: false for one a reload
    /// retired, whose outcomes say nothing of the app's new back end.
    public func holds(_ provider: any PushProvider) -> Bool {
        self.identities[provider.appID] == ObjectIdentifier(provider)
    }

    /// The back end for `appID`.
    public func lookup(_ appID: String) -> Lookup {
        if let provider = self.exact[appID] { return .found(provider) }
        var found: (any PushProvider)?
        for (pattern, provider) in self.globs where pattern.matches(appID) {
            if found != nil { return .ambiguous }
            found = provider
        }
        return (found ?? self.catchAll).map(Lookup.found) ?? .unknown
    }

    /// The app id that takes every id no other app claims.
    public static let catchAllPattern = "*"
}
