extension StatusSettings {
    /// These settings as a running gateway takes them on reload: the apps, payload style and texts from
    /// these; what is fixed at start (the Waku node, identity, polling, backfill, gorush forwarding) from
    /// `running`.
    public func reloaded(over running: StatusSettings) -> StatusSettings {
        var taken = running
        taken.iosApp = self.iosApp
        taken.androidApp = self.androidApp
        taken.payloadStyle = self.payloadStyle
        taken.texts = self.texts
        return taken
    }
}
