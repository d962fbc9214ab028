import EntityStore

/// An owner of bench items, the target of their relation in the query figures.
struct BenchOwner: Entity {
    var id: Int
    var name: String
}

/// The query figures run on a store of their own, whose items also have an ordered index
/// on `price` and a relation to their owners, so the other figures keep measuring the
/// plain table.
extension StoreFigures {
    /// `index_query_us`, `index_query_vs_scan`, `index_count_ns`, `range_topk_us` and `join_us`.
    func queryFigures(store: EntityStore, dictionary: [Int: BenchItem]) throws -> [Figure] {
        let keys = data.ownerKeys
        let view = store.state[items]
        // The hand-written index the figures compare with: key -> IDs, then Dictionary probes.
        var byOwner: [Int: [Int]] = [:]
        for entity in data.entities { byOwner[entity.ownerID, default: []].append(entity.id) }

        // index_query_us: one owner's entities.
        var oursTotal = 0, baselineTotal = 0
        let (baseline, ours) = repetitions.pairedMedians(
            baseline: { seconds { baselineTotal = keys.reduce(0) { $0 + (byOwner[$1] ?? []).compactMap { dictionary[$0] }.count } } },
            ours: { seconds { oursTotal = keys.reduce(0) { $0 + view.filter(\.ownerID, equals: $1).count } } })
        if oursTotal != baselineTotal { progress("warning: index query results differ from the hand-written index") }
        let perQuery = ours / Double(keys.count) * 1e6, basePerQuery = baseline / Double(keys.count) * 1e6
        let scan = indexQuery(store: store, dictionary: dictionary)

        // index_count_ns: the size of one owner's group.
        var countTotal = 0, baseCountTotal = 0
        let (baseCounted, counted) = repetitions.pairedMedians(
            baseline: { seconds { baseCountTotal = keys.reduce(0) { $0 + (byOwner[$1]?.count ?? 0) } } },
            ours: { seconds { countTotal = keys.reduce(0) { $0 + view.count(\.ownerID, equals: $1) } } })
        if countTotal != baseCountTotal { progress("warning: index counts differ from the hand-written index") }

        // range_topk_us and join_us on a store with an ordered index and a relation.
        let owners = Table<BenchOwner>("owners")
        let priced = Table<BenchItem>("items").ordered(\.price).references(\.ownerID, to: owners)
        let queryStore = try EntityStore { owners; priced }
        try queryStore.write { tx in
            try tx[owners].insert(contentsOf: (1...data.ownerCount).map { BenchOwner(id: $0, name: "Owner \($0)") })
            try tx[priced].insert(contentsOf: data.entities)
        }
        let state = queryStore.state
        let sortedPrices = data.entities.map { ($0.price, $0.id) }.sorted { $0.0 < $1.0 || $0.0 == $1.0 && $0.1 < $1.1 }
        let floors = keys.map { Double($0 % 1_000) }
        var topTotal = 0, baseTopTotal = 0
        let (baseTop, top) = repetitions.pairedMedians(
            baseline: { seconds {
                baseTopTotal = floors.reduce(0) { total, floor in
                    var low = 0, high = sortedPrices.count
                    while low < high { let middle = (low + high) / 2; if sortedPrices[middle].0 < floor { low = middle + 1 } else { high = middle } }
                    return total + sortedPrices[low..<min(sortedPrices.count, low + 10)].compactMap { dictionary[$0.1] }.count
                }
            } },
            ours: { seconds {
                topTotal = floors.reduce(0) { $0 + state[priced].query().where(\.price, in: $1...).sorted(by: \.price).limit(10).results.count }
            } })
        if topTotal != baseTopTotal { progress("warning: range top-10 results differ from the sorted array") }
        let ownerNames = Dictionary(uniqueKeysWithValues: (1...data.ownerCount).map { ($0, BenchOwner(id: $0, name: "Owner \($0)")) })
        var joinTotal = 0, baseJoinTotal = 0
        let (baseJoined, joined) = repetitions.pairedMedians(
            baseline: { seconds {
                baseJoinTotal = keys.reduce(0) { total, key in
                    total + (byOwner[key] ?? []).compactMap { id in dictionary[id].map { ($0, ownerNames[$0.ownerID]) } }.count
                }
            } },
            ours: { seconds {
                joinTotal = keys.reduce(0) { $0 + state[priced].query().where(\.ownerID, equals: $1).joined(state[owners], via: \.ownerID).count }
            } })
        if joinTotal != baseJoinTotal { progress("warning: join results differ from the hand-written join") }
        let perTop = top / Double(floors.count) * 1e6, basePerTop = baseTop / Double(floors.count) * 1e6
        let perJoin = joined / Double(keys.count) * 1e6, basePerJoin = baseJoined / Double(keys.count) * 1e6
        return [
            Figure(
                name: "index_query_us", value: perQuery, unit: "µs/query", baseline: basePerQuery, ratio: basePerQuery / perQuery,
                ratioMeaning: "hand-written index / ours", direction: .higherIsBetter,
                baselineMeaning: "[owner: [ID]] plus Dictionary probes"),
            Figure(
                name: "index_query_vs_scan", value: scan.value, unit: scan.unit, baseline: scan.baseline, ratio: scan.ratio,
                ratioMeaning: scan.ratioMeaning, direction: .higherIsBetter, baselineMeaning: scan.baselineMeaning),
            Figure(
                name: "index_count_ns", value: counted / Double(keys.count) * 1e9, unit: "ns/count",
                baseline: baseCounted / Double(keys.count) * 1e9, ratio: baseCounted / counted,
                ratioMeaning: "hand-written index / ours", direction: .higherIsBetter, baselineMeaning: "[owner: [ID]] count"),
            Figure(
                name: "range_topk_us", value: perTop, unit: "µs/query", baseline: basePerTop, ratio: basePerTop / perTop,
                ratioMeaning: "sorted array / ours", direction: .higherIsBetter,
                baselineMeaning: "binary search in a sorted array plus 10 Dictionary probes"),
            Figure(
                name: "join_us", value: perJoin, unit: "µs/join", baseline: basePerJoin, ratio: basePerJoin / perJoin,
                ratioMeaning: "hand-written join / ours", direction: .higherIsBetter,
                baselineMeaning: "[owner: [ID]], Dictionary probes for items and their owner"),
        ]
    }
}
