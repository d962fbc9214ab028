import EntityStoreTestSupport
import StoreCore
import Testing
@testable import EntityStore

/// A row with an indexed key (`group`), an indexed order (`score`) and a field with no
/// index (`tag`), so live queries run both their index and their scan paths.
struct Item: Entity {
    var id: Int
    var group: Int
    var score: Int
    var tag: Int
}

/// An owner of the items of one group (its ID is the group), for joins.
struct Owner: Entity {
    var id: Int
    var name: String
}

/// A store of items, the live queries of every kind under test, and a reference that
/// re-runs each of them from scratch.
struct LiveFixture {
    let items = Table<Item>("items").grouped(\.group).ordered(\.score)
    let owners = Table<Owner>("owners")
    let store: EntityStore

    init() throws {
        let items = items, owners = owners
        store = try EntityStore {
            items
            owners
        }
    }

    /// Joins of rows to their group's owner: a whole table and one key's group.
    var joinQueries: [(name: String, query: LiveQuery<Item>)] {
        [
            ("all joined", LiveQuery(items)),
            ("group 1 joined", LiveQuery(items).where(\.group, equals: 1)),
            ("top 3 by score joined", LiveQuery(items).sorted(by: \.score).limit(3)),
        ]
    }

    /// Every kind of row query: whole table, equality (indexed and not), range (indexed
    /// and not), filter, top-k ascending/descending with and without an index.
    var queries: [(name: String, query: LiveQuery<Item>)] {
        [
            ("all", LiveQuery(items)),
            ("group 1", LiveQuery(items).where(\.group, equals: 1)),
            ("group 2", LiveQuery(items).where(\.group, equals: 2)),
            ("group 3 (empty at first)", LiveQuery(items).where(\.group, equals: 3)),
            ("tag 0 (no index)", LiveQuery(items).where(\.tag, equals: 0)),
            ("score 10...40", LiveQuery(items).where(\.score, in: 10...40).sorted(by: \.score)),
            ("tag ..<2 (no index)", LiveQuery(items).where(\.tag, in: ..<2)),
            ("even scores", LiveQuery(items).filter { $0.score % 2 == 0 }),
            ("top 5 by score", LiveQuery(items).sorted(by: \.score).limit(5)),
            ("top 5 by score desc", LiveQuery(items).sorted(by: \.score, descending: true).limit(5)),
            ("top 4 by tag (no index)", LiveQuery(items).sorted(by: \.tag).limit(4)),
            ("top 4 by tag desc (no index)", LiveQuery(items).sorted(by: \.tag, descending: true).limit(4)),
            ("first 3 inserted", LiveQuery(items).limit(3)),
            ("group 1 top 3 by score desc", LiveQuery(items).where(\.group, equals: 1).sorted(by: \.score, descending: true).limit(3)),
            ("odd top 3 by score", LiveQuery(items).filter { $0.score % 2 == 1 }.sorted(by: \.score).limit(3)),
            ("score 20... top 2", LiveQuery(items).where(\.score, in: 20...).sorted(by: \.score).limit(2)),
            ("limit 0", LiveQuery(items).limit(0)),
            ("score 10...40 top 3 desc", LiveQuery(items).where(\.score, in: 10...40).sorted(by: \.score, descending: true).limit(3)),
            ("score 5..<45 top 2", LiveQuery(items).where(\.score, in: 5..<45).sorted(by: \.score).limit(2)),
            ("score 10...40 in group 1", LiveQuery(items).where(\.score, in: 10...40).where(\.group, equals: 1)),
            ("tag 1...3 top 3 by score", LiveQuery(items).where(\.tag, in: 1...3).sorted(by: \.score).limit(3)),
        ]
    }
}

/// What `query` gives when run from scratch on `state`: qualifying rows in insertion
/// order, stably sorted by the sort field, cut to the limit.
func reference(_ query: LiveQuery<Item>, _ name: String, in state: EntityState) -> [Item] {
    reference(query, rows: Array(state[query.table]))
}

/// What `query` gives when run from scratch on `all`, its table's rows in insertion order.
func reference(_ query: LiveQuery<Item>, rows all: [Item]) -> [Item] {
    var rows = all.filter { query.qualifies($0) }
    if let field = query.sortField as? KeyPath<Item, Int> {
        let descending = query.isDescending
        // Each row's key read once, not in every comparison.
        let keyed = rows.enumerated().map { (key: $0.element[keyPath: field], offset: $0.offset, row: $0.element) }
        rows = keyed.sorted { a, b in
            if a.key != b.key { return descending ? a.key > b.key : a.key < b.key }
            return a.offset < b.offset
        }.map(\.row)
    }
    if let limit = query.limitCount { rows = Array(rows.prefix(limit)) }
    return rows
}

/// Reruns from scratch on one state, each table read once: the model tests check dozens
/// of queries after every step, and reading the table for each cost most of their time.
struct Rerun {
    let state: EntityState
    private var tables: [String: [Item]] = [:]

    init(_ state: EntityState) { self.state = state }

    /// The rows of `table` in insertion order.
    mutating func rows(of table: Table<Item>) -> [Item] {
        if let rows = tables[table.name] { return rows }
        let rows = Array(state[table])
        tables[table.name] = rows
        return rows
    }

    /// What `query` gives when run from scratch on the state.
    mutating func callAsFunction(_ query: LiveQuery<Item>) -> [Item] {
        reference(query, rows: rows(of: query.table))
    }

    /// The group-by of `query` by `key`, run from scratch on the state.
    mutating func groups(_ query: LiveQuery<Item>, key: KeyPath<Item, Int>) -> [Int: GroupAggregate<Int>] {
        groupReference(query, key: key, rows: rows(of: query.table))
    }
}

/// Collects a live query's deliveries.
final class UpdateLog<Value: Sendable, Diff: Sendable>: Sendable {
    let updates = Lock<[LiveUpdate<Value, Diff>]>([])
    func append(_ update: LiveUpdate<Value, Diff>) { updates.withLock { $0.append(update) } }
    func take() -> [LiveUpdate<Value, Diff>] { updates.withLock { updates in defer { updates = [] }; return updates } }
}

/// Group-by queries of every source kind: the whole table, a filter, an equality key.
extension LiveFixture {
    var groupQueries: [(name: String, query: LiveQuery<Item>, key: any KeyPath<Item, Int> & Sendable)] {
        [
            ("score by group", LiveQuery(items), \Item.group),
            ("score by tag, even scores", LiveQuery(items).filter { $0.score % 2 == 0 }, \Item.tag),
            ("score by tag in group 1", LiveQuery(items).where(\.group, equals: 1), \Item.tag),
            ("score by group, score 10...40", LiveQuery(items).where(\.score, in: 10...40), \Item.group),
        ]
    }
}

/// The group-by of `query` run from scratch on `state`: per key, count, sum, min, max of scores.
func groupReference(_ query: LiveQuery<Item>, key: KeyPath<Item, Int>, in state: EntityState) -> [Int: GroupAggregate<Int>] {
    groupReference(query, key: key, rows: Array(state[query.table]))
}

/// The group-by of `query` run from scratch on `rows`, its table's rows.
func groupReference(_ query: LiveQuery<Item>, key: KeyPath<Item, Int>, rows: [Item]) -> [Int: GroupAggregate<Int>] {
    var scores: [Int: [Int]] = [:]
    for item in rows where query.qualifies(item) { scores[item[keyPath: key], default: []].append(item.score) }
    return scores.mapValues { values in
        GroupAggregate(count: values.count, sum: values.reduce(0, +), min: values.min() ?? 0, max: values.max() ?? 0)
    }
}
