// swift-tools-version: 6.2
import PackageDescription

/// Settings every target shares. Swift 6 language mode (strict concurrency) is the
/// package default; these upcoming features keep the public surface explicit.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "EntityStore",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "EntityStoreSQLite", targets: ["EntityStoreSQLite"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(
            name: "EntityStoreMigrations",
            path: "Migrations",
            resources: [.embedInCode("0001_initial.sql")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "EntityStoreSQLite",
            dependencies: ["CSQLite", "EntityStoreMigrations"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "EntityStoreSQLiteTests",
            dependencies: ["EntityStoreSQLite", "EntityStoreMigrations"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
