extension NextcloudSettings {
    /// These settings as a running gateway takes them on reload: all of them but the path prefix, which
    /// stays `running`'s (its routes are fixed at start).
    public func reloaded(over running: NextcloudSettings) -> NextcloudSettings {
        var taken = self
        taken.pathPrefix = running.pathPrefix
        return taken
    }
}
