public import Logging

extension Logger {
    /// Logs a failed call of a background task (a store call, say): a warning, unless the task is stopping
    /// (a graceful shutdown cancels it, and the call in flight ends with a `CancellationError`), which is
    /// nothing wrong and is logged at debug level.
    /// - Parameters:
    ///   - message: what could not be done.
    ///   - error: why; logged as the `error` field.
    ///   - metadata: further fields.
    public func warningUnlessStopping(_ message: @autoclosure () -> Logger.Message, error: any Error, metadata: Logger.Metadata = [:]) {
        self.log(unlessStopping: .warning, message(), error: error, metadata: metadata)
    }

    /// Logs a failed call that cost what it was for (a message not answered, a registration not saved): an
    /// error, unless the task is stopping, when it is logged at debug level as in
    /// ``warningUnlessStopping(_:error:metadata:)``.
    /// - Parameters:
    ///   - message: what could not be done.
    ///   - error: why; logged as the `error` field.
    ///   - metadata: further fields.
    public func errorUnlessStopping(_ message: @autoclosure () -> Logger.Message, error: any Error, metadata: Logger.Metadata = [:]) {
        self.log(unlessStopping: .error, message(), error: error, metadata: metadata)
    }

    private func log(unlessStopping level: Logger.Level, _ message: @autoclosure () -> Logger.Message, error: any Error, metadata: Logger.Metadata) {
        var fields = metadata
        fields["error"] = "\(error)"
        self.log(level: error is CancellationError || Task.isCancelled ? .debug : level, message(), metadata: fields)
    }
}
