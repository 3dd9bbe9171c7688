import Logging
import PushgateCore
import PushgateTestSupport
import Testing

/// A background task's failed call is a warning, unless the task is stopping.
@Suite("Failures of a stopping task")
struct LoggerUnlessStoppingTests {
    struct Refused: Error {}

    @Test func aFailureIsAWarningWithItsErrorAndFields() {
        let log = LogRecorder()
        log.logger().warningUnlessStopping("could not read", error: Refused(), metadata: ["app": "a"])
        let events = log.all
        #expect(events.map(\.level) == [.warning])
        #expect(events.first?.message == "could not read")
        #expect(events.first?.metadata == ["app": "a", "error": "Refused()"])
    }

    @Test func aCancellationIsDebugOnly() {
        let log = LogRecorder()
        log.logger().warningUnlessStopping("could not read", error: CancellationError())
        #expect(log.all.map(\.level) == [.debug])
    }

    @Test func anyFailureOfACancelledTaskIsDebugOnly() async {
        // A driver may report a cancelled call with an error of its own.
        let log = LogRecorder()
        let task = Task {
            while !Task.isCancelled { await Task.yield() }
            log.logger().warningUnlessStopping("could not read", error: Refused())
        }
        task.cancel()
        await task.value
        #expect(log.all.map(\.level) == [.debug])
    }

    @Test func aFailureThatCostItsWorkIsAnErrorUnlessStopping() async {
        let log = LogRecorder()
        log.logger().errorUnlessStopping("not answered", error: Refused(), metadata: ["app": "a"])
        log.logger().errorUnlessStopping("not answered", error: CancellationError())
        let task = Task {
            while !Task.isCancelled { await Task.yield() }
            log.logger().errorUnlessStopping("not answered", error: Refused())
        }
        task.cancel()
        await task.value
        #expect(log.all.map(\.level) == [.error, .debug, .debug])
        #expect(log.all.first?.metadata == ["app": "a", "error": "Refused()"])
    }
}
