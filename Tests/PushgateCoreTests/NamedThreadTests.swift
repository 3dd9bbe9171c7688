import Foundation
import PushgateCore
import Synchronization
import Testing

@Suite("Named threads")
struct NamedThreadTests {
    final class Names: Sendable {
        let seen = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
    }

    #if os(Linux)
    @Test(.timeLimit(.minutes(1))) func everyThreadCarriesItsOwnNameNotItsMakers() async {
        // Made from a thread of Swift's pool, whose name a thread keeps when naming it fails. Many at once:
        // naming through Foundation's Thread.name failed in some of them (a race with start()).
        let names = Names()
        for index in 0..<40 {
            NamedThread.start(name: "named-\(index)") {
                let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
                names.seen.withLock { $0.append(name.trimmingCharacters(in: .newlines)) }
                names.done.signal()
            }
        }
        for _ in 0..<40 { names.done.wait() }
        #expect(Set(names.seen.withLock { $0 }) == Set((0..<40).map { "named-\($0)" }))
        // Longer names are cut to the 15 bytes Linux keeps.
        NamedThread.start(name: "a-name-longer-than-fifteen") {
            let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            names.seen.withLock { $0 = [name.trimmingCharacters(in: .newlines)] }
            names.done.signal()
        }
        names.done.wait()
        #expect(names.seen.withLock { $0 } == ["a-name-longer-t"])
    }
    #endif
}
