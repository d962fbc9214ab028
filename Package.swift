// swift-tools-version: 6.2
import PackageDescription

/// Settings every target shares. Swift 6 language mode (strict concurrency) is the
/// package default; these upcoming features keep the public surface explicit.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

// Dependency direction is one way:
// entity-store -> EntityStoreCommands -> EntityStoreSQLite -> EntityStoreCodec -> EntityStore -> StoreCore.
// CSQLite and CSQLiteFaults are imported by EntityStoreSQLite only.
// EntityStorePostgres (EntityStoreCodec -> EntityStore -> StoreCore, and the system libpq
// through CLibPQ) is compiled only with the `PostgreSQL` trait: without it the module is
// empty and neither libpq nor the codec is needed or linked.
let package = Package(
    name: "EntityStore",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StoreCore", targets: ["StoreCore"]),
        .library(name: "EntityStore", targets: ["EntityStore"]),
        .library(name: "EntityStoreSQLite", targets: ["EntityStoreSQLite"]),
        .library(name: "EntityStoreCommands", targets: ["EntityStoreCommands"]),
        .library(name: "EntityStorePostgres", targets: ["EntityStorePostgres"]),
        .executable(name: "entity-store", targets: ["entity-store"]),
        // For test targets only: no library product depends on it.
        .library(name: "EntityStoreTesting", targets: ["EntityStoreTesting"]),
    ],
    traits: [
        .trait(
            name: "PostgreSQL",
            description: "EntityStorePostgres and the entity-store push, pull and inspect commands for PostgreSQL (links the system libpq)"),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .target(name: "StoreCore", swiftSettings: strictSettings),
        .target(
            name: "EntityStore",
            dependencies: ["StoreCore", .product(name: "HashTreeCollections", package: "swift-collections")],
            swiftSettings: strictSettings),
        // The one row codec of both back ends (column kinds, the Codable-to-row encoder and
        // decoder, the metadata model); each back end adapts it to its own values and SQL.
        // No product: its public types, `ColumnKind`, `StoreMetadata` and `NullMeaning`,
        // reach users through the back ends' re-exports.
        .target(name: "EntityStoreCodec", dependencies: ["EntityStore"], swiftSettings: strictSettings),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // libpq, PostgreSQL's own client library: imported by EntityStorePostgres only, and
        // only with the `PostgreSQL` trait.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // A fault-injecting SQLite VFS for crash and I/O-error tests; inert unless a plan is armed.
        .target(name: "CSQLiteFaults", dependencies: ["CSQLite"]),
        .target(
            name: "EntityStoreMigrations",
            path: "Migrations",
            resources: [.embedInCode("0001_initial.sql"), .embedInCode("0002_date_text.sql"), .embedInCode("0003_sql_true_columns.sql")],
            swiftSettings: strictSettings),
        .target(
            name: "EntityStoreSQLite",
            dependencies: ["EntityStore", "EntityStoreCodec", "StoreCore", "CSQLite", "CSQLiteFaults", "EntityStoreMigrations"],
            swiftSettings: strictSettings),
        .target(
            name: "EntityStorePostgres",
            dependencies: [
                "EntityStore", "StoreCore",
                .target(name: "EntityStoreCodec", condition: .when(traits: ["PostgreSQL"])),
                .target(name: "CLibPQ", condition: .when(traits: ["PostgreSQL"])),
            ],
            swiftSettings: strictSettings),
        .target(
            name: "EntityStoreCommands",
            dependencies: [
                "EntityStore", "EntityStoreSQLite", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .target(name: "EntityStorePostgres", condition: .when(traits: ["PostgreSQL"])),
            ],
            swiftSettings: strictSettings),
        // Assertions, round trips, crash-safety runs, migration fixtures and generators for
        // apps' own tests. It links Swift Testing and XCTest, so only test targets use it.
        .target(
            name: "EntityStoreTesting",
            dependencies: ["StoreCore", "EntityStore", "EntityStoreSQLite"],
            swiftSettings: strictSettings),
        .executableTarget(name: "entity-store", dependencies: ["EntityStoreCommands"], swiftSettings: strictSettings),
        .executableTarget(
            name: "bookshelf",
            dependencies: ["EntityStoreCommands", "EntityStoreSQLite", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/Bookshelf",
            swiftSettings: strictSettings),
        // Several processes sharing one store through PostgreSQL (docs/PostgreSQL.md, end-to-end tests).
        .executableTarget(
            name: "shared-notes",
            dependencies: [
                "EntityStore", "StoreCore", .target(name: "EntityStorePostgres", condition: .when(traits: ["PostgreSQL"])),
            ],
            path: "Examples/SharedNotes",
            swiftSettings: strictSettings),
        // What every test target shares: seeded randomness, threads of a test's own. It
        // depends on no product, so a test target links only the modules it tests.
        .target(name: "EntityStoreTestSupport", path: "Tests/EntityStoreTestSupport", swiftSettings: strictSettings),
        // Snapshot files written by hand: hostile ones and older formats.
        .target(name: "SnapshotFixtures", dependencies: ["EntityStoreSQLite"], path: "Tests/SnapshotFixtures", swiftSettings: strictSettings),
        .testTarget(name: "StoreCoreTests", dependencies: ["StoreCore", "EntityStoreTestSupport"], swiftSettings: strictSettings),
        .testTarget(name: "EntityStoreTests", dependencies: ["EntityStore", "EntityStoreTestSupport"], swiftSettings: strictSettings),
        .testTarget(
            name: "EntityStoreSQLiteTests",
            dependencies: [
                "EntityStoreSQLite", "EntityStoreCodec", "EntityStoreMigrations", "EntityStore", "EntityStoreTestSupport", "SnapshotFixtures",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "EntityStoreTestingTests",
            dependencies: ["EntityStoreTesting", "EntityStoreSQLite", "EntityStoreTestSupport", "SnapshotFixtures", "StoreCore"],
            swiftSettings: strictSettings),
        // The Bookshelf example's own tests, written as an app's would be with EntityStoreTesting.
        .testTarget(
            name: "BookshelfTests", dependencies: ["bookshelf", "EntityStoreTesting"], path: "Examples/BookshelfTests",
            resources: [.copy("Fixtures")], swiftSettings: strictSettings),
        .testTarget(
            name: "EntityStorePostgresTests",
            dependencies: ["EntityStorePostgres", "EntityStore", "EntityStoreSQLite", "EntityStoreTestSupport", "entity-store", "shared-notes"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "EntityStoreCommandsTests",
            dependencies: ["EntityStoreCommands", "EntityStoreTestSupport", "SnapshotFixtures", "entity-store", "bookshelf"],
            swiftSettings: strictSettings),
    ],
    swiftLanguageModes: [.v6]
)
