import Foundation

/// `pushgate-bench`: delivery and notify throughput against the in-process emulators.
///
///     pushgate-bench webpush [count] [concurrency] [--failures]
///     pushgate-bench matrix [count] [concurrency]
@main
enum PushgateBenchmark {
    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let numbers = arguments.compactMap(Int.init)
        let count = numbers.first ?? 20_000
        let concurrency = numbers.dropFirst().first ?? 32
        switch arguments.first {
        case "webpush":
            try await WebPushBenchmark.run(count: count, concurrency: concurrency, failures: arguments.contains("--failures"))
        case "matrix":
            try await MatrixBenchmark.run(count: count, concurrency: concurrency)
        default:
            print("usage: pushgate-bench webpush|matrix [count] [concurrency] [--failures]")
        }
    }
}
