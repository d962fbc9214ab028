import EntityStoreTestSupport
import EntityStore
import EntityStoreMigrations
import EntityStoreSQLite
import Foundation
import Testing

/// A date wrapped as a single value: stored in its column like a plain date.
private struct Stamp: Codable, Sendable, Equatable {
    let value: Date

    init(_ value: Date) { self.value = value }

    init(from decoder: any Decoder) throws {
        value = try decoder.singleValueContainer().decode(Date.self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

private struct Event: Entity {
    var id: Int
    var name: String
    var when: Date
    var until: Date?
    var stamp: Stamp
}

private let events = Table<Event>("events").ordered(\.when)

/// One row as the format 1 writer stored it: dates as seconds since 1970.
private struct OldRow {
    var id: Int
    var when: SQLiteValue
    var until: SQLiteValue
    var stamp: SQLiteValue
}

/// Writes a snapshot in format 1's layout, as the previous version of the library did:
/// the version 1 metadata, REAL seconds since 1970 in date columns.
private func writeFormatOne(_ rows: [OldRow], to path: String) throws {
    let initial = try #require(try FormatMigrations.bundled.get().first)
    let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
    try connection.execute(initial.sql)
    try connection.execute("PRAGMA application_id = \(entityStoreApplicationID); PRAGMA user_version = 1;")
    try connection.execute("""
        CREATE TABLE "events" ("id" INTEGER PRIMARY KEY, "name" TEXT, "when", "until", "stamp");
        INSERT INTO entitystore_meta VALUES ('format_version', '1'), ('app_schema_version', '0'), ('library', 'EntityStore'),
            ('created_at', '2025-01-01T00:00:00Z');
        INSERT INTO entitystore_tables VALUES ('events', 'Event', 'integer', \(rows.count), 0);
        INSERT INTO entitystore_columns VALUES ('events', 'id', 'integer', 0, 0), ('events', 'name', 'string', 0, 1),
            ('events', 'when', 'date', 0, 2), ('events', 'until', 'date', 1, 3), ('events', 'stamp', 'date', 0, 4);
        INSERT INTO entitystore_indexes VALUES ('events', 'when', 'ordered', 'when');
        CREATE INDEX "entitystore_index_events_when" ON "events" ("when");
        """)
    try connection.transaction {
        let insert = try connection.prepare("INSERT INTO events (id, name, \"when\", until, stamp) VALUES (?, ?, ?, ?, ?)")
        for row in rows {
            try insert.run([.integer(Int64(row.id)), .text("event \(row.id)"), row.when, row.until, row.stamp])
        }
    }
    try connection.close()
}

/// What the format 1 reader made of a stored date.
private func oldReading(_ value: SQLiteValue) -> Date? {
    switch value {
    case .real(let seconds): Date(timeIntervalSince1970: seconds)
    case .integer(let seconds): Date(timeIntervalSince1970: Double(seconds))
    default: nil
    }
}

/// Format 1 rows of present-day and far dates, as the old writer stored them, with a few
/// integers (written by other tools) and NULLs.
private func oldRows() -> [OldRow] {
    var generator = SplitMix64(seed: 21)
    let dates = dateSeconds(400, seed: 9).filter { abs($0) < 1e15 }.map { Date(timeIntervalSinceReferenceDate: $0) }
    var rows = dates.enumerated().map { offset, date in
        OldRow(
            id: offset + 1, when: .real(date.timeIntervalSince1970),
            until: offset % 3 == 0 ? .null : .real(date.timeIntervalSince1970 + Double.random(in: 0...1e6, using: &generator)),
            stamp: .real(Date(timeIntervalSinceReferenceDate: Double(offset) + 0.1).timeIntervalSince1970))
    }
    rows.append(OldRow(id: rows.count + 1, when: .integer(1_700_000_000), until: .integer(-1), stamp: .real(0.1)))
    return rows
}

@Suite("Format 1 snapshots (dates as REAL seconds) upgrade to exact date text")
struct DateFormatUpgradeTests {
    @Test("restore upgrades the file, giving the dates the format 1 reader gave")
    func restoreUpgrades() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("format1.sqlite").path
            let rows = oldRows()
            try writeFormatOne(rows, to: path)
            #expect(try Snapshot.metadata(at: path).formatVersion == 1)
            #expect(Snapshot.verify(at: path).problems == [], "a format 1 file is sound as format 1")

            let store = EntityStore(schema: try Schema { events })
            try store.restore(from: path)
            #expect(store.state[events].count == rows.count)
            for row in rows {
                let event = try #require(store.state[events].find(row.id))
                #expect(event.when.timeIntervalSinceReferenceDate.bitPattern == oldReading(row.when)?.timeIntervalSinceReferenceDate.bitPattern)
                #expect(event.until?.timeIntervalSinceReferenceDate.bitPattern == oldReading(row.until)?.timeIntervalSinceReferenceDate.bitPattern)
                #expect(event.stamp.value == oldReading(row.stamp))
            }

            // The file is now of the current format: text dates, its SQL index intact, sound.
            let metadata = try Snapshot.metadata(at: path)
            #expect(metadata.formatVersion == Snapshot.formatVersion)
            #expect(metadata.facts["format_version"] == String(Snapshot.formatVersion))
            #expect(try sqlRows(path, "SELECT DISTINCT typeof(\"when\") FROM events") == [[.text("text")]])
            #expect(try sqlRows(path, "SELECT DISTINCT typeof(until) FROM events ORDER BY 1") == [[.text("null")], [.text("text")]])
            #expect(try sqlValue(path, "SELECT \"when\" FROM events WHERE id = \(rows.count)") == .text("2023-11-14T22:13:20+00:00"))
            #expect(try sqlValue(path, "SELECT until FROM events WHERE id = \(rows.count)") == .text("1969-12-31T23:59:59+00:00"))
            #expect(try sqlValue(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'entitystore_index_events_when'") == .integer(1))
            #expect(Snapshot.verify(at: path).problems == [])

            // From here on dates are exact, also through an incremental save.
            let file = try SnapshotFile(store: store, path: path, writeInitialSnapshot: false)
            let fine = Date(timeIntervalSinceReferenceDate: 0.1)
            try store.write { tx in try tx[events].update(1) { $0.when = fine } }
            try file.save()
            try file.close()
            let again = EntityStore(schema: try Schema { events })
            try again.restore(from: path)
            #expect(again.state[events].find(1)?.when.timeIntervalSinceReferenceDate.bitPattern == fine.timeIntervalSinceReferenceDate.bitPattern)
            #expect(rows.dropFirst().allSatisfy { again.state[events].find($0.id) == store.state[events].find($0.id) })
        }
    }

    @Test("Snapshot.migrate upgrades the file in place, once")
    func migrateInPlace() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("format1.sqlite").path
            let rows = oldRows()
            try writeFormatOne(rows, to: path)
            let result = try Snapshot.migrate(at: path)
            #expect(result.from == 1 && result.to == Snapshot.formatVersion)
            #expect(Snapshot.verify(at: path).problems == [])
            let expected = rows.compactMap { oldReading($0.when) }
            let stored = try sqlRows(path, "SELECT \"when\" FROM events ORDER BY id").compactMap { row -> Date? in
                guard case let .text(text)? = row.first else { return nil }
                return try DateText.date(parsing: text)
            }
            #expect(stored.map(\.timeIntervalSinceReferenceDate.bitPattern) == expected.map(\.timeIntervalSinceReferenceDate.bitPattern))
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            let second = try Snapshot.migrate(at: path)
            #expect(second.from == Snapshot.formatVersion && second.to == Snapshot.formatVersion)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        }
    }

    @Test("an infinite date stops the upgrade with the table and column named, and the file stays format 1")
    func infiniteDate() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("infinite.sqlite").path
            var rows = oldRows()
            rows[3].until = .real(.infinity)
            try writeFormatOne(rows, to: path)
            let error = #expect(throws: SnapshotError.self) { try Snapshot.migrate(at: path) }
            guard case .invalidData(let table, let detail)? = error else {
                Issue.record("expected invalidData, got \(String(describing: error))")
                return
            }
            #expect(table == "events")
            #expect(detail.contains("'until'") && detail.contains("inf") && detail.contains("not a finite date"), "\(detail)")
            #expect(try Snapshot.metadata(at: path).formatVersion == 1)
            #expect(try sqlValue(path, "SELECT typeof(\"when\") FROM events WHERE id = 1") == .text("real"))
            let store = EntityStore(schema: try Schema { events })
            #expect(throws: SnapshotError.self) { try store.restore(from: path) }
            #expect(store.state[events].count == 0)
        }
    }

    @Test("a stored date text that is not a date names the table and column")
    func badDateText() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("bad.sqlite").path
            let store = EntityStore(schema: try Schema { events })
            try store.write { tx in
                try tx[events].insert(Event(id: 1, name: "a", when: Date(), until: nil, stamp: Stamp(Date(timeIntervalSince1970: 0))))
            }
            try store.snapshot(to: path)
            try sqlExecute(path, "UPDATE events SET \"when\" = '2026-02-30T00:00:00+00:00'")
            let error = #expect(throws: SnapshotError.self) { try EntityStore(schema: try Schema { events }).restore(from: path) }
            #expect(error?.description.contains("'when'") == true && error?.description.contains("does not exist") == true, "\(String(describing: error))")
            // (A number would become text in the TEXT column; a blob stays a blob.)
            try sqlExecute(path, "UPDATE events SET \"when\" = x'01'")
            #expect(Snapshot.verify(at: path).problems.contains { $0.contains("'when'") && $0.contains("date") })
            #expect(throws: SnapshotError.self) { try EntityStore(schema: try Schema { events }).restore(from: path) }
            #expect(throws: SnapshotError.self) { try EntityStore.restoringDynamic(from: path) }
        }
    }

    @Test("an infinite date cannot be snapshotted, and the error names the table")
    func infiniteDateWrite() throws {
        try withTemporaryDirectory { directory in
            let store = EntityStore(schema: try Schema { events })
            try store.write { tx in
                try tx[events].insert(Event(
                    id: 1, name: "a", when: Date(timeIntervalSinceReferenceDate: .infinity), until: nil, stamp: Stamp(Date())))
            }
            let error = #expect(throws: SnapshotError.self) { try store.snapshot(to: directory.appendingPathComponent("x.sqlite").path) }
            guard case .encodingFailed(let table, let detail)? = error else {
                Issue.record("expected encodingFailed, got \(String(describing: error))")
                return
            }
            #expect(table == "events" && detail.contains("not finite"), "\(detail)")
        }
    }

    @Test("dynamic readers see date columns as their text")
    func dynamicDates() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("dynamic.sqlite").path
            let store = EntityStore(schema: try Schema { events })
            let when = Date(timeIntervalSince1970: 1_700_000_000.25)
            try store.write { tx in
                try tx[events].insert(Event(id: 1, name: "a", when: when, until: nil, stamp: Stamp(when)))
            }
            try store.snapshot(to: path)
            let dynamic = try EntityStore.restoringDynamic(from: path)
            let record = try #require(dynamic.state[Table<DynamicRecord>("events")].find(1))
            #expect(record[field: "when"] == .string("2023-11-14T22:13:20.25+00:00"))
            #expect(record[field: "stamp"] == .string("2023-11-14T22:13:20.25+00:00"))
        }
    }
}
