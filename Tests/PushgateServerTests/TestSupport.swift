import Foundation
@_exported import PushgateTestSupport
import Logging

enum TestLogging {
    static let quiet: Logger = {
        var logger = Logger(label: "pushgate.tests")
        logger.logLevel = .critical
        return logger
    }()
}

