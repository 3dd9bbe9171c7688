/// `pushgate-bench`: throughput and latency against the built-in sandbox (emulators in this process).
///
///     pushgate-bench deliver demo.apns|demo.fcm|demo.webpush [count] [concurrency] [--failures]
///     pushgate-bench matrix demo.webpush|demo.apns [count] [concurrency]
@main
enum PushgateBenchmark {
    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let numbers = arguments.compactMap(Int.init)
        let count = numbers.first ?? 20_000
        let concurrency = numbers.dropFirst().first ?? 32
        let app = arguments.dropFirst().first { $0.hasPrefix("demo.") } ?? "demo.webpush"
        switch arguments.first {
        case "deliver":
            try await DeliveryBenchmark.run(app: app, count: count, concurrency: concurrency, failures: arguments.contains("--failures"))
        case "matrix":
            try await MatrixBenchmark.run(app: app, count: count, concurrency: concurrency)
        default:
            print("usage: pushgate-bench deliver|matrix demo.apns|demo.fcm|demo.webpush [count] [concurrency] [--failures]")
        }
    }
}
