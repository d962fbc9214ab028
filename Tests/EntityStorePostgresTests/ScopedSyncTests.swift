#if PostgreSQL
import EntityStore
import EntityStoreCodec
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import StoreCore
import Testing

struct Ticket: Entity {
    var id: Int
    var owner: Int
    var title: String
}

struct Note: Entity {
    var id: String
    var text: String
}

let tickets = Table<Ticket>("tickets").grouped(\.owner)
let notes = Table<Note>("notes")

/// Tickets of owner 1, and nothing of the other tables.
func ownerOne() throws -> PostgresSelection {
    PostgresSelection.tables(["tickets"]).filtering("tickets", try .field("owner", equals: 1))
}

/// A store of tickets and notes and its sync, holding `selection`, opened.
func scopedReplica(_ target: PostgresTarget, _ selection: PostgresSelection) async throws -> (EntityStore, PostgresSync) {
    let store = try EntityStore { tickets; notes }
    var options = PostgresSync.Options()
    options.retryDelay = .milliseconds(20)
    let sync = PostgresSync(store: store, target: target, selection: selection, options: options)
    try await sync.open()
    return (store, sync)
}

/// A whole replica of tickets and notes, opened (creating the store).
func fullTicketReplica(_ target: PostgresTarget) async throws -> (EntityStore, PostgresSync) {
    let store = try EntityStore { tickets; notes }
    let sync = PostgresSync(store: store, target: target)
    try await sync.open()
    return (store, sync)
}

/// What a fresh partial load of `selection` holds: tickets and notes, sorted by ID.
func freshLoad(_ target: PostgresTarget, _ selection: PostgresSelection) async throws -> ([Ticket], [Note]) {
    let store = try EntityStore { tickets; notes }
    try await store.restore(from: target, selection: selection)
    return (store.state[tickets].all().sorted { $0.id < $1.id }, store.state[notes].all().sorted { $0.id < $1.id })
}

func contents(_ store: EntityStore) -> ([Ticket], [Note]) {
    (store.state[tickets].all().sorted { $0.id < $1.id }, store.state[notes].all().sorted { $0.id < $1.id })
}

@Suite("Scoped replicas", .enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn)
struct ScopedSyncTests {
    @Test("a scoped replica loads its selection; pulls bring changes inside it, rows moving in, and remove rows moving out or removed")
    func movesInAndOut() async throws {
        let target = try await TestServer.target("scope")
        defer { Task { await TestServer.drop(target) } }
        let (full, fullSync) = try await fullTicketReplica(target)
        try full.write { tx in
            for id in 1...30 { try tx[tickets].insert(Ticket(id: id, owner: id % 3 + 1, title: "t\(id)")) }
            try tx[notes].insert(Note(id: "n1", text: "hello"))
        }
        try await fullSync.push()

        let (scoped, sync) = try await scopedReplica(target, try ownerOne())
        #expect(scoped.state[tickets].ids.sorted() == [3, 6, 9, 12, 15, 18, 21, 24, 27, 30])
        #expect(scoped.state[notes].count == 0)
        // Every commit the scoped store publishes, with the tickets it removed.
        let removedByCommit = Lock<[[Int]]>([])
        let observation = scoped.observe { changes in
            let removed = changes.current.changeSet[tickets].removed.keys.sorted()
            removedByCommit.withLock { $0.append(removed) }
        }
        defer { observation.cancel() }

        // A change inside the selection arrives.
        try full.write { tx in _ = try tx[tickets].update(3) { $0.title = "renamed" } }
        try await fullSync.push()
        #expect(try await sync.pull().rows == 1)
        #expect(scoped.state[tickets].find(3)?.title == "renamed")

        // Moving out: the row is removed locally, in the pull's one commit.
        try full.write { tx in
            _ = try tx[tickets].update(6) { $0.owner = 2 }
            _ = try tx[tickets].update(9) { $0.owner = 3 }
        }
        try await fullSync.push()
        #expect(try await sync.pull().rows == 2)
        #expect(scoped.state[tickets].find(6) == nil)
        #expect(scoped.state[tickets].find(9) == nil)
        #expect(try await eventually(.seconds(10)) { removedByCommit.withLock { $0.contains([6, 9]) } })

        // Moving in: rows that now match appear, with their current values.
        try full.write { tx in
            _ = try tx[tickets].update(1) { $0.owner = 1; $0.title = "moved in" }
            _ = try tx[tickets].update(6) { $0.owner = 1 }
        }
        try await fullSync.push()
        try await sync.pull()
        #expect(scoped.state[tickets].find(1) == Ticket(id: 1, owner: 1, title: "moved in"))
        #expect(scoped.state[tickets].find(6)?.owner == 1)

        // Out and in again between two pulls: the row stays, with its last value; in and
        // out again: it never appears.
        try full.write { tx in _ = try tx[tickets].update(12) { $0.owner = 2 } }
        try await fullSync.push()
        try full.write { tx in _ = try tx[tickets].update(12) { $0.owner = 1; $0.title = "back" } }
        try await fullSync.push()
        try full.write { tx in _ = try tx[tickets].update(2) { $0.owner = 1 } }
        try await fullSync.push()
        try full.write { tx in _ = try tx[tickets].update(2) { $0.owner = 3 } }
        try await fullSync.push()
        try await sync.pull()
        #expect(scoped.state[tickets].find(12)?.title == "back")
        #expect(scoped.state[tickets].find(2) == nil)

        // Removals inside the selection arrive; changes to unselected tables and to rows
        // outside the condition change nothing locally.
        try full.write { tx in
            _ = try tx[tickets].remove(15)
            _ = try tx[tickets].update(4) { $0.title = "elsewhere" }
            try tx[notes].insert(Note(id: "n2", text: "not here"))
        }
        try await fullSync.push()
        #expect(try await sync.pull().rows == 1)
        #expect(scoped.state[tickets].find(15) == nil)
        #expect(scoped.state[notes].count == 0)

        #expect(contents(scoped) == (try await freshLoad(target, try ownerOne())))
        #expect(sync.position == fullSync.position)
    }

    @Test("a scoped replica refuses a local write outside its selection at its commit, naming the table, the row and the selection")
    func refusesWritesOutside() async throws {
        let target = try await TestServer.target("scopew")
        defer { Task { await TestServer.drop(target) } }
        // A scoped replica does not create a missing store.
        let lone = PostgresSync(store: try EntityStore { tickets; notes }, target: target, selection: try ownerOne())
        await #expect(throws: PostgresStoreError.self) { try await lone.open() }

        let (full, fullSync) = try await fullTicketReplica(target)
        try full.write { tx in
            for id in 1...6 { try tx[tickets].insert(Ticket(id: id, owner: id % 2 + 1, title: "t\(id)")) }
        }
        try await fullSync.push()
        let (scoped, sync) = try await scopedReplica(target, try ownerOne())
        let before = scoped.revision

        func refusal(_ write: (Transaction) throws -> Void) -> String? {
            do {
                try scoped.write("write", write)
                return nil
            } catch let error as PostgresStoreError {
                guard case .invalidSelection = error else { return "not a selection error: \(error)" }
                return error.description
            } catch {
                return "not a PostgresStoreError: \(error)"
            }
        }
        // A row whose field does not match; a row of an unselected table; a row moved out.
        let inserted = refusal { tx in try tx[tickets].insert(Ticket(id: 100, owner: 2, title: "x")) }
        #expect(inserted == "selection: table 'tickets', id 100 lies outside this replica's selection (tickets where owner = 1): the write was refused")
        let note = refusal { tx in try tx[notes].insert(Note(id: "n", text: "x")) }
        #expect(note?.contains("table 'notes', id n lies outside this replica's selection") == true)
        let moved = refusal { tx in _ = try tx[tickets].update(2) { $0.owner = 2 } }
        #expect(moved?.contains("table 'tickets', id 2 lies") == true)
        // In a batch, the one commit outside refuses the batch.
        #expect(throws: PostgresStoreError.self) {
            try scoped.batch {
                try scoped.write { tx in try tx[tickets].insert(Ticket(id: 101, owner: 1, title: "in")) }
                try scoped.write { tx in try tx[tickets].insert(Ticket(id: 102, owner: 5, title: "out")) }
            }
        }
        #expect(scoped.revision == before)
        // Nothing became pending.
        #expect(try await sync.push().rows == 0)
        // write(retrying:) reports the refusal and writes nothing.
        await #expect(throws: PostgresStoreError.self) {
            try await sync.write { tx in try tx[tickets].insert(Ticket(id: 103, owner: 3, title: "out")) }
        }

        // Writes inside the selection push as usual.
        try scoped.write { tx in
            try tx[tickets].insert(Ticket(id: 200, owner: 1, title: "mine"))
            _ = try tx[tickets].update(2) { $0.title = "edited" }
            _ = try tx[tickets].remove(4)
        }
        #expect(try await sync.push().rows == 3)
        try await fullSync.pull()
        #expect(full.state[tickets].find(200)?.title == "mine")
        #expect(full.state[tickets].find(2)?.title == "edited")
        #expect(full.state[tickets].find(4) == nil)
        #expect(full.state[tickets].count == 6)
        let serverRows = try await TestServer.rows(target, "SELECT count(*) FROM \(SQL.qualified(target.schema, "tickets"))")
        #expect(serverRows == [["6"]])
    }

    @Test("a scoped replica's full reloads (pruned log, full snapshot) load only its selection and keep its local changes")
    func reloadsLoadTheSelection() async throws {
        let target = try await TestServer.target("scoper")
        defer { Task { await TestServer.drop(target) } }
        let (full, fullSync) = try await fullTicketReplica(target)
        try full.write { tx in
            for id in 1...20 { try tx[tickets].insert(Ticket(id: id, owner: id % 4, title: "t\(id)")) }
            try tx[notes].insert(Note(id: "n", text: "x"))
        }
        try await fullSync.push()
        let selection = PostgresSelection.all.filtering("tickets", try .field("owner", from: 1, below: 3))
        let (scoped, sync) = try await scopedReplica(target, selection)
        #expect(scoped.state[tickets].all().allSatisfy { (1..<3).contains($0.owner) })
        #expect(scoped.state[notes].count == 1)

        // A local change, pending over the reload.
        try scoped.write { tx in _ = try tx[tickets].update(1) { $0.title = "local" } }
        for id in 1...5 {
            try full.write { tx in _ = try tx[tickets].update(id + 4) { $0.owner = ($0.owner + 1) % 4 } }
            try await fullSync.push()
        }
        try await fullSync.prune(keepingAfter: fullSync.position - 1)
        let summary = try await sync.pull()
        #expect(summary.reloaded)
        #expect(scoped.state[tickets].find(1)?.title == "local")
        // Its base was pruned: the push reports the conflict (as a whole replica's does);
        // taking the server's value settles it.
        var refused: PostgresStoreError?
        do {
            try await sync.push()
        } catch {
            refused = error
        }
        guard case let .conflict(rows)? = refused else {
            Issue.record("a push over a pruned base did not report its conflict: \(String(describing: refused))")
            return
        }
        #expect(rows.map(\.description) == ["tickets 1"])
        try await sync.acceptServerValues(for: rows)
        #expect(scoped.state[tickets].find(1)?.title == "t1")
        #expect(contents(scoped) == (try await freshLoad(target, selection)))

        // A full snapshot replaces the store: the reload takes the selection of the new one.
        try full.write { tx in
            for id in 30...40 { try tx[tickets].insert(Ticket(id: id, owner: id % 4, title: "new")) }
        }
        try await fullSync.pull()
        try await full.snapshot(to: target)
        #expect(try await sync.pull().reloaded)
        #expect(contents(scoped) == (try await freshLoad(target, selection)))
        #expect(scoped.state[tickets].find(33)?.title == "new")
    }

    @Test("two scoped replicas and a whole one writing at random: at quiescence each scoped replica equals a fresh load of its selection",
          arguments: Soak.seeds(1...3, soak: 1...40))
    func randomScopedModel(seed: UInt64) async throws {
        let target = try await TestServer.target("scopem")
        defer { Task { await TestServer.drop(target) } }
        let (full, fullSync) = try await fullTicketReplica(target)
        var random = SplitMix64(seed: seed)
        try full.write { tx in
            for id in 1...40 { try tx[tickets].insert(Ticket(id: id, owner: Int.random(in: 0..<5, using: &random), title: "t\(id)")) }
            for id in 0..<5 { try tx[notes].insert(Note(id: "n\(id)", text: "v0")) }
        }
        try await fullSync.push()
        let selections = [
            PostgresSelection.all.filtering("tickets", try .field("owner", equals: 1)),
            PostgresSelection.tables(["tickets"]).filtering("tickets", try .field("owner", from: 2, below: 4)),
        ]
        var replicas: [(EntityStore, PostgresSync)] = []
        for selection in selections { replicas.append(try await scopedReplica(target, selection)) }
        let followers = replicas.map { replica in Task { await replica.1.start() } }

        // The whole replica: inserts, moves between owners, edits, removals, notes.
        let writer = Task { [random] in
            var random = random
            for step in 0..<60 {
                try await fullSync.write { tx in
                    let ids = tx[tickets].view.ids
                    switch Int.random(in: 0..<6, using: &random) {
                    case 0: _ = try tx[tickets].upsert(Ticket(id: 1000 + step, owner: Int.random(in: 0..<5, using: &random), title: "new"))
                    case 1, 2:
                        if let id = ids.randomElement(using: &random) {
                            let owner = Int.random(in: 0..<5, using: &random)
                            _ = try tx[tickets].update(id) { $0.owner = owner }
                        }
                    case 3: if let id = ids.randomElement(using: &random) { _ = try tx[tickets].update(id) { $0.title = "f\(step)" } }
                    case 4: if let id = ids.randomElement(using: &random) { _ = try tx[tickets].remove(id) }
                    default: _ = try tx[notes].upsert(Note(id: "n\(step % 5)", text: "v\(step)"))
                    }
                }
            }
        }
        // The scoped replicas: edits and inserts inside their selections, moves within it
        // (replica 1 between owners 2 and 3), and a write outside, always refused.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, replica) in replicas.enumerated() {
                let (store, sync) = replica
                group.addTask {
                    var random = SplitMix64(seed: seed &* 7 &+ UInt64(index))
                    let owners = index == 0 ? [1] : [2, 3]
                    for step in 0..<20 {
                        try await sync.write { tx in
                            let ids = tx[tickets].view.ids
                            switch Int.random(in: 0..<3, using: &random) {
                            case 0:
                                _ = try tx[tickets].upsert(Ticket(id: 10_000 * (index + 1) + step, owner: owners.randomElement(using: &random) ?? 1, title: "s\(index)"))
                            case 1:
                                if let id = ids.randomElement(using: &random) {
                                    let owner = owners.randomElement(using: &random) ?? 1
                                    _ = try tx[tickets].update(id) { $0.owner = owner; $0.title = "s\(index).\(step)" }
                                }
                            default:
                                if let id = ids.randomElement(using: &random) { _ = try tx[tickets].remove(id) }
                            }
                        }
                        if step % 5 == 0 {
                            #expect(throws: PostgresStoreError.self) {
                                try store.write { tx in _ = try tx[tickets].upsert(Ticket(id: 99_999, owner: 4, title: "outside")) }
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        try await writer.value
        // Quiescence: every replica reaches the head, and then holds what a fresh load does.
        try await fullSync.pull()
        let head = fullSync.position
        for (_, sync) in replicas { #expect(try await eventually(.seconds(30)) { sync.position >= head }) }
        for follower in followers { follower.cancel() }
        for follower in followers { await follower.value }
        for (index, (store, sync)) in replicas.enumerated() {
            try await sync.pull()
            let expected = try await freshLoad(target, selections[index])
            #expect(contents(store) == expected, "replica \(index), seed \(seed)")
            #expect(try await sync.push().rows == 0)
        }
        #expect(replicas[1].0.state[notes].count == 0)
        #expect(contents(full) == (try await freshLoad(target, .all)))
    }
}

/// How a scoped replica evaluates its condition locally, to refuse writes outside it.
@Suite("Scope conditions evaluated locally")
struct ScopeConditionTests {
    struct Row: Entity {
        var id: Int
        var owner: Int?
        var score: Double
        var name: String
        var when: Date
    }

    func matches(_ condition: PostgresCondition, _ row: Row) -> Bool {
        condition.matches(condition.value(of: row, encoder: RowEncoder(dialect: .postgres)))
    }

    @Test("equality and half-open ranges on integers, doubles, text, dates and IDs; NULL matches nothing")
    func matching() throws {
        let row = Row(id: 5, owner: 3, score: 2.5, name: "mañana", when: Date(timeIntervalSince1970: 100))
        #expect(matches(try .field("owner", equals: 3), row))
        #expect(!matches(try .field("owner", equals: 4), row))
        #expect(matches(try .field("owner", equals: 3.0), row))
        #expect(matches(try .field("owner", from: 3, below: 4), row))
        #expect(!matches(try .field("owner", from: 1, below: 3), row))
        #expect(matches(try .field("owner", from: nil as Int?, below: 10), row))
        #expect(matches(try .field("score", from: 2, below: 3), row))
        #expect(!matches(try .field("score", from: 2.6, below: nil as Double?), row))
        #expect(matches(try .field("name", equals: "mañana"), row))
        #expect(matches(try .field("name", from: "m", below: "n"), row))
        #expect(!matches(try .field("name", from: "n", below: nil as String?), row))
        #expect(matches(try .field("when", equals: Date(timeIntervalSince1970: 100)), row))
        #expect(matches(try .field("when", from: Date(timeIntervalSince1970: 99.5), below: Date(timeIntervalSince1970: 100.5)), row))
        #expect(!matches(try .field("when", from: Date(timeIntervalSince1970: 100.25), below: nil as Date?), row))
        #expect(matches(try .field("id", equals: 5), row))
        #expect(!matches(try .field("name", equals: 5), row))
        var empty = row
        empty.owner = nil
        #expect(!matches(try .field("owner", equals: 3), empty))
        #expect(!matches(try .field("owner", from: nil as Int?, below: nil as Int?), empty))
        #expect(!matches(try .field("missing", equals: 3), row))
    }

    @Test("a selection describes itself for its messages")
    func descriptions() throws {
        #expect(PostgresSelection.all.description == "all tables")
        #expect(try ownerOne().description == "tickets where owner = 1")
        let mixed = PostgresSelection.tables(["notes"]).filtering("tickets", try .field("title", from: "a", below: "m"))
        #expect(mixed.description == "notes; tickets where title >= 'a' and title < 'm'")
        #expect(PostgresSelection.all.filtering("tickets", try .field("owner", equals: 2)).description == "all tables, with tickets where owner = 2")
    }
}
#endif
