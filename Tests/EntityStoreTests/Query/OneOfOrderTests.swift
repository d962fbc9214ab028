import EntityStore
import Testing

private struct Tile: Entity {
    var id: Int
    var group: Int
}

@Suite("oneOf reads its keys in the caller's order")
struct OneOfOrderTests {
    @Test func keysComeInTheirFirstOrderAndDuplicatesAreIgnored() throws {
        let grouped = Table<Tile>("tiles").grouped(\.group)
        let plain = Table<Tile>("plainTiles")
        let store = try EntityStore { grouped; plain }
        let tiles = (1...90).map { Tile(id: $0, group: ($0 * 7) % 9) }
        try store.write { tx in
            try tx[grouped].insert(contentsOf: tiles)
            try tx[plain].insert(contentsOf: tiles)
        }
        let keys = [5, 2, 8, 5, 0, 7, 1, 2, 6, 3]
        let order = [5, 2, 8, 0, 7, 1, 6, 3]
        let expected = order.flatMap { key in tiles.filter { $0.group == key }.map(\.id) }
        let query = store.state[grouped].query().where(\.group, oneOf: keys)
        #expect(query.ids == expected)
        #expect(query.limit(13).ids == Array(expected.prefix(13)))
        #expect(query.offset(20).limit(4).ids == Array(expected.dropFirst(20).prefix(4)))
        #expect(query.count == expected.count)
        #expect(query.plan == "index lookup (group in [5, 2, 8, 0, 7, 1, 6, 3])")
        // Without an index: a filter, in insertion order.
        #expect(store.state[plain].query().where(\.group, oneOf: keys).ids == expected.sorted())
    }
}
