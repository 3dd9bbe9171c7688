public import Foundation

/// A device known to a front end: which app delivers to it, its provider token, and the key that proves
/// who may change or push to it.
public struct DeviceRegistration: Sendable, Equatable {
    /// The front end that owns the registration (`nextcloud`, `gorush`, …); identifiers are unique within it.
    public var namespace: String
    /// The front end's identifier for the device (for Nextcloud, the `deviceIdentifier`).
    public var deviceID: String
    /// The configured app that delivers to this device.
    public var appID: String
    /// The provider token (APNs device token, FCM registration token, Web Push subscription JSON).
    public var pushToken: String
    /// The public key that authorises changes and pushes, when the protocol has one.
    public var publicKey: String?
    /// Protocol-specific details (for example a VoIP app id), stored as an opaque document.
    public var attributes: [String: String]
    /// When the registration was first stored.
    public var createdAt: Date
    /// When the registration was last changed.
    public var updatedAt: Date

    /// Creates a registration.
    public init(
        namespace: String,
        deviceID: String,
        appID: String,
        pushToken: String,
        publicKey: String? = nil,
        attributes: [String: String] = [:],
        createdAt: Date,
        updatedAt: Date
    ) {
        self.namespace = namespace
        self.deviceID = deviceID
        self.appID = appID
        self.pushToken = pushToken
        self.publicKey = publicKey
        self.attributes = attributes
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

extension Array where Element == DeviceRegistration {
    /// The registrations with the later one kept where two share a namespace and device id, in first-seen
    /// order (one multi-row upsert may not touch a row twice).
    package func keepingLastPerDevice() -> [DeviceRegistration] {
        var position: [String: Int] = [:]
        var kept: [DeviceRegistration] = []
        for device in self {
            let key = device.namespace + "\u{0}" + device.deviceID
            if let index = position[key] {
                kept[index] = device
            } else {
                position[key] = kept.count
                kept.append(device)
            }
        }
        return kept
    }
}
