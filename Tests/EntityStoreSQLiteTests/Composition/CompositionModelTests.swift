import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
import StoreCore
import Testing
@testable import EntityStore

/// The composition model: random sequences mixing every kind of commit (writes, batches
/// that update then revert, failing writes, large commits, `replaceAll`, undo and redo as
/// raw core commits, restores from a snapshot file, `SnapshotFile` saves and reopening)
/// with every kind of reader (live rows, top-k windows, joins, group-bys, derived queries,
/// `Query` made live), created and released mid-stream. After every commit each reader
/// equals its query recomputed in plain Swift, and a client that applied only the
/// delivered diffs equals the reader.
@Suite("Composition model: every commit kind against every reader")
struct CompositionModelTests {
    // MARK: The data

    struct Track: Entity {
        var id: Int
        var album: Int
        var rank: Double
        var plays: Int
        var note: String?
    }

    struct Album: Entity {
        var id: Int
        var title: String
    }

    static let tracks = Table<Track>("tracks").grouped(\.album).ordered(\.rank).ordered(\.plays)
    static let albums = Table<Album>("albums")

    static func makeStore() throws -> EntityStore {
        try EntityStore { tracks; albums }
    }

    /// Ranks with every awkward floating-point value (NaN rarely: a snapshot refuses it).
    static func randomRank(_ random: inout SplitMix64, allowNaN: Bool) -> Double {
        switch Int.random(in: 0..<20, using: &random) {
        case 0: return -0.0
        case 1: return 0.0
        case 2: return .infinity
        case 3: return -.infinity
        case 4 where allowNaN: return .nan
        default: return Double(Int.random(in: -5...5, using: &random)) / 2
        }
    }

    static func randomTrack(_ id: Int, _ random: inout SplitMix64, allowNaN: Bool) -> Track {
        Track(
            id: id, album: Int.random(in: 0..<4, using: &random), rank: randomRank(&random, allowNaN: allowNaN),
            plays: Int.random(in: 0..<50, using: &random), note: Bool.random(using: &random) ? nil : "n\(Int.random(in: 0..<3, using: &random))")
    }

    // MARK: The readers and their plain-Swift recomputation

    /// A row query: its live form and the same query as a predicate, a sort and a limit.
    struct RowSpec: Sendable {
        let name: String
        let query: LiveQuery<Track>
        let qualifies: @Sendable (Track) -> Bool
        /// The sort key (NaN sorts last in either direction), nil for insertion order.
        let key: (@Sendable (Track) -> Double)?
        let descending: Bool
        let limit: Int?

        /// The rows of the query over `state`: qualifying rows in insertion order, stably
        /// sorted by the key with NaN last, cut to the limit.
        func rows(in state: EntityState) -> [Track] {
            var rows = Array(state[tracks]).filter(qualifies)
            if let key {
                rows = rows.enumerated().sorted { a, b in
                    let (x, y) = (key(a.element), key(b.element))
                    if x.isNaN || y.isNaN { return x.isNaN == y.isNaN ? a.offset < b.offset : y.isNaN }
                    if x != y { return descending ? x > y : x < y }
                    return a.offset < b.offset
                }.map(\.element)
            }
            if let limit { rows = Array(rows.prefix(limit)) }
            return rows
        }
    }

    static let rowSpecs: [RowSpec] = {
        let t = tracks
        return [
            RowSpec(name: "all", query: LiveQuery(t), qualifies: { _ in true }, key: nil, descending: false, limit: nil),
            RowSpec(name: "album 1", query: LiveQuery(t).where(\.album, equals: 1), qualifies: { $0.album == 1 }, key: nil, descending: false, limit: nil),
            RowSpec(name: "no note", query: LiveQuery(t).where(\.note, equals: nil), qualifies: { $0.note == nil }, key: nil, descending: false, limit: nil),
            RowSpec(
                name: "plays 10...30", query: LiveQuery(t).where(\.plays, in: 10...30).sorted(by: \.plays),
                qualifies: { (10...30).contains($0.plays) }, key: { Double($0.plays) }, descending: false, limit: nil),
            RowSpec(
                name: "rank -1..<2", query: LiveQuery(t).where(\.rank, in: -1.0..<2.0),
                qualifies: { (-1.0..<2.0).contains($0.rank) }, key: nil, descending: false, limit: nil),
            RowSpec(
                name: "even plays", query: LiveQuery(t).filter { $0.plays % 2 == 0 }, qualifies: { $0.plays % 2 == 0 }, key: nil,
                descending: false, limit: nil),
            RowSpec(
                name: "top 5 by rank", query: LiveQuery(t).sorted(by: \.rank).limit(5), qualifies: { _ in true }, key: { $0.rank },
                descending: false, limit: 5),
            RowSpec(
                name: "top 5 by rank desc", query: LiveQuery(t).sorted(by: \.rank, descending: true).limit(5), qualifies: { _ in true },
                key: { $0.rank }, descending: true, limit: 5),
            RowSpec(
                name: "album 2 top 3 by plays", query: LiveQuery(t).where(\.album, equals: 2).sorted(by: \.plays).limit(3),
                qualifies: { $0.album == 2 }, key: { Double($0.plays) }, descending: false, limit: 3),
            RowSpec(name: "first 4", query: LiveQuery(t).limit(4), qualifies: { _ in true }, key: nil, descending: false, limit: 4),
        ]
    }()

    /// One reader alive in the model, with the client copy rebuilt from its diffs.
    final class Reader: Sendable {
        let name: String
        /// Compares the reader with the recomputation over `state` and the client copy with
        /// the reader; returns the problems.
        let check: @Sendable (EntityState) -> [String]
        let token: Observation?

        init(name: String, token: Observation?, check: @escaping @Sendable (EntityState) -> [String]) {
            self.name = name
            self.token = token
            self.check = check
        }
    }

    static func sameRows(_ a: [Track], _ b: [Track]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
    }

    /// `ValueIdentity.same` spelled out for a track's fields: every field `==`, except the
    /// rank, compared by bit pattern (NaNs alike). The library's version walks the fields
    /// by reflection, which in a debug build was a third of this suite's time; this one
    /// gives the same answer for every pair of tracks.
    static func same(_ x: Track, _ y: Track) -> Bool {
        x.id == y.id && x.album == y.album && x.plays == y.plays && x.note == y.note
            && (x.rank.bitPattern == y.rank.bitPattern || (x.rank.isNaN && y.rank.isNaN))
    }

    /// The tracks of `state` in ID order.
    static func byID(_ state: EntityState) -> [Track] { state[tracks].sorted { $0.id < $1.id } }

    /// Where two row lists first differ, for messages.
    static func firstDifference(_ a: [Track], _ b: [Track]) -> String {
        for (index, (x, y)) in zip(a, b).enumerated() where !same(x, y) { return "at \(index): \(x) vs \(y)" }
        return "counts \(a.count) vs \(b.count)"
    }

    static func describe(_ rows: [Track]) -> String {
        rows.map { "\($0.id):\($0.album)/\($0.rank)/\($0.plays)" }.joined(separator: " ")
    }

    /// A live row query with its client.
    static func rowReader(_ spec: RowSpec, store: EntityStore) -> Reader {
        let live = store.live(spec.query)
        let client = Lock(Array(live.value))
        let token = live.observe { update in client.withLock { $0 = update.diff.apply(to: $0) } }
        return Reader(name: "live \(spec.name)", token: token) { state in
            var problems: [String] = []
            let value = Array(live.value), expected = spec.rows(in: state)
            if !sameRows(value, expected) { problems.append("live \(spec.name): \(describe(value)), expected \(describe(expected))") }
            let rebuilt = client.withLock { $0 }
            if !sameRows(rebuilt, value) { problems.append("live \(spec.name): the client has \(describe(rebuilt)), the value \(describe(value))") }
            return problems
        }
    }

    /// The same query built as a `Query` and made live.
    static func queryReader(store: EntityStore) -> Reader? {
        guard let live = store.live(store.state[tracks].query().where(\.album, equals: 3)) else { return nil }
        let spec = RowSpec(name: "Query album 3", query: LiveQuery(tracks), qualifies: { $0.album == 3 }, key: nil, descending: false, limit: nil)
        return Reader(name: spec.name, token: nil) { state in
            let value = Array(live.value), expected = spec.rows(in: state)
            return sameRows(value, expected) ? [] : ["\(spec.name): \(describe(value)), expected \(describe(expected))"]
        }
    }

    /// A live join of a row query to the albums, with its client (rows and referenced).
    static func joinReader(_ spec: RowSpec, store: EntityStore) -> Reader {
        let live = store.live(spec.query, joining: \.album, to: albums)
        let initial = live.value
        var referenced: [Int: Album] = [:]
        for row in initial.rows { if let album = initial.referenced(row.album) { referenced[row.album] = album } }
        let client = Lock((rows: Array(initial.rows), referenced: referenced))
        let token = live.observe { update in
            client.withLock { client in
                client.rows = update.diff.rows.apply(to: client.rows)
                for (id, value) in update.diff.referenced { client.referenced[id] = value }
            }
        }
        return Reader(name: "join \(spec.name)", token: token) { state in
            var problems: [String] = []
            let value = live.value, expected = spec.rows(in: state)
            let rows = Array(value.rows)
            if !sameRows(rows, expected) { problems.append("join \(spec.name): \(describe(rows)), expected \(describe(expected))") }
            let (clientRows, clientReferenced) = client.withLock { ($0.rows, $0.referenced) }
            if !sameRows(clientRows, rows) { problems.append("join \(spec.name): the client has \(describe(clientRows))") }
            for row in rows {
                let album = state[albums].find(row.album)
                if value.referenced(row.album) != album { problems.append("join \(spec.name): album \(row.album) is \(String(describing: value.referenced(row.album))), expected \(String(describing: album))") }
                if clientReferenced[row.album] != album { problems.append("join \(spec.name): the client's album \(row.album) is \(String(describing: clientReferenced[row.album])), expected \(String(describing: album))") }
            }
            return problems
        }
    }

    /// A live group-by of plays per album (exact integer aggregates), with its client.
    static func groupReader(_ spec: RowSpec, store: EntityStore) -> Reader {
        let live = store.live(spec.query, groupedBy: \.album, aggregating: \.plays)
        let client = Lock(live.value.dictionary)
        let token = live.observe { update in client.withLock { $0 = update.diff.apply(to: $0) } }
        return Reader(name: "groups \(spec.name)", token: token) { state in
            var expected: [Int: GroupAggregate<Int>] = [:]
            var values: [Int: [Int]] = [:]
            for track in state[tracks] where spec.qualifies(track) { values[track.album, default: []].append(track.plays) }
            for (key, plays) in values {
                expected[key] = GroupAggregate(count: plays.count, sum: plays.reduce(0, &+), min: plays.min() ?? 0, max: plays.max() ?? 0)
            }
            var problems: [String] = []
            let value = live.value.dictionary
            if value != expected { problems.append("groups \(spec.name): \(value), expected \(expected)") }
            let rebuilt = client.withLock { $0 }
            if rebuilt != value { problems.append("groups \(spec.name): the client has \(rebuilt)") }
            return problems
        }
    }

    /// A live group-by of ranks (NaN, ±0, infinities), against the query engine's aggregates
    /// (documented to be the same, summed the same way), with its client.
    static func rankGroupReader(store: EntityStore) -> Reader {
        let live = store.live(LiveQuery(tracks), groupedBy: \.album, aggregating: \.rank)
        let client = Lock(live.value.dictionary)
        let token = live.observe { update in client.withLock { $0 = update.diff.apply(to: $0) } }
        return Reader(name: "rank groups", token: token) { state in
            var problems: [String] = []
            let value = live.value.dictionary
            let expected = state[tracks].query().aggregates(groupedBy: \.album, of: \.rank)
            if value != expected { problems.append("rank groups: \(value), expected \(expected)") }
            if client.withLock({ $0 }) != value { problems.append("rank groups: the client differs from the value") }
            return problems
        }
    }

    /// Derived queries: one row by ID, and the rows of an album.
    static func derivedReaders(store: EntityStore, id: Int) -> [Reader] {
        let one = store.derived(tracks, id: id)
        let album = store.derived(tracks, where: \.album, equals: 0)
        return [
            Reader(name: "derived \(id)", token: nil) { state in
                let expected = state[tracks].find(id)
                return ValueIdentity.same(one.value, expected) ? [] : ["derived \(id): \(String(describing: one.value)), expected \(String(describing: expected))"]
            },
            Reader(name: "derived album 0", token: nil) { state in
                let expected = Array(state[tracks]).filter { $0.album == 0 }
                return sameRows(Array(album.value), expected) ? [] : ["derived album 0: \(describe(Array(album.value)))"]
            },
        ]
    }

    /// A random reader of any kind.
    static func randomReader(_ random: inout SplitMix64, store: EntityStore) -> [Reader] {
        let spec = rowSpecs[Int.random(in: 0..<rowSpecs.count, using: &random)]
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<5: return [rowReader(spec, store: store)]
        case 5, 6: return [joinReader(spec, store: store)]
        case 7: return [groupReader(spec, store: store)]
        case 8: return [rankGroupReader(store: store)]
        default: return derivedReaders(store: store, id: Int.random(in: 0..<40, using: &random)) + (queryReader(store: store).map { [$0] } ?? [])
        }
    }

    // MARK: The sequential model

    @Test("random commits of every kind against every reader", arguments: Soak.seeds([1, 2], soak: 1...40))
    func everyCommitKindAgainstEveryReader(seed: UInt64) throws {
        try withTemporaryDirectory { directory in
            var random = SplitMix64(seed: seed)
            let store = try Self.makeStore()
            try store.write { tx in
                for id in 0..<4 { try tx[Self.albums].insert(Album(id: id, title: "album \(id)")) }
                for id in 0..<20 { try tx[Self.tracks].insert(Self.randomTrack(id, &random, allowNaN: false)) }
            }
            var readers: [Reader] = Self.rowSpecs.map { Self.rowReader($0, store: store) }
                + [Self.joinReader(Self.rowSpecs[0], store: store), Self.groupReader(Self.rowSpecs[0], store: store), Self.rankGroupReader(store: store)]
                + Self.derivedReaders(store: store, id: 3)
            var kept: [EntityState] = [store.state]
            let snapshotPath = directory.appendingPathComponent("snapshot.sqlite").path
            var snapshotState: EntityState?
            let filePath = directory.appendingPathComponent("file.sqlite").path
            var file: SnapshotFile? = try SnapshotFile(store: store, path: filePath)
            var nextID = 100
            let steps = Soak.pick(120, soak: 600)

            func hasNaN(_ state: EntityState) -> Bool { state[Self.tracks].contains { $0.rank.isNaN } }
            func randomWrite(_ tx: Transaction) throws {
                let ids = tx.current[Self.tracks].ids
                switch Int.random(in: 0..<12, using: &random) {
                case 0..<3:
                    nextID += 1
                    try tx[Self.tracks].insert(Self.randomTrack(nextID, &random, allowNaN: true))
                case 3..<8 where !ids.isEmpty:
                    let id = ids.randomElement(using: &random) ?? 0
                    let changed = Self.randomTrack(id, &random, allowNaN: true)
                    let field = Int.random(in: 0..<5, using: &random)
                    _ = try tx[Self.tracks].update(id) { track in
                        switch field {
                        case 0: track.album = changed.album
                        case 1: track.rank = changed.rank
                        case 2: track.plays = changed.plays
                        case 3: track.note = changed.note
                        default: track = changed
                        }
                    }
                case 8..<10 where !ids.isEmpty:
                    _ = try tx[Self.tracks].remove(ids.randomElement(using: &random) ?? 0)
                case 10 where !ids.isEmpty:
                    // Removed and inserted again with the same value: a new place.
                    let id = ids.randomElement(using: &random) ?? 0
                    if let track = tx[Self.tracks].find(id) {
                        _ = try tx[Self.tracks].remove(id)
                        try tx[Self.tracks].insert(track)
                    }
                default:
                    let id = Int.random(in: 0..<4, using: &random)
                    let title = "album \(id) v\(Int.random(in: 0..<100, using: &random))"
                    _ = try tx[Self.albums].update(id) { $0.title = title }
                }
            }

            for step in 0..<steps {
                let kind = Int.random(in: 0..<20, using: &random)
                var label = ""
                switch kind {
                case 0..<7:
                    label = "write"
                    try store.write { tx in for _ in 0..<Int.random(in: 1...4, using: &random) { try randomWrite(tx) } }
                case 7:
                    label = "batch (update, then revert)"
                    let ids = store.state[Self.tracks].ids
                    if let id = ids.randomElement(using: &random), let original = store.state[Self.tracks].find(id) {
                        let changed = Self.randomTrack(id, &random, allowNaN: true)
                        try store.batch {
                            try store.write { tx in _ = try tx[Self.tracks].update(id) { $0 = changed } }
                            try store.write { tx in try randomWrite(tx) }
                            try store.write { tx in try tx[Self.tracks].upsert(original) }
                        }
                    }
                case 8:
                    label = "failing write"
                    struct Refused: Error {}
                    let before = store.state
                    do {
                        try store.write { tx in
                            try randomWrite(tx)
                            throw Refused()
                        }
                    } catch is Refused {}
                    #expect(store.state.revision == before.revision, "step \(step): a failed write left a trace")
                case 9:
                    label = "large commit"
                    try store.write { tx in
                        for _ in 0..<Int.random(in: 100...300, using: &random) {
                            if Bool.random(using: &random) || tx.current[Self.tracks].count < 20 {
                                nextID += 1
                                try tx[Self.tracks].insert(Self.randomTrack(nextID, &random, allowNaN: false))
                            } else if let id = tx.current[Self.tracks].ids.randomElement(using: &random) {
                                _ = try tx[Self.tracks].remove(id)
                            }
                        }
                    }
                case 10:
                    label = "replaceAll"
                    try store.replaceAll(with: kept.randomElement(using: &random) ?? store.state)
                case 11, 12:
                    label = "undo as a raw core commit"
                    let later = store.state
                    let earlier = kept.randomElement(using: &random) ?? later
                    try store.core.commit { $0 = earlier }
                    if Bool.random(using: &random) {
                        label = "undo and redo as raw core commits"
                        try store.core.commit { $0 = later }
                    }
                case 13:
                    label = "snapshot"
                    if hasNaN(store.state) {
                        #expect(throws: SnapshotError.self) { try store.snapshot(to: snapshotPath) }
                    } else {
                        let state = store.state
                        try store.snapshot(to: snapshotPath)
                        snapshotState = state
                    }
                case 14:
                    label = "restore from the snapshot file"
                    if let snapshotState {
                        try store.restore(from: snapshotPath)
                        // A restored table's insertion order is ID order (docs/SnapshotFormat.md).
                        let (restored, saved) = (Self.byID(store.state), Self.byID(snapshotState))
                        #expect(Self.sameRows(restored, saved), "step \(step): the restore, \(Self.firstDifference(restored, saved))")
                    }
                case 15, 16:
                    label = "SnapshotFile save"
                    if let open = file {
                        if hasNaN(store.state) {
                            #expect(throws: SnapshotError.self) { try open.save() }
                        } else {
                            try open.save()
                        }
                    } else if !hasNaN(store.state) {
                        label = "SnapshotFile reopened"
                        file = try SnapshotFile(store: store, path: filePath)
                    }
                case 17:
                    label = "SnapshotFile closed, restored from, reopened"
                    if let open = file {
                        let saved = open.savedState
                        try open.close()
                        file = nil
                        let reader = try Self.makeStore()
                        try reader.restore(from: filePath)
                        let (restored, expected) = (Self.byID(reader.state), Self.byID(saved))
                        #expect(Self.sameRows(restored, expected), "step \(step): the file's saves, \(Self.firstDifference(restored, expected))")
                        // Reopened now, or at a later save once the store holds no NaN.
                        if !hasNaN(store.state) { file = try SnapshotFile(store: store, path: filePath) }
                    }
                default:
                    label = "readers created and released"
                    if !readers.isEmpty, Bool.random(using: &random) {
                        readers.remove(at: Int.random(in: 0..<readers.count, using: &random))
                    }
                    readers += Self.randomReader(&random, store: store)
                }
                if Int.random(in: 0..<4, using: &random) == 0 {
                    kept.append(store.state)
                    if kept.count > 6 { kept.remove(at: Int.random(in: 0..<kept.count, using: &random)) }
                }
                let state = store.state
                var problems: [String] = []
                for reader in readers { problems += reader.check(state) }
                if step % 10 == 0 { problems += state.invariantViolations().prefix(3) }
                if !problems.isEmpty {
                    let listed = problems.prefix(8).joined(separator: "\n  ")
                    Issue.record(Comment(rawValue: "seed \(seed), step \(step) (\(label)):\n  \(listed)"))
                    return
                }
            }
            _ = readers
        }
    }

    // MARK: The concurrent variant

    // Its cases one at a time: each keeps every published state and runs threads of its own.
    @Test("writers, creators and readers on several threads: every delivery is its revision's value", .threadsOfItsOwn, .serialized,
          arguments: Soak.seeds([7], soak: 7...16))
    func concurrentCommitsAndReaders(seed: UInt64) async throws {
        let store = try Self.makeStore()
        try store.write { tx in
            for id in 0..<4 { try tx[Self.albums].insert(Album(id: id, title: "album \(id)")) }
            var random = SplitMix64(seed: seed)
            for id in 0..<20 { try tx[Self.tracks].insert(Self.randomTrack(id, &random, allowNaN: false)) }
        }
        // Every published state, by revision: a delivery names the revision it reflects.
        let states = Lock<[UInt64: EntityState]>([store.state.revision: store.state])
        let hook = store.core.addPublishHook(startingWith: { _ in }) { changes in
            states.withLock { $0[changes.current.revision] = changes.current }
        }
        defer { hook.cancel() }
        let deliveries = Lock<[(spec: Int, revision: UInt64, rows: [Track])]>([])
        let created = Lock<[(spec: Int, live: LiveList<Track>, token: Observation)]>([])
        // Joins, group-bys and derived queries created meanwhile, each with its client
        // rebuilt from its diffs: at quiescence, equal to the recomputation.
        let readers = Lock<[Reader]>([])
        let steps = Soak.pick(150, soak: 1_500)
        let writers = Soak.pick(2, soak: 3)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    try await onOwnThread {
                        var random = SplitMix64(seed: seed &* 31 &+ UInt64(writer))
                        for step in 0..<steps {
                            try store.write { tx in
                                let id = Int.random(in: 0..<40, using: &random)
                                switch Int.random(in: 0..<3, using: &random) {
                                case 0: _ = try tx[Self.tracks].remove(id)
                                default: try tx[Self.tracks].upsert(Self.randomTrack(id, &random, allowNaN: step % 17 == 0))
                                }
                            }
                        }
                    }
                }
            }
            group.addTask {
                await onOwnThread {
                    var random = SplitMix64(seed: seed &+ 99)
                    for _ in 0..<steps / 5 {
                        let index = Int.random(in: 0..<Self.rowSpecs.count, using: &random)
                        let live = store.live(Self.rowSpecs[index].query)
                        let token = live.observe { update in
                            deliveries.withLock { $0.append((index, update.revision, Array(update.value))) }
                        }
                        created.withLock { $0.append((index, live, token)) }
                        let spec = Self.rowSpecs[Int.random(in: 0..<Self.rowSpecs.count, using: &random)]
                        let made: [Reader] = switch Int.random(in: 0..<4, using: &random) {
                        case 0: [Self.joinReader(spec, store: store)]
                        case 1: [Self.groupReader(spec, store: store)]
                        case 2: [Self.rankGroupReader(store: store)]
                        default: Self.derivedReaders(store: store, id: Int.random(in: 0..<40, using: &random))
                        }
                        readers.withLock { $0 += made }
                    }
                }
            }
            try await group.waitForAll()
        }
        let (published, delivered, alive) = (states.withLock { $0 }, deliveries.withLock { $0 }, created.withLock { $0 })
        var wrong: [String] = []
        for delivery in delivered {
            guard let state = published[delivery.revision] else {
                wrong.append("a delivery names revision \(delivery.revision), which was never published")
                continue
            }
            let expected = Self.rowSpecs[delivery.spec].rows(in: state)
            if !Self.sameRows(delivery.rows, expected) { wrong.append("\(Self.rowSpecs[delivery.spec].name) at revision \(delivery.revision)") }
        }
        let final = store.state
        for entry in alive where !Self.sameRows(Array(entry.live.value), Self.rowSpecs[entry.spec].rows(in: final)) {
            wrong.append("\(Self.rowSpecs[entry.spec].name) at quiescence")
        }
        for reader in readers.withLock({ $0 }) {
            wrong += reader.check(final).map { "at quiescence: \($0)" }
        }
        #expect(wrong.isEmpty, "\(wrong.count) wrong, first: \(wrong.prefix(5))")
        #expect(!delivered.isEmpty)
    }
}

