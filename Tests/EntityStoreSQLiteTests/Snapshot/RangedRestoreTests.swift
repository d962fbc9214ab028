import EntityStore
import EntityStoreSQLite
import Foundation
import Testing

/// A table with integer IDs, which a large restore cuts into ranges by ID value.
private struct Reading: Entity {
    var id: Int
    var value: Double
    var sensor: Int
    var label: String
}

private let readings = Table<Reading>("readings").grouped(\.sensor)

/// Restores of integer-ID tables large enough to be decoded in several ID ranges: the
/// ranges must cover every ID exactly once, in order, whatever the IDs' spread.
@Suite("Restores in ID ranges")
struct RangedRestoreTests {
    static func store(ids: [Int]) throws -> EntityStore {
        let store = try EntityStore { readings }
        try store.write { tx in
            try tx[readings].insert(contentsOf: ids.map {
                Reading(id: $0, value: Double($0 % 1_000) / 8, sensor: abs($0 % 97), label: "reading \($0)")
            })
        }
        return store
    }

    /// Snapshots a store of `ids`, restores it into a new store, and checks the result.
    static func roundTrip(ids: [Int]) throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("readings.sqlite").path
            let original = try store(ids: ids)
            try original.snapshot(to: path)
            let restored = try EntityStore { readings }
            try restored.restore(from: path)
            let view = restored.state[readings]
            #expect(view.ids == ids.sorted())
            for id in ids.prefix(50) + ids.suffix(50) { #expect(view.find(id) == original.state[readings].find(id)) }
            for sensor in [0, 1, 42, 96] {
                #expect(Set(view.filter(\.sensor, equals: sensor).map(\.id)) == Set(original.state[readings].filter(\.sensor, equals: sensor).map(\.id)))
            }
            #expect(view.invariantViolations() == [])
        }
    }

    @Test func aTableJustAboveTheSplitComesBackWhole() throws {
        try Self.roundTrip(ids: Array((1...4_500).reversed()))
    }

    @Test func denseIDsInsertedBackwardsComeBackInIDOrder() throws {
        try Self.roundTrip(ids: Array((1...30_000).reversed()))
    }

    @Test func idsAcrossTheWholeIntegerRangeNeitherOverflowNorGoMissing() throws {
        var generator = SystemRandomNumberGenerator()
        var ids = Set([Int.min, Int.min + 1, -1, 0, 1, Int.max - 1, Int.max])
        while ids.count < 25_000 { ids.insert(Int.random(in: Int.min...Int.max, using: &generator)) }
        try Self.roundTrip(ids: Array(ids))
    }

    @Test func skewedIDsLeaveMostRangesEmpty() throws {
        try Self.roundTrip(ids: Array(1...24_999) + [Int.max])
    }

    @Test func aBadRowInAMiddleRangeFailsTheRestoreAndLeavesTheStoreUntouched() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("readings.sqlite").path
            try Self.store(ids: Array(1...30_000)).snapshot(to: path)
            try sqlExecute(path, "UPDATE readings SET value = 'not a number' WHERE id = 14000")
            let target = try Self.store(ids: [7])
            #expect(throws: SnapshotError.self) { try target.restore(from: path) }
            #expect(target.state[readings].ids == [7])
        }
    }
}
