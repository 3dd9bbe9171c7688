/// How the Nextcloud server answered the request to stop pushing to this device.
public enum NextcloudServerUnregistration: Sendable, Hashable {
    /// 202: the server had a registration for this app password and deleted it; the device should now
    /// also unregister at the proxy.
    case deleted
    /// 200: nothing was registered for this app password.
    case notRegistered
}
