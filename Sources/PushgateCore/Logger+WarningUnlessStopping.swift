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
        var fields = metadata
        fields["error"] = "\(error)"
        if error is CancellationError || Task.isCancelled {
            self.debug(message(), metadata: fields)
        } else {
            self.warning(message(), metadata: fields)
        }
    }
}
