// swift-tools-version: 6.2
import PackageDescription

/// Settings shared by every target: Swift 6 language mode with the upcoming features that keep imports honest.
let sharedSwiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "pushgate",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pushgate", targets: ["pushgate"]),
        .library(name: "PushgateCore", targets: ["PushgateCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.0"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
    ],
    targets: [
        // Core: protocol-independent types, no I/O.
        .target(
            name: "PushgateCore",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Storage protocol and the migration model shared by every store.
        .target(
            name: "PushgateStore",
            dependencies: ["PushgateCore", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")]
        ),
        .target(
            name: "PushgateStoreSQLite",
            dependencies: [
                "PushgateStore",
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .target(
            name: "PushgateStorePostgres",
            dependencies: [
                "PushgateStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // Configuration: the sygnal.yaml superset.
        .target(
            name: "PushgateConfig",
            dependencies: [
                "PushgateCore",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Shared by the delivery back ends: base64url, JWT signing (ES256, RS256), Retry-After.
        .target(
            name: "PushgateProviderSupport",
            dependencies: [
                "PushgateCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // Delivery back ends, one per provider. They know their provider and nothing of front ends or stores.
        .target(
            name: "PushgateAPNs",
            dependencies: [
                "PushgateCore",
                "PushgateConfig",
                "PushgateProviderSupport",
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .target(
            name: "PushgateFCM",
            dependencies: [
                "PushgateCore",
                "PushgateConfig",
                "PushgateProviderSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "PushgateWebPush",
            dependencies: [
                "PushgateCore",
                "PushgateConfig",
                "PushgateProviderSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Delivery: app lookup, in-flight limits, the outbox worker, invalid-token bookkeeping.
        .target(
            name: "PushgateDelivery",
            dependencies: [
                "PushgateCore",
                "PushgateStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // What every HTTP front end shares: the request context, routes, the generic error shape.
        .target(
            name: "PushgateHTTP",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // Front end: the Matrix Push Gateway API (a drop-in for Sygnal).
        .target(
            name: "PushgateMatrix",
            dependencies: [
                "PushgateCore",
                "PushgateHTTP",
                "PushgateDelivery",
                "PushgateStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Faithful emulators of the three providers, for `pushgate sandbox`, the demo apps and the tests.
        .target(
            name: "PushgateSandbox",
            dependencies: [
                "PushgateCore",
                "PushgateProviderSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The composition root: the only target that wires concrete types together.
        .target(
            name: "PushgateServer",
            dependencies: [
                "PushgateCore",
                "PushgateConfig",
                "PushgateStore",
                "PushgateStoreSQLite",
                "PushgateStorePostgres",
                "PushgateDelivery",
                "PushgateHTTP",
                "PushgateMatrix",
                "PushgateWebPush",
                "PushgateFCM",
                "PushgateAPNs",
                "PushgateSandbox",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .executableTarget(
            name: "pushgate",
            dependencies: [
                "PushgateServer",
                "PushgateConfig",
                "PushgateCore",
                "PushgateSandbox",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // Shared by the test targets: running reference implementations and other programs.
        .target(name: "PushgateTestSupport"),
        // Throughput and latency against the in-process emulators (see benchmarks/README.md).
        .executableTarget(
            name: "pushgate-bench",
            dependencies: [
                "PushgateServer",
                "PushgateConfig",
                "PushgateCore",
                "PushgateDelivery",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(name: "PushgateCoreTests", dependencies: ["PushgateCore"]),
        .testTarget(
            name: "PushgateSandboxTests",
            dependencies: [
                "PushgateTestSupport",
                "PushgateSandbox",
                "PushgateProviderSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "PushgateMatrixTests",
            dependencies: [
                "PushgateMatrix",
                "PushgateCore",
                "PushgateDelivery",
                "PushgateHTTP",
                "PushgateServer",
                "PushgateStore",
                "PushgateStoreSQLite",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "PushgateDeliveryTests",
            dependencies: [
                "PushgateDelivery",
                "PushgateCore",
                "PushgateStore",
                "PushgateStoreSQLite",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "PushgateAPNsTests",
            dependencies: [
                "PushgateTestSupport",
                "PushgateAPNs",
                "PushgateSandbox",
                "PushgateCore",
                "PushgateConfig",
                "PushgateProviderSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "PushgateFCMTests",
            dependencies: [
                "PushgateTestSupport",
                "PushgateFCM",
                "PushgateSandbox",
                "PushgateCore",
                "PushgateConfig",
                "PushgateProviderSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "PushgateWebPushTests",
            dependencies: [
                "PushgateTestSupport",
                "PushgateWebPush",
                "PushgateSandbox",
                "PushgateCore",
                "PushgateConfig",
                "PushgateProviderSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(
            name: "PushgateProviderSupportTests",
            dependencies: [
                "PushgateProviderSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .testTarget(name: "PushgateConfigTests", dependencies: ["PushgateConfig", "PushgateCore"]),
        .testTarget(
            name: "PushgateStoreTests",
            dependencies: [
                "PushgateStore",
                "PushgateStoreSQLite",
                "PushgateStorePostgres",
                "PushgateCore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "PushgateServerTests",
            dependencies: [
                "PushgateTestSupport",
                "PushgateServer",
                "PushgateHTTP",
                "PushgateConfig",
                "PushgateStore",
                "PushgateCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                "PushgateStoreSQLite",
                "PushgateStorePostgres",
                "PushgateSandbox",
                "PushgateProviderSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                
            ]
        ),
    ]
)

for target in package.targets {
    target.swiftSettings = (target.swiftSettings ?? []) + sharedSwiftSettings
}
