public import Logging
public import ServiceLifecycle

/// Runs servers a test needs (emulators, stubs) while the test's body runs, and stops them gracefully.
///
/// A server's task must not simply be cancelled: a NIO server whose accepted connections were not yet
/// taken up drops them unfinished, and NIO ends the process on that (`Deinited NIOAsyncWriter without
/// calling finish()`), the whole test run with it. A graceful shutdown closes the listening socket first
/// and serves what it had accepted. The body's end, its error, and a cancellation of the test each stop the
/// servers this way; only a server still busy after `stopWithin` is cancelled.
///
/// ```swift
/// try await RunningServices.with([application]) {
///     // … requests to the application …
/// }
/// ```
public enum RunningServices {
    /// Runs `services` during `body`, then stops them gracefully and waits until they have stopped.
    /// - Parameters:
    ///   - stopWithin: how long the graceful shutdown may take before what is still running is cancelled.
    public static func with<Value>(
        _ services: [any Service], logger: Logger = Logger(label: "pushgate.tests.services", factory: { _ in SwiftLogNoOpLogHandler() }),
        stopWithin: Duration = .seconds(10), _ body: () async throws -> Value
    ) async throws -> Value {
        var configuration = ServiceGroupConfiguration(
            services: services.map { .init(service: $0, failureTerminationBehavior: .gracefullyShutdownGroup) }, logger: logger
        )
        configuration.maximumGracefulShutdownDuration = stopWithin
        let group = ServiceGroup(configuration: configuration)
        // Unstructured: a test that fails or runs out of time cancels its own task, which must reach the
        // servers as a graceful shutdown rather than as a cancellation.
        let running = Task { try await group.run() }
        let result: Value
        do {
            result = try await withTaskCancellationHandler {
                try await body()
            } onCancel: {
                Task { await group.triggerGracefulShutdown() }
            }
        } catch {
            await group.triggerGracefulShutdown()
            _ = try? await running.value
            throw error
        }
        await group.triggerGracefulShutdown()
        try await running.value
        return result
    }
}
