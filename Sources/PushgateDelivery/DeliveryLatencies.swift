import Synchronization

/// Each app's last provider latencies on this instance (a fixed number kept, the oldest replaced), for the
/// median and 99th percentile the operator console shows.
final class DeliveryLatencies: Sendable {
    private struct Samples {
        var values: [Double] = []
        var next = 0
    }

    /// How many latencies an app keeps.
    let capacity: Int
    private let samples = Mutex<[String: Samples]>([:])

    init(capacity: Int = 1024) {
        self.capacity = capacity
    }

    func record(appID: String, duration: Duration) {
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        let capacity = self.capacity
        self.samples.withLock { samples in
            // Changed in place (the dictionary's defaulted subscript): a copy taken out and stored back would
            // make every record copy the app's whole array.
            Self.add(milliseconds, to: &samples[appID, default: Samples()], capacity: capacity)
        }
    }

    private static func add(_ milliseconds: Double, to app: inout Samples, capacity: Int) {
        if app.values.count < capacity {
            app.values.append(milliseconds)
        } else {
            app.values[app.next] = milliseconds
        }
        app.next = (app.next + 1) % capacity
    }

    /// The median and 99th percentile (nearest rank) of an app's kept latencies; nil when it has none.
    func percentiles(appID: String) -> (p50: Double, p99: Double)? {
        guard let values = self.samples.withLock({ $0[appID]?.values }), !values.isEmpty else { return nil }
        let sorted = values.sorted()
        func rank(_ fraction: Double) -> Double {
            sorted[min(sorted.count - 1, max(0, Int((fraction * Double(sorted.count)).rounded(.up)) - 1))]
        }
        return (rank(0.5), rank(0.99))
    }
}
