public import Foundation

/// One gateway instance as its heartbeat last recorded it (``InstanceStore``).
public struct InstanceRecord: Sendable, Hashable {
    /// The instance's name (host name and process id).
    public var name: String
    /// When the instance last wrote its heartbeat.
    public var lastSeen: Date
    /// The instance's Pushgate version.
    public var version: String
    /// When the instance started.
    public var started: Date

    /// Creates a record.
    public init(name: String, lastSeen: Date, version: String, started: Date) {
        self.name = name
        self.lastSeen = lastSeen
        self.version = version
        self.started = started
    }
}
