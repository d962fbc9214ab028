#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
import Testing

struct Reading: Entity {
    var id: Int
    var written: Date
    var checked: Date?
    var note: String
}

let readings = Table<Reading>("readings").ordered(\.written)

/// Instants of every shape: fractions, the far past and future, tiny and huge magnitudes.
let readingDates = [
    Date(timeIntervalSince1970: 1_795_773_062.75), Date(timeIntervalSinceReferenceDate: 123_456_789.123_456_7),
    Date(timeIntervalSince1970: 0), .distantPast, .distantFuture, Date(timeIntervalSinceReferenceDate: .leastNonzeroMagnitude),
    Date(timeIntervalSinceReferenceDate: -1e20), Date(timeIntervalSinceReferenceDate: 0.1),
]

/// A typed store of readings, one per date (every other one checked a second later).
func readingStore() throws -> EntityStore {
    let store = try EntityStore { readings }
    try store.write { tx in
        for (index, date) in readingDates.enumerated() {
            let checked = index.isMultiple(of: 2) ? date.addingTimeInterval(1) : nil
            try tx[readings].insert(Reading(id: index, written: date, checked: checked, note: "n\(index)"))
        }
    }
    return store
}

/// The `date` fields of the stored table `name`.
func storedDates(_ target: PostgresTarget, _ name: String) async throws -> [String] {
    let table = try await PostgresStore.metadata(of: target).table(named: name)
    return (table?.columns ?? []).filter { $0.kind == .date }.map(\.name)
}

@Suite("Dates between PostgreSQL and snapshot files", .enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn, .serialized)
struct DateKindTests {
    @Test("entity-store pull writes a date column as a date, which the typed app restores; pushed back, it is a date again")
    func pullAndPushKeepDates() async throws {
        let target = try await TestServer.target("dates")
        defer { Task { await TestServer.drop(target) } }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pg-dates-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try readingStore()
        try await store.snapshot(to: target)
        let tool = try product("entity-store")
        let address = try await url(of: target)

        let file = directory.appendingPathComponent("pulled.sqlite").path
        let pull = try Child(tool, ["pull", address, "--output", file])
        #expect(try await pull.finish() == 0, "\(pull.text)")
        let columns = try #require(Snapshot.metadata(at: file).tables.first { $0.name == "readings" }?.columns)
        #expect(columns.filter { $0.kind == .date }.map(\.name).sorted() == ["checked", "written"], "\(columns)")
        let fromFile = try EntityStore { readings }
        try fromFile.restore(from: file)
        #expect(fromFile.state[readings].all() == store.state[readings].all())

        // The file pushed back: the typed app reads the dates from PostgreSQL again.
        let push = try Child(tool, ["push", file, address])
        #expect(try await push.finish() == 0, "\(push.text)")
        #expect(try await storedDates(target, "readings").sorted() == ["checked", "written"])
        let fromServer = try EntityStore { readings }
        try await fromServer.restore(from: target)
        #expect(fromServer.state[readings].all() == store.state[readings].all())
    }

    @Test("a dynamic restore gives a date column's values as their date text, as a snapshot file's does")
    func dynamicDatesAreDateText() async throws {
        let target = try await TestServer.target("dates")
        defer { Task { await TestServer.drop(target) } }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("dates-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try readingStore()
        try store.snapshot(to: path)
        try await store.snapshot(to: target)
        let fromServer = try await EntityStore.restoringDynamic(from: target)
        let fromFile = try EntityStore.restoringDynamic(from: path)
        let serverRecords = records(fromServer.state, "readings")
        #expect(serverRecords == records(fromFile.state, "readings"))
        #expect(serverRecords.first?.fields["written"] == .string("2026-11-27T09:51:02.75+00:00"))

        // Dynamic records written back keep the column a date when named so; a value that
        // is not a date's text is refused, naming the field.
        try await fromServer.snapshot(to: target, dateFields: ["readings": ["written", "checked"]])
        #expect(try await storedDates(target, "readings").sorted() == ["checked", "written"])
        let typed = try EntityStore { readings }
        try await typed.restore(from: target)
        #expect(typed.state[readings].all() == store.state[readings].all())
        let refused = await #expect(throws: PostgresStoreError.self) {
            try await fromServer.snapshot(to: target, dateFields: ["readings": ["note"]])
        }
        let message = refused?.description ?? ""
        #expect(message.contains("field 'note' of record") && message.contains(", not a date"), "\(message)")
    }

    @Test("a dynamic replica sees a date as its text, and pushes one back into the date column")
    func dynamicSyncKeepsDates() async throws {
        let target = try await TestServer.target("dates")
        defer { Task { await TestServer.drop(target) } }
        try await readingStore().snapshot(to: target)
        let dynamic = try await EntityStore.restoringDynamic(from: target)
        let sync = PostgresSync(store: dynamic, target: target)
        try await sync.open()
        let table = Table<DynamicRecord>("readings")
        try dynamic.write { tx in
            _ = try tx[table].update(.integer(1)) { $0.fields["written"] = "2030-01-02T03:04:05.5+00:00" }
        }
        try await sync.push()
        await sync.close()
        let typed = try EntityStore { readings }
        try await typed.restore(from: target)
        #expect(typed.state[readings].find(1)?.written == Date(timeIntervalSince1970: 1_893_553_445.5))
    }
}

/// The dynamic records of `table` in `state`, by id.
func records(_ state: EntityState, _ table: String) -> [DynamicRecord] {
    state[Table<DynamicRecord>(table)].all().sorted { $0.id < $1.id }
}
#endif
