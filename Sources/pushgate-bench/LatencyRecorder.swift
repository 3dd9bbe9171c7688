import Foundation
import Synchronization

/// Collects per-operation latencies and outcome counts from many tasks, and summarises them.
final class LatencyRecorder: Sendable {
    private let samples = Mutex<[Duration]>([])
    private let outcomes = Mutex<[String: Int]>([:])

    func record(_ latency: Duration, outcome: String) {
        self.samples.withLock { $0.append(latency) }
        self.outcomes.withLock { $0[outcome, default: 0] += 1 }
    }

    /// One line of results: count, rate over `elapsed`, p50/p90/p99/max in milliseconds, outcome mix.
    func summary(label: String, elapsed: Duration) -> String {
        let sorted = self.samples.withLock { $0 }.sorted()
        guard !sorted.isEmpty else { return "\(label): no samples" }
        func percentile(_ p: Double) -> String {
            let index = min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)
            return String(format: "%.2f", Self.milliseconds(sorted[max(0, index)]))
        }
        let seconds = Self.milliseconds(elapsed) / 1000
        let rate = Double(sorted.count) / seconds
        let mix = self.outcomes.withLock { $0 }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        return String(format: "%@: %d in %.2f s = %.0f/s; latency ms p50 %@ p90 %@ p99 %@ max %@; %@; peak RSS %d MiB",
                      label, sorted.count, seconds, rate, percentile(0.5), percentile(0.9), percentile(0.99), percentile(1.0), mix, Self.peakRSSMiB())
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    /// The process's peak resident set (VmHWM), in MiB.
    static func peakRSSMiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return -1 }
        return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
    }
}

/// Runs `operation` `count` times with at most `concurrency` at once.
///
/// `concurrency` workers each take the next index until none is left, so a finished operation is followed
/// at once by the next on the same task, without a round trip through a coordinating parent task.
func runConcurrently(count: Int, concurrency: Int, _ operation: @escaping @Sendable (Int) async -> Void) async {
    let indices = IndexCounter()
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<min(concurrency, count) {
            group.addTask {
                while true {
                    let index = indices.next()
                    guard index < count else { return }
                    await operation(index)
                }
            }
        }
    }
}

/// Hands out 0, 1, 2, … to concurrent workers.
private final class IndexCounter: Sendable {
    private let value = Atomic<Int>(0)

    func next() -> Int {
        self.value.wrappingAdd(1, ordering: .relaxed).oldValue
    }
}
