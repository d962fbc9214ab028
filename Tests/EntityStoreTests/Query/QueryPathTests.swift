import EntityStore
import EntityStoreTestSupport
import Testing

private struct PathItem: Entity {
    var id: Int
    var group: Int
    var code: String
    var score: Int
    var rank: Int
    var tag: Int?
}

/// The same fields indexed every way, and not at all: every query path must agree with a
/// plain filter over the rows.
private let indexed = Table<PathItem>("indexed").grouped(\.group).unique(\.code).ordered(\.score).ordered(\.tag)
    .ordered(\.code, name: "codeOrder")
private let plain = Table<PathItem>("plain")

@Suite("Query paths agree with a plain filter")
struct QueryPathTests {
    private func items(_ random: inout SplitMix64, count: Int) -> [PathItem] {
        (1...count).map { id in
            PathItem(id: id, group: Int.random(in: 0..<12, using: &random), code: "c\(id)",
                 score: Int.random(in: 0..<40, using: &random), rank: Int.random(in: 0..<5, using: &random),
                 tag: Bool.random(using: &random) ? Int.random(in: 0..<6, using: &random) : nil)
        }
    }

    @Test(arguments: Soak.seeds([1], soak: 1...30))
    func randomQueriesAgree(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let store = try EntityStore { indexed; plain }
        let rows = items(&random, count: 300).shuffled(using: &random)
        try store.write { tx in
            try tx[indexed].insert(contentsOf: rows)
            try tx[plain].insert(contentsOf: rows)
            // Removes and key changes, so groups and ranges are not in ID order.
            for id in stride(from: 1, through: 300, by: 7) {
                _ = try tx[indexed].remove(id)
                _ = try tx[plain].remove(id)
            }
            for id in stride(from: 2, through: 300, by: 5) where !id.isMultiple(of: 7) && id % 7 != 1 {
                try tx[indexed].update(id) { $0.score = 39 - $0.score; $0.group = ($0.group + 1) % 12 }
                try tx[plain].update(id) { $0.score = 39 - $0.score; $0.group = ($0.group + 1) % 12 }
            }
        }
        let view = store.state[indexed], reference = store.state[plain]
        let inOrder = Array(reference)
        for _ in 0..<400 {
            let group = Int.random(in: 0..<13, using: &random), low = Int.random(in: 0..<40, using: &random)
            let high = low + Int.random(in: 0..<15, using: &random), limit = Int.random(in: 0..<8, using: &random)
            let offset = Int.random(in: 0..<3, using: &random), descending = Bool.random(using: &random)
            // Equality: grouped, unique, ordered and no index, with counts and existence.
            #expect(view.filter(\.group, equals: group) == inOrder.filter { $0.group == group })
            #expect(view.count(\.group, equals: group) == inOrder.filter { $0.group == group }.count)
            #expect(view.query().where(\.score, equals: low).results == inOrder.filter { $0.score == low })
            #expect(view.query().where(\.score, equals: low).count == inOrder.filter { $0.score == low }.count)
            #expect(view.query().where(\.code, equals: "c\(low)").exists == inOrder.contains { $0.code == "c\(low)" })
            #expect(view.query().where(\.tag, equals: group).results == inOrder.filter { $0.tag == group })
            #expect(view.query().where(\.rank, equals: group % 5).count == inOrder.filter { $0.rank == group % 5 }.count)
            // Ranges: counted from the index, and the top-k of a range in order.
            let inRange = inOrder.filter { (low...high).contains($0.score) }
            #expect(view.query().where(\.score, in: low...high).count == inRange.count)
            #expect(view.query().where(\.score, in: low...high).exists == !inRange.isEmpty)
            let sortedRange = inRange.enumerated().sorted { lhs, rhs in
                let (a, b) = (lhs.element.score, rhs.element.score)
                return a != b ? (descending ? a > b : a < b) : lhs.offset < rhs.offset
            }.map(\.element)
            let topK = view.query().where(\.score, in: low...high).sorted(by: \.score, descending: descending).offset(offset).limit(limit)
            #expect(topK.results.map(\.id) == Array(sortedRange.dropFirst(offset).prefix(limit)).map(\.id))
            if limit > 0 { #expect(topK.first?.id == sortedRange.dropFirst(offset).first?.id) }
            // Several conditions: the first indexed one leads, the rest filter.
            let both = view.query().where(\.group, equals: group).where(\.score, in: low...high).offset(offset).limit(limit)
            let expected = inOrder.filter { $0.group == group && (low...high).contains($0.score) }
            #expect(both.results == Array(expected.dropFirst(offset).prefix(limit)))
            #expect(both.count == expected.count)
            // The same on the table without indexes.
            #expect(reference.query().where(\.group, equals: group).where(\.score, in: low...high).count == expected.count)
        }
        #expect(view.query().where(\.group, equals: 3).plan.hasPrefix("index lookup (group = 3)"))
        #expect(view.query().where(\.score, in: 3...9).sorted(by: \.score).limit(3).plan.hasPrefix("ordered index range"))
    }
}

@Suite("Aggregates over queries")
struct QueryAggregateTests {
    @Test(arguments: Soak.seeds([5], soak: 5...35))
    func aggregatesAgreeWithAPlainComputation(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let store = try EntityStore { indexed; plain }
        let rows = (1...200).map { id in
            PathItem(id: id, group: Int.random(in: 0..<9, using: &random), code: "c\(id)", score: Int.random(in: -50..<50, using: &random),
                     rank: Int.random(in: 0..<5, using: &random), tag: nil)
        }
        try store.write { tx in
            try tx[indexed].insert(contentsOf: rows)
            try tx[plain].insert(contentsOf: rows)
        }
        for table in [indexed, plain] {
            let view = store.state[table]
            for group in 0..<10 {
                let members = rows.filter { $0.group == group }
                let query = view.query().where(\.group, equals: group).limit(1)
                #expect(query.sum(\.score) == members.reduce(0) { $0 + $1.score })
                #expect(query.min(\.score) == members.map(\.score).min())
                #expect(query.max(\.score) == members.map(\.score).max())
                #expect(query.average(\.score) == (members.isEmpty ? nil : Double(members.reduce(0) { $0 + $1.score }) / Double(members.count)))
            }
            #expect(view.query().min(\.score) == rows.map(\.score).min() && view.query().max(\.score) == rows.map(\.score).max())
            let counts = Dictionary(grouping: rows, by: \.group).mapValues(\.count)
            #expect(view.query().countsByKey(\.group) == counts)
            #expect(view.query().where(\.score, in: 0...).countsByKey(\.group) == Dictionary(grouping: rows.filter { $0.score >= 0 }, by: \.group).mapValues(\.count))
            #expect(view.query().grouped(by: \.rank).mapValues { $0.map(\.id) } == Dictionary(grouping: rows, by: \.rank).mapValues { $0.map(\.id) })
            // Grouped aggregates: per group, count, sum, min and max, over a filter too.
            for filtered in [false, true] {
                let matching = filtered ? rows.filter { $0.score >= 0 } : rows
                let query = filtered ? view.query().where(\.score, in: 0...) : view.query()
                let expected = Dictionary(grouping: matching, by: \.group).mapValues { members in
                    [members.count, members.reduce(0) { $0 + $1.score }, members.map(\.score).min() ?? 0, members.map(\.score).max() ?? 0]
                }
                let aggregates = query.aggregates(groupedBy: \.group, of: \.score)
                #expect(aggregates.mapValues { [$0.count, $0.sum, $0.min, $0.max] } == expected, "filtered: \(filtered)")
                let live = store.live(LiveQuery(table).filter { !filtered || $0.score >= 0 }, groupedBy: \.group, aggregating: \.score)
                #expect(live.value.dictionary == aggregates, "the live group-by agrees")
            }
        }
    }
}

@Suite("More conditions: not equal, one of, nil, prefix")
struct QueryConditionTests {
    @Test(arguments: Soak.seeds([7], soak: 7...37))
    func conditionsAgreeWithAPlainFilter(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let store = try EntityStore { indexed; plain }
        let words = ["apple", "apricot", "app", "banana", "band", "", "äpfel", "Apple"]
        let rows = (1...250).map { id in
            PathItem(id: id, group: Int.random(in: 0..<9, using: &random), code: words.randomElement(using: &random)! + "\(id)",
                     score: Int.random(in: 0..<30, using: &random), rank: Int.random(in: 0..<5, using: &random),
                     tag: Bool.random(using: &random) ? Int.random(in: 0..<6, using: &random) : nil)
        }
        try store.write { tx in
            try tx[indexed].insert(contentsOf: rows)
            try tx[plain].insert(contentsOf: rows)
        }
        for table in [indexed, plain] {
            let view = store.state[table]
            for _ in 0..<60 {
                let group = Int.random(in: 0..<10, using: &random)
                let set = Set((0..<Int.random(in: 0...3, using: &random)).map { _ in Int.random(in: 0..<10, using: &random) })
                let prefix = ["ap", "app", "b", "", "ä", "A", "z"].randomElement(using: &random)!
                #expect(view.query().where(\.group, notEquals: group).results == rows.filter { $0.group != group })
                let oneOf = view.query().where(\.group, oneOf: set)
                #expect(Set(oneOf.results.map(\.id)) == Set(rows.filter { set.contains($0.group) }.map(\.id)))
                #expect(oneOf.count == rows.filter { set.contains($0.group) }.count)
                #expect(view.query().whereNil(\.tag).results == rows.filter { $0.tag == nil })
                #expect(view.query().whereNotNil(\.tag).count == rows.filter { $0.tag != nil }.count)
                #expect(Set(view.query().whereNotNil(\.tag).results.map(\.id)) == Set(rows.filter { $0.tag != nil }.map(\.id)))
                let prefixed = view.query().where(\.code, hasPrefix: prefix)
                #expect(Set(prefixed.results.map(\.id)) == Set(rows.filter { $0.code.hasPrefix(prefix) }.map(\.id)))
                #expect(prefixed.count == rows.filter { $0.code.hasPrefix(prefix) }.count)
                let top = view.query().where(\.code, hasPrefix: prefix).sorted(by: \.code).limit(3).results.map(\.code)
                #expect(top == Array(rows.map(\.code).filter { $0.hasPrefix(prefix) }.sorted().prefix(3)))
            }
        }
    }
}

@Suite("A query made live")
struct QueryLiveTests {
    /// The live form of a query (source, filters, sort, limit) equals the query re-run on
    /// every state a random sequence of commits publishes.
    @Test func aLiveQueryFollowsItsQuery() throws {
        var random = SplitMix64(seed: 77)
        let store = try EntityStore { indexed; plain }
        try store.write { tx in
            try tx[indexed].insert(contentsOf: (1...120).map { id in
                PathItem(id: id, group: id % 6, code: "c\(id)", score: Int.random(in: 0..<40, using: &random), rank: id % 5, tag: nil)
            })
        }
        let queries: [(Query<PathItem>) -> Query<PathItem>] = [
            { $0.where(\.group, equals: 2) },
            { $0.where(\.group, equals: 3).where(\.score, in: 10...30).sorted(by: \.score, descending: true).limit(5) },
            { $0.where(\.score, in: 5..<25).where(\.rank, equals: 1).sorted(by: \.score) },
            { $0.filter { $0.score.isMultiple(of: 3) }.sorted(by: \.code).limit(7) },
            // Unsorted: a range comes in its index's order, a group in insertion order.
            { $0.where(\.score, in: 5..<30) },
            { $0.where(\.score, in: 10...).limit(4) },
            { $0.where(\.group, equals: 1).where(\.score, in: 0...20).limit(3) },
            { $0.where(\.rank, equals: 2).limit(6) },
        ]
        let lives = try queries.map { make in try #require(store.live(make(store.state[indexed].query()))) }
        #expect(store.state[indexed].query().offset(1).live == nil, "an offset cannot be followed")
        #expect(store.state[indexed].query().where(\.group, oneOf: [1, 2]).live == nil, "two groups' order cannot be followed")
        #expect(store.state[indexed].query().where(\.group, oneOf: [1, 2]).sorted(by: \.score).live != nil)
        for step in 0..<150 {
            try store.write { tx in
                let id = Int.random(in: 1...140, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: _ = try tx[indexed].remove(id)
                default:
                    try tx[indexed].upsert(PathItem(
                        id: id, group: Int.random(in: 0..<6, using: &random), code: "c\(id)",
                        score: Int.random(in: 0..<40, using: &random), rank: Int.random(in: 0..<5, using: &random), tag: nil))
                }
            }
            for (live, make) in zip(lives, queries) {
                #expect(Array(live.value) == make(store.state[indexed].query()).results, "step \(step)")
            }
        }
    }
}

@Suite("Composed conditions")
struct QueryPredicateTests {
    @Test(arguments: Soak.seeds([9], soak: 9...39))
    func andOrNotAgreeWithAPlainFilter(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let store = try EntityStore { indexed; plain }
        let rows = (1...200).map { id in
            PathItem(id: id, group: Int.random(in: 0..<8, using: &random), code: "c\(id)", score: Int.random(in: 0..<30, using: &random),
                     rank: Int.random(in: 0..<4, using: &random), tag: nil)
        }
        try store.write { tx in
            try tx[indexed].insert(contentsOf: rows)
            try tx[plain].insert(contentsOf: rows)
        }
        for table in [indexed, plain] {
            let view = store.state[table]
            for _ in 0..<80 {
                let (a, b) = (Int.random(in: 0..<9, using: &random), Int.random(in: 0..<9, using: &random))
                let (low, rank) = (Int.random(in: 0..<30, using: &random), Int.random(in: 0..<4, using: &random))
                let predicate: QueryPredicate<PathItem> = .field(\.group, equals: a) || .field(\.group, equals: b) && !.field(\.score, in: low...)
                let expected = rows.filter { $0.group == a || ($0.group == b && $0.score < low) }
                #expect(Set(view.query().where(predicate).results.map(\.id)) == Set(expected.map(\.id)))
                #expect(view.query().where(predicate).count == expected.count)
                let both: QueryPredicate<PathItem> = .field(\.group, equals: a) && .matching { $0.rank == rank }
                #expect(view.query().where(both).count == rows.filter { $0.group == a && $0.rank == rank }.count)
                #expect(view.query().where(both).exists == rows.contains { $0.group == a && $0.rank == rank })
                let either: QueryPredicate<PathItem> = .field(\.score, in: ..<low) || .field(\.group, equals: a)
                #expect(view.query().where(either).sorted(by: \.score).results.map(\.id)
                        == rows.filter { $0.score < low || $0.group == a }.enumerated().sorted { ($0.element.score, $0.offset) < ($1.element.score, $1.offset) }.map(\.element.id))
            }
        }
    }
}

@Suite("Projection")
struct QueryProjectionTests {
    @Test func valuesFollowTheQuerysOrderAndPage() throws {
        let store = try EntityStore { indexed; plain }
        let rows = (1...30).map { PathItem(id: $0, group: $0 % 3, code: "c\($0)", score: 30 - $0, rank: $0 % 4, tag: nil) }
        try store.write { tx in try tx[indexed].insert(contentsOf: rows) }
        let query = store.state[indexed].query().where(\.group, equals: 1).sorted(by: \.score).offset(1).limit(3)
        let expected = rows.filter { $0.group == 1 }.sorted { $0.score < $1.score }.dropFirst().prefix(3)
        #expect(query.values(\.code) == expected.map(\.code))
        #expect(query.values(\.id, \.score).map { [$0.0, $0.1] } == expected.map { [$0.id, $0.score] })
    }
}

@Suite("Projection on every path")
struct QueryProjectionPathTests {
    @Test func streamedAndSortedPathsAgree() throws {
        var random = SplitMix64(seed: 12)
        let store = try EntityStore { indexed; plain }
        let rows = (1...100).map { PathItem(id: $0, group: $0 % 5, code: "c\($0)", score: Int.random(in: 0..<20, using: &random), rank: $0 % 4, tag: nil) }
        try store.write { tx in
            try tx[indexed].insert(contentsOf: rows)
            try tx[plain].insert(contentsOf: rows)
        }
        for table in [indexed, plain] {
            for offset in 0..<3 {
                for limit in [0, 1, 4, 50] {
                    let queries = [
                        store.state[table].query().where(\.group, equals: 2),
                        store.state[table].query().where(\.score, in: 5...15).sorted(by: \.score),
                        store.state[table].query().sorted(by: \.score, descending: true),
                        store.state[table].query().where(\.rank, equals: 1).sorted(by: \.code),
                    ]
                    for query in queries {
                        let paged = query.offset(offset).limit(limit)
                        #expect(paged.values(\.id) == paged.results.map(\.id))
                    }
                }
            }
        }
    }
}
