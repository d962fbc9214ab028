import EntityStoreTestSupport
import EntityStore
import EntityStoreSQLite
import Foundation
import Testing

/// An entity whose optional fields, strings and doubles are filled at random.
private struct Random: Entity {
    var id: Int64
    var name: String
    var value: Double
    var count: Int
    var flag: Bool
    var label: String?
    var weight: Double?
    var level: Int8?
    var parentID: Int64?
    var tags: [String]?
}

private let randoms = Table<Random>("randoms").grouped(\.flag).ordered(\.value)

private extension SplitMix64 {
    mutating func chance(_ percent: UInt64) -> Bool { next() % 100 < percent }

    /// Any finite double, from raw bits: subnormals, -0.0, huge and tiny magnitudes.
    mutating func double() -> Double {
        while true {
            let value = Double(bitPattern: next())
            if value.isFinite { return value }
        }
    }

    /// A string of random scalars: ASCII, NUL, combining marks, emoji, CJK, or empty.
    mutating func string() -> String {
        let pools: [ClosedRange<UInt32>] = [0x20...0x7E, 0x0...0x1F, 0x300...0x36F, 0x1F300...0x1F6FF, 0x4E00...0x9FFF, 0xE9...0xFF]
        var text = String.UnicodeScalarView()
        for _ in 0..<Int(next() % 12) {
            let pool = pools[Int(next() % UInt64(pools.count))]
            if let scalar = Unicode.Scalar(pool.lowerBound + UInt32(next() % UInt64(pool.count))) { text.append(scalar) }
        }
        return String(text)
    }
}

private func randomState(seed: UInt64, schema: Schema) throws -> EntityState {
    var random = SplitMix64(seed: seed)
    let count = 100 + Int(random.next() % 150)
    var ids = Set<Int64>()
    while ids.count < count { ids.insert(Int64(bitPattern: random.next()) >> Int64(random.next() % 60)) }
    let entities = ids.sorted().map { id in
        Random(
            id: id, name: random.string(), value: random.double(), count: Int(bitPattern: UInt(random.next())),
            flag: random.chance(50), label: random.chance(50) ? random.string() : nil,
            weight: random.chance(30) ? random.double() : nil, level: random.chance(50) ? Int8(truncatingIfNeeded: random.next()) : nil,
            parentID: random.chance(40) ? Int64(bitPattern: random.next()) : nil,
            tags: random.chance(20) ? (0..<Int(random.next() % 4)).map { _ in random.string() } : nil)
    }
    return try EntityState.build(schema: schema) { tx in try tx[randoms].insert(contentsOf: entities) }
}

@Suite("Random stores survive a round trip")
struct PropertyRoundTripTests {
    @Test("snapshot then restore equals the original for 50 seeds")
    func randomRoundTrips() throws {
        let schema = try Schema { randoms }
        try withTemporaryDirectory { directory in
            for seed in UInt64(1)...50 {
                let path = directory.appendingPathComponent("random-\(seed).sqlite").path
                let original = try randomState(seed: seed, schema: schema)
                let summary = try original.writeSnapshot(to: path)
                #expect(summary.rowCount == original.count(ofTable: "randoms"), "seed \(seed)")
                let restored = try EntityState.readSnapshot(from: path, schema: schema)
                let before = rows(randoms, in: original)
                let after = rows(randoms, in: restored)
                #expect(after == before, "seed \(seed)")
                // Exact bits and scalars, which == does not compare.
                let exact = zip(before, after).allSatisfy { lhs, rhs in
                    lhs.value.bitPattern == rhs.value.bitPattern && lhs.weight?.bitPattern == rhs.weight?.bitPattern
                        && Array(lhs.name.unicodeScalars) == Array(rhs.name.unicodeScalars)
                        && lhs.label.map { Array($0.unicodeScalars) } == rhs.label.map { Array($0.unicodeScalars) }
                        && lhs.tags?.map { Array($0.unicodeScalars) } == rhs.tags?.map { Array($0.unicodeScalars) }
                }
                #expect(exact, "seed \(seed): a value changed its bits or scalars")
                #expect(restored[randoms].filter(\.flag, equals: true).count == original[randoms].filter(\.flag, equals: true).count)
                #expect(restored.invariantViolations().isEmpty, "seed \(seed)")
                try FileManager.default.removeItem(atPath: path)
            }
        }
    }

    @Test("different seeds give different stores, so the round trip compares something")
    func generatorVaries() throws {
        let schema = try Schema { randoms }
        let first = rows(randoms, in: try randomState(seed: 1, schema: schema))
        let second = rows(randoms, in: try randomState(seed: 2, schema: schema))
        #expect(first != second)
        #expect(first == rows(randoms, in: try randomState(seed: 1, schema: schema)))
        #expect(first.contains { $0.label == nil } && first.contains { $0.label != nil })
        #expect(first.contains { $0.weight != nil })
    }
}
