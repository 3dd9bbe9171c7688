extension GorushSettings {
    /// These settings as a running gateway takes them on reload: its callers' tokens, default apps, sync,
    /// sync timeout and notification limit from these; what is fixed at start (paths, gRPC, the feedback
    /// webhook, hiding tokens and messages) from `running`.
    public func reloaded(over running: GorushSettings) -> GorushSettings {
        var taken = running
        taken.iosApp = self.iosApp
        taken.androidApp = self.androidApp
        taken.huaweiApp = self.huaweiApp
        taken.maxNotification = self.maxNotification
        taken.sync = self.sync
        taken.syncTimeout = self.syncTimeout
        taken.authTokens = self.authTokens
        taken.allowUnauthenticated = self.allowUnauthenticated
        return taken
    }
}
