import Foundation
import PushgateConfig

/// `pushgate-bench`: throughput and latency against the built-in sandbox (emulators in this process).
///
///     pushgate-bench deliver demo.apns|demo.fcm|demo.webpush [count] [concurrency] [--failures]
///     pushgate-bench matrix demo.webpush|demo.apns [count] [concurrency]
///     pushgate-bench nextcloud demo.fcm|demo.apns|mixed [batches] [senders] [--batch-size N]
///     pushgate-bench lookup sqlite|postgres [devices] [lookups]   (postgres: PUSHGATE_BENCH_POSTGRES_URL)
@main
enum PushgateBenchmark {
    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let batchSizeIndex = arguments.firstIndex(of: "--batch-size").map { $0 + 1 }
        let numbers = arguments.indices.filter { $0 != batchSizeIndex }.compactMap { Int(arguments[$0]) }
        let count = numbers.first ?? 20_000
        let concurrency = numbers.dropFirst().first ?? 32
        let app = arguments.dropFirst().first { $0.hasPrefix("demo.") } ?? "demo.webpush"
        let batchSize = batchSizeIndex.flatMap { arguments.indices.contains($0) ? Int(arguments[$0]) : nil } ?? 100
        switch arguments.first {
        case "deliver":
            try await DeliveryBenchmark.run(app: app, count: count, concurrency: concurrency, failures: arguments.contains("--failures"))
        case "matrix":
            try await MatrixBenchmark.run(app: app, count: count, concurrency: concurrency)
        case "nextcloud":
            let target = arguments.contains("mixed") ? "mixed" : (arguments.dropFirst().first { $0.hasPrefix("demo.") } ?? "demo.fcm")
            try await NextcloudBenchmark.run(target: target, batches: numbers.first ?? 1_000, senders: numbers.dropFirst().first ?? 4, batchSize: batchSize)
        case "lookup":
            let usePostgres = arguments.contains("postgres")
            let database: DatabaseSettings? =
                usePostgres
                ? try DatabaseSettings.parse(url: ProcessInfo.processInfo.environment["PUSHGATE_BENCH_POSTGRES_URL"] ?? "postgres://pushgate@127.0.0.1:5432/pushgate")
                : nil
            try await DeviceLookupBenchmark.run(
                database: database ?? .sqlite(path: "pushgate-bench-lookup.sqlite"), label: usePostgres ? "postgresql" : "sqlite",
                count: numbers.first ?? 1_000_000, lookups: numbers.dropFirst().first ?? 20_000
            )
        default:
            print("usage: pushgate-bench deliver|matrix|nextcloud|lookup … (see benchmarks/README.md)")
        }
    }
}
