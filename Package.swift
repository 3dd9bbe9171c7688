// swift-tools-version: 6.2
import PackageDescription

/// Settings shared by every target: Swift 6 language mode with the upcoming features that keep imports honest.
let sharedSwiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
]

/// What every delivery back end builds on; each may add more.
let backEndDependencies: [Target.Dependency] = [
    "PushgateCore", "PushgateConfig", "PushgateProviderSupport", .asyncHTTPClient, .coreMetrics, .crypto, .cryptoExtras, .logging,
    .nioCore, .nioHTTP1, .nioSSL, .serviceLifecycle,
]

/// What every back end's test target builds on.
let backEndTestDependencies: [Target.Dependency] = [
    "PushgateTestSupport", "PushgateSandbox", "PushgateCore", "PushgateConfig", "PushgateProviderSupport", .asyncHTTPClient,
    .hummingbird, .hummingbirdTesting, .crypto, .cryptoExtras, .logging, .nioCore, .nioHTTP1, .serviceLifecycle,
    .serviceLifecycleTestKit,
]

let package = Package(
    name: "pushgate",
    platforms: [.macOS(.v15), .iOS(.v17)],
    products: [
        .executable(name: "pushgate", targets: ["pushgate"]),
        .library(name: "PushgateCore", targets: ["PushgateCore"]),
        .library(name: "PushgateNextcloudSDK", targets: ["PushgateNextcloudSDK"]),
    ],
    traits: [
        .trait(
            name: "Jemalloc",
            description: """
                Link jemalloc (Debian's libjemalloc-dev to build, libjemalloc2 to run) in place of the C library's \
                malloc: less CPU a request on Linux (README, "Release build").
                """
        )
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
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.30.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.0"),
        .package(url: "https://github.com/attaswift/BigInt.git", from: "6.0.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        .package(url: "https://github.com/grpc/grpc-swift-2.git", from: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport.git", from: "2.9.2"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf.git", from: "2.4.1"),
    ],
    targets: [
        // Core: protocol-independent types, no I/O (but for the kernel's random bytes, SecureRandomPool).
        .target(
            name: "PushgateCore",
            dependencies: [
                .logging,
                .crypto,
            ]
        ),
        // Storage protocol and the migration model shared by every store.
        .target(
            name: "PushgateStore",
            dependencies: ["PushgateCore", .serviceLifecycle]
        ),
        // The C functions of the SQLite that sqlite-nio compiles in, declared for direct calls.
        .target(name: "CSQLiteBundled"),
        // glibc's malloc settings, which Swift's Glibc module does not declare, and jemalloc's (the Jemalloc trait).
        .target(name: "CMallocTuning", cSettings: [.define("PUSHGATE_JEMALLOC", .when(platforms: [.linux], traits: ["Jemalloc"]))]),
        .target(
            name: "PushgateStoreSQLite",
            dependencies: [
                "PushgateStore",
                "CSQLiteBundled",
                .sqliteNIO,
                .nioPosix,
                .logging,
                .serviceLifecycle,
                .nioCore,
            ]
        ),
        .target(
            name: "PushgateStorePostgres",
            dependencies: [
                "PushgateStore",
                .postgresNIO,
                .logging,
                .serviceLifecycle,
                .nioCore,
                .nioPosix,
                .nioSSL,
            ]
        ),
        // Configuration: the sygnal.yaml superset.
        .target(
            name: "PushgateConfig",
            dependencies: [
                "PushgateCore",
                .yams,
                .logging,
            ]
        ),
        // Shared by the delivery back ends: base64url, JWT signing (ES256, RS256), Retry-After.
        .target(
            name: "PushgateProviderSupport",
            dependencies: [
                "PushgateCore",
                .coreMetrics,
                .logging,
                .crypto,
                .cryptoExtras,
                .asyncHTTPClient,
                .nioCore,
                .nioExtras,
                .nioHTTP1,
                .nioPosix,
                .nioSSL,
            ]
        ),
        // Delivery back ends, one per provider. They know their provider and nothing of front ends or stores.
        .target(
            name: "PushgateAPNs",
            dependencies: backEndDependencies + [.swiftASN1, .x509, .nioPosix]
        ),
        .target(
            name: "PushgateFCM",
            dependencies: backEndDependencies
        ),
        .target(
            name: "PushgateHMS",
            dependencies: backEndDependencies
        ),
        .target(
            name: "PushgateWebPush",
            dependencies: backEndDependencies + [.nioPosix]
        ),
        // UnifiedPush: posts Matrix notifications to the devices' endpoint URLs (Web Push's endpoint policy).
        .target(
            name: "PushgateUnifiedPush",
            dependencies: backEndDependencies
        ),
        // Delivery: app lookup, in-flight limits, the outbox worker, invalid-token bookkeeping.
        .target(
            name: "PushgateDelivery",
            dependencies: [
                "PushgateCore",
                "PushgateStore",
                .logging,
                .coreMetrics,
                .serviceLifecycle,
            ]
        ),
        // What every HTTP front end shares: the request context, routes, the generic error shape.
        .target(
            name: "PushgateHTTP",
            dependencies: [
                "PushgateConfig",
                "PushgateDelivery",
                "PushgateStore",
                .coreMetrics,
                .httpTypes,
                .hummingbird,
                .logging,
                .nioCore,
                .serviceLifecycle,
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
                .hummingbird,
                .logging,
                .coreMetrics,
                .crypto,
            ]
        ),
        // Front end: the Nextcloud push proxy (devices, notifications, fair use, the cloudId identity proof).
        .target(
            name: "PushgateNextcloud",
            dependencies: [
                "PushgateCore", "PushgateConfig", "PushgateHTTP", "PushgateStore", "PushgateDelivery", "PushgateProviderSupport", .hummingbird,
                .logging, .crypto, .cryptoExtras, .bigInt, .nioCore, .nioHTTP1, .nioSSL,
            ]
        ),
        // Front end: gorush's HTTP API (a drop-in for gorush's callers, Status push notification servers included).
        .target(
            name: "PushgateGorush",
            dependencies: [
                "PushgateCore", "PushgateConfig", "PushgateHTTP", "PushgateStore", "PushgateDelivery", .hummingbird, .logging, .coreMetrics,
                .nioCore, .httpTypes, .serviceLifecycle, .grpcCore, .grpcNIOTransportHTTP2, .grpcProtobuf, .swiftProtobuf,
            ],
            exclude: ["Generated/README.md"]
        ),
        // The Status wire below the application: Keccak and SHAKE, secp256k1 (libsecp256k1, loaded at run time),
        // ECIES, the Waku payload v1 frame, topics, message ids and the Status protobuf messages. No I/O.
        .target(
            name: "PushgateStatusWire",
            dependencies: ["PushgateCore", .crypto, .cryptoExtras, .swiftProtobuf]
        ),
        // A client of a Waku node's REST API (nwaku, go-waku): subscribe, poll, publish, health.
        .target(
            name: "PushgateWaku",
            dependencies: ["PushgateCore", "PushgateStatusWire", "PushgateProviderSupport", .logging, .nioCore, .nioHTTP1, .nioSSL]
        ),
        // Front end: a Status push notification server (16/PUSH-NOTIFICATION-SERVER) over Waku.
        .target(
            name: "PushgateStatus",
            dependencies: [
                "PushgateCore", "PushgateConfig", "PushgateHTTP", "PushgateStore", "PushgateDelivery", "PushgateStatusWire", "PushgateGorush",
                .logging, .coreMetrics, .serviceLifecycle, .swiftProtobuf,
            ]
        ),
        // Back end: JSON posts to a URL the operator configured (a front end's feedback to its senders).
        .target(
            name: "PushgateWebhook",
            dependencies: backEndDependencies
        ),
        // The device side of the Nextcloud push protocol: keys, registration, verifying and decrypting pushes.
        // No server dependencies: usable from an iOS app and on Linux.
        .target(
            name: "PushgateNextcloudSDK",
            dependencies: [.crypto, .cryptoExtras]
        ),
        // Faithful emulators of the three providers, for `pushgate sandbox`, the demo apps and the tests.
        .target(
            name: "PushgateSandbox",
            dependencies: [
                "PushgateCore",
                "PushgateProviderSupport",
                .hummingbird,
                .hummingbirdCore,
                .hummingbirdTLS,
                .httpTypes,
                .nioHTTP2,
                .nioHPACK,
                .swiftASN1,
                .x509,
                .crypto,
                .cryptoExtras,
                .logging,
                .nioCore,
                .nioHTTP1,
                .nioSSL,
                .serviceLifecycle,
            ]
        ),
        // The composition root: the only target that wires concrete types together.
        .target(
            name: "PushgateServer",
            dependencies: [
                "CMallocTuning",
                "PushgateCore",
                "PushgateConfig",
                "PushgateStore",
                "PushgateStoreSQLite",
                "PushgateStorePostgres",
                "PushgateDelivery",
                "PushgateHTTP",
                "PushgateMatrix",
                "PushgateWebPush",
                "PushgateUnifiedPush",
                "PushgateFCM",
                "PushgateAPNs",
                "PushgateSandbox",
                "PushgateProviderSupport",
                "PushgateNextcloud",
                "PushgateGorush",
                "PushgateWebhook",
                "PushgateHMS",
                "PushgateStatus",
                "PushgateStatusWire",
                "PushgateWaku",
                .asyncHTTPClient,
                .hummingbird,
                .hummingbirdCore,
                .nioHTTP1,
                .logging,
                .nioCore,
                .nioPosix,
                .prometheus,
                .serviceLifecycle,
                .unixSignals,
                .crypto,
                .httpTypes,
            ],
            // The operator console's script and style sheet, and the OpenAPI document of every route, served from
            // the binary.
            resources: [.embedInCode("ConsoleAssets/console.js"), .embedInCode("ConsoleAssets/console.css"), .embedInCode("openapi.json")]
        ),
        .executableTarget(
            name: "pushgate",
            dependencies: [
                "PushgateServer",
                "PushgateStatus",
                "PushgateStatusWire",
                "PushgateWaku",
                .asyncHTTPClient,
                .nioCore,
                .nioHTTP1,
                "PushgateConfig",
                "PushgateCore",
                "PushgateSandbox",
                .serviceLifecycle,
                .argumentParser,
                .logging,
                .unixSignals,
            ],
            // On Linux the binary is linked by LLD (in the Swift toolchain) with packed relative relocations
            // (DT_RELR, glibc 2.36 or later): the loader no longer reads 2.2 MiB of relocation entries at
            // start-up, and the gateway's resident memory is about 3.5 MiB smaller (benchmarks/README.md).
            // With the Jemalloc trait, jemalloc (Debian's libjemalloc.so.2) is linked in ahead of the C library,
            // so that its malloc serves every library of the process. Not its static archive: the
            // --static-swift-stdlib link keeps every archive's symbols out of the dynamic symbol table, and the C
            // library and libstdc++ would go on allocating from glibc's heap what the binary frees into jemalloc's.
            linkerSettings: [
                .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"], .when(platforms: [.linux])),
                .linkedLibrary("jemalloc", .when(platforms: [.linux], traits: ["Jemalloc"])),
            ]
        ),
        // Shared by the test targets: running reference implementations and other programs, recording logs.
        .target(name: "PushgateTestSupport", dependencies: [.logging, .serviceLifecycle]),
        // Throughput and latency against the in-process emulators (see benchmarks/README.md).
        .executableTarget(
            name: "pushgate-bench",
            dependencies: [
                "PushgateServer",
                "PushgateConfig",
                "PushgateCore",
                "PushgateDelivery",
                "PushgateStore",
                .asyncHTTPClient,
                .crypto,
                .cryptoExtras,
                .logging,
                .nioCore,
                .nioHTTP1,
                .nioPosix,
                .serviceLifecycle,
            ]
        ),
        .testTarget(name: "PushgateCoreTests", dependencies: ["PushgateCore", "PushgateTestSupport"]),
        .testTarget(
            name: "PushgateNextcloudSDKTests",
            dependencies: ["PushgateNextcloudSDK", "PushgateTestSupport", .crypto, .cryptoExtras, .hummingbird, .logging]
        ),
        .testTarget(
            name: "PushgateNextcloudTests",
            dependencies: [
                "PushgateNextcloud", "PushgateTestSupport", "PushgateConfig", "PushgateHTTP", "PushgateServer", "PushgateStore",
                "PushgateStoreSQLite", "PushgateCore", "PushgateDelivery", "PushgateProviderSupport", .crypto, .cryptoExtras, .hummingbird,
                .hummingbirdTesting, .logging, .nioCore, .coreMetrics,
            ]
        ),
        .testTarget(
            name: "PushgateSandboxTests",
            dependencies: [
                "PushgateTestSupport",
                "PushgateSandbox",
                "PushgateProviderSupport",
                .crypto,
                .hummingbird,
                .hummingbirdTesting,
                .httpTypes,
                .nioCore,
                .nioEmbedded,
                .nioHTTP2,
                .nioHPACK,
            ]
        ),
        .testTarget(
            name: "PushgateMatrixTests",
            dependencies: [
                "PushgateConfig",
                "PushgateUnifiedPush",
                .httpTypes,
                .crypto,
                .serviceLifecycle,
                "PushgateMatrix",
                "PushgateCore",
                "PushgateDelivery",
                "PushgateHTTP",
                "PushgateServer",
                "PushgateStore",
                "PushgateStoreSQLite",
                .coreMetrics,
                .prometheus,
                .hummingbird,
                .hummingbirdTesting,
                .logging,
                .nioCore,
            ]
        ),
        .testTarget(
            name: "PushgateDeliveryTests",
            dependencies: [
                "PushgateDelivery",
                "PushgateCore",
                "PushgateStore",
                "PushgateStoreSQLite",
                "PushgateTestSupport",
                .coreMetrics,
                .prometheus,
                .logging,
                .serviceLifecycle,
                .serviceLifecycleTestKit,
            ]
        ),
        .testTarget(
            name: "PushgateAPNsTests",
            dependencies: backEndTestDependencies + ["PushgateAPNs", .nioHTTP2, .nioHPACK, .nioPosix, .nioSSL]
        ),
        .testTarget(
            name: "PushgateHMSTests",
            dependencies: backEndTestDependencies + ["PushgateHMS"]
        ),
        .testTarget(
            name: "PushgateFCMTests",
            dependencies: backEndTestDependencies + ["PushgateFCM"]
        ),
        .testTarget(
            name: "PushgateUnifiedPushTests",
            dependencies: backEndTestDependencies + ["PushgateUnifiedPush", .nioPosix, .prometheus, .coreMetrics]
        ),
        .testTarget(
            name: "PushgateWebPushTests",
            dependencies: backEndTestDependencies + ["PushgateWebPush", .httpTypes, .nioPosix, .nioSSL, .prometheus]
        ),
        .testTarget(
            name: "PushgateProviderSupportTests",
            dependencies: [
                "PushgateProviderSupport",
                "PushgateTestSupport",
                "PushgateCore",
                .crypto,
                .cryptoExtras,
                .nioCore,
                .nioEmbedded,
                .prometheus,
            ]
        ),
        .testTarget(
            name: "PushgateGorushTests",
            dependencies: ["PushgateGorush", "PushgateConfig", "PushgateCore", "PushgateDelivery", "PushgateStore", "PushgateFCM", "PushgateHMS"]
        ),
        .testTarget(
            name: "PushgateStatusWireTests",
            dependencies: ["PushgateStatusWire", "PushgateCore", "PushgateTestSupport", .crypto, .cryptoExtras, .swiftProtobuf]
        ),
        .testTarget(
            name: "PushgateStatusTests",
            dependencies: [
                "PushgateStatus", "PushgateStatusWire", "PushgateTestSupport", "PushgateConfig", "PushgateCore", "PushgateDelivery",
                "PushgateStore", "PushgateStoreSQLite", "PushgateSandbox", "PushgateWaku", .logging, .swiftProtobuf, .coreMetrics, .prometheus,
                .hummingbird,
            ]
        ),
        .testTarget(name: "PushgateConfigTests", dependencies: ["PushgateConfig", "PushgateCore", .yams]),
        .testTarget(
            name: "PushgateStoreTests",
            dependencies: [
                "PushgateStore",
                "PushgateDelivery",
                "PushgateStoreSQLite",
                "PushgateStorePostgres",
                "PushgateCore",
                "PushgateTestSupport",
                .postgresNIO,
                .sqliteNIO,
                .nioPosix,
                .logging,
                .serviceLifecycle,
                .serviceLifecycleTestKit,
            ]
        ),
        .testTarget(
            name: "PushgateServerTests",
            dependencies: [
                "PushgateGorush", .grpcCore, .grpcNIOTransportHTTP2, .swiftProtobuf, "PushgateWaku", "PushgateStatusWire",
                "PushgateTestSupport",
                "PushgateServer",
                "PushgateHTTP",
                "PushgateConfig",
                "PushgateStore",
                "PushgateCore",
                .hummingbird,
                .hummingbirdTesting,
                .logging,
                .serviceLifecycle,
                .asyncHTTPClient,
                .nioCore,
                .nioHTTP1,
                .nioEmbedded,
                .nioPosix,
                .postgresNIO,
                "PushgateStoreSQLite",
                "PushgateStorePostgres",
                "PushgateSandbox",
                "PushgateProviderSupport",
                "PushgateNextcloudSDK",
                .crypto,
                .cryptoExtras,
            ],
            exclude: ["StatusClient", "NetworkFailures", "ConsoleBrowser"]
        ),
    ]
)

for target in package.targets {
    target.swiftSettings = (target.swiftSettings ?? []) + sharedSwiftSettings
}

/// The package products targets use, by short name.
extension Target.Dependency {
    static let bigInt: Self = .product(name: "BigInt", package: "BigInt")
    static let argumentParser: Self = .product(name: "ArgumentParser", package: "swift-argument-parser")
    static let asyncHTTPClient: Self = .product(name: "AsyncHTTPClient", package: "async-http-client")
    static let coreMetrics: Self = .product(name: "CoreMetrics", package: "swift-metrics")
    static let crypto: Self = .product(name: "Crypto", package: "swift-crypto")
    static let httpTypes: Self = .product(name: "HTTPTypes", package: "swift-http-types")
    static let hummingbird: Self = .product(name: "Hummingbird", package: "hummingbird")
    static let hummingbirdCore: Self = .product(name: "HummingbirdCore", package: "hummingbird")
    static let hummingbirdTLS: Self = .product(name: "HummingbirdTLS", package: "hummingbird")
    static let hummingbirdTesting: Self = .product(name: "HummingbirdTesting", package: "hummingbird")
    static let logging: Self = .product(name: "Logging", package: "swift-log")
    static let nioCore: Self = .product(name: "NIOCore", package: "swift-nio")
    static let nioHTTP1: Self = .product(name: "NIOHTTP1", package: "swift-nio")
    static let nioHTTP2: Self = .product(name: "NIOHTTP2", package: "swift-nio-http2")
    static let nioHPACK: Self = .product(name: "NIOHPACK", package: "swift-nio-http2")
    static let nioExtras: Self = .product(name: "NIOExtras", package: "swift-nio-extras")
    static let nioFoundationCompat: Self = .product(name: "NIOFoundationCompat", package: "swift-nio")
    static let nioPosix: Self = .product(name: "NIOPosix", package: "swift-nio")
    static let nioEmbedded: Self = .product(name: "NIOEmbedded", package: "swift-nio")
    static let nioSSL: Self = .product(name: "NIOSSL", package: "swift-nio-ssl")
    static let postgresNIO: Self = .product(name: "PostgresNIO", package: "postgres-nio")
    static let prometheus: Self = .product(name: "Prometheus", package: "swift-prometheus")
    static let sqliteNIO: Self = .product(name: "SQLiteNIO", package: "sqlite-nio")
    static let serviceLifecycle: Self = .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
    static let serviceLifecycleTestKit: Self = .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle")
    static let swiftASN1: Self = .product(name: "SwiftASN1", package: "swift-asn1")
    static let unixSignals: Self = .product(name: "UnixSignals", package: "swift-service-lifecycle")
    static let x509: Self = .product(name: "X509", package: "swift-certificates")
    static let yams: Self = .product(name: "Yams", package: "Yams")
    static let grpcCore: Self = .product(name: "GRPCCore", package: "grpc-swift-2")
    static let grpcNIOTransportHTTP2: Self = .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport")
    static let grpcProtobuf: Self = .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf")
    static let swiftProtobuf: Self = .product(name: "SwiftProtobuf", package: "swift-protobuf")
    static let cryptoExtras: Self = .product(name: "_CryptoExtras", package: "swift-crypto")
}
