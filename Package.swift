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
        .library(name: "StoreCore", targets: ["StoreCore"]),
        .library(name: "EntityStore", targets: ["EntityStore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        .target(name: "StoreCore", swiftSettings: strictSettings),
        .target(
            name: "EntityStore",
            dependencies: ["StoreCore", .product(name: "HashTreeCollections", package: "swift-collections")],
            swiftSettings: strictSettings),
        .testTarget(name: "StoreCoreTests", dependencies: ["StoreCore"], swiftSettings: strictSettings),
        .testTarget(name: "EntityStoreTests", dependencies: ["EntityStore"], swiftSettings: strictSettings),
    ],
    swiftLanguageModes: [.v6]
)
