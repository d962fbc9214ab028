// swift-tools-version: 6.2
import PackageDescription

// The benchmark harness of EntityStore. It lives in a package of its own so that the
// library never depends on GRDB: GRDB is only the peer the figures are compared with.
let package = Package(
    name: "EntityStoreBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "entity-store-bench", targets: ["entity-store-bench"]),
    ],
    dependencies: [
        // The PostgreSQL figures need the library's `PostgreSQL` trait (and so libpq).
        .package(name: "EntityStore", path: "..", traits: ["PostgreSQL"]),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .target(name: "CBenchSupport"),
        // libpq itself, for the hand-written baselines of the PostgreSQL figures.
        .systemLibrary(name: "CBenchPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .executableTarget(
            name: "entity-store-bench",
            dependencies: [
                "CBenchSupport", "CBenchPQ",
                .product(name: "EntityStore", package: "EntityStore"),
                .product(name: "StoreCore", package: "EntityStore"),
                .product(name: "EntityStoreSQLite", package: "EntityStore"),
                // Only for the figures of what the test helpers cost (TestingFigures.swift).
                .product(name: "EntityStoreTesting", package: "EntityStore"),
                .product(name: "EntityStorePostgres", package: "EntityStore"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
