import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
import Testing

/// The package's `Migrations` folder.
private let migrations = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Migrations")

/// The version 1 metadata script.
private let formatOneSQL = migrations.appendingPathComponent("0001_initial.sql")

@Suite("entity-store migrate upgrades format 1 and 2 snapshots", .threadsOfItsOwn)
struct FormatUpgradeTests {
    /// A format 2 file as the previous tool wrote a field with nulls: JSON text ('227.0',
    /// '"UA"', 'null'), which SQL compared as text. Queries read it as it is; `migrate`
    /// gives it SQL-true columns, after which sqlite3 counts truly and the records are
    /// the same.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: sqlite3.path), "needs /usr/bin/sqlite3"))
    func migrateFormatTwoJSONColumns() throws {
        try withScratch { scratch in
            let snapshot = scratch.path("old.sqlite")
            var script = try String(contentsOf: formatOneSQL, encoding: .utf8)
            script += try String(contentsOf: migrations.appendingPathComponent("0002_date_text.sql"), encoding: .utf8)
            script += """
                PRAGMA application_id = 1164858228; PRAGMA user_version = 2;
                CREATE TABLE "flights" ("id" INTEGER PRIMARY KEY, "dep_delay", "carrier");
                INSERT INTO flights VALUES (1, '227.0', '"UA"'), (2, '5.0', 'null'), (3, 'null', '"AA"'), (4, '61.0', NULL), (5, '9.5', '"UA"');
                INSERT INTO entitystore_meta VALUES ('format_version', '2'), ('app_schema_version', '0');
                INSERT INTO entitystore_tables VALUES ('flights', 'DynamicRecord', 'integer', 5, 0);
                INSERT INTO entitystore_columns VALUES ('flights', 'id', 'integer', 0, 0), ('flights', 'dep_delay', 'json', 1, 1),
                    ('flights', 'carrier', 'json', 1, 2);
                """
            let created = run(["-batch", snapshot], stdin: Data(script.utf8), executable: sqlite3)
            #expect(created.status == 0, "\(created)")
            let sql = ["-batch", "-readonly", snapshot, "SELECT count(*) FROM flights WHERE dep_delay > 60;"]
            #expect(run(sql, executable: sqlite3).stdout == "5\n", "format 2 compares JSON text with a number")

            // Queries read an upgraded private copy; here they run on a copy of the file.
            let copy = try scratch.write("copy.sqlite", try scratch.read("old.sqlite"))
            #expect(run(["query", copy, "flights", "--where", "dep_delay>60", "--count"]).stdout == "2\n")
            #expect(run(["query", copy, "flights", "--where", "carrier=UA", "--count"]).stdout == "2\n")
            let before = run(["export", copy])

            let migrated = run(["migrate", snapshot])
            #expect(migrated.stdout == "migrated \(snapshot) from format version 2 to \(Snapshot.formatVersion)\n", "\(migrated)")
            #expect(run(["verify", snapshot]).status == 0)
            #expect(run(sql, executable: sqlite3).stdout == "2\n")
            #expect(run(["-batch", "-readonly", snapshot, "SELECT typeof(dep_delay), typeof(carrier) FROM flights WHERE id = 1;"], executable: sqlite3).stdout == "real|text\n")
            #expect(try parseJSON(run(["export", snapshot]).stdout) == parseJSON(before.stdout), "the same records")
            #expect(run(["query", snapshot, "flights", "--where", "dep_delay>60", "--count"]).stdout == "2\n")
            #expect(run(["migrate", snapshot]).stdout == "\(snapshot) is already at format version \(Snapshot.formatVersion)\n")
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: sqlite3.path), "needs /usr/bin/sqlite3"))
    func migrateFormatOneDates() throws {
        try withScratch { scratch in
            // A format 1 snapshot as the previous library wrote it: dates as REAL seconds since 1970.
            let snapshot = scratch.path("old.sqlite")
            let script = try String(contentsOf: formatOneSQL, encoding: .utf8) + """
                PRAGMA application_id = 1164858228; PRAGMA user_version = 1;
                CREATE TABLE "events" ("id" INTEGER PRIMARY KEY, "when");
                INSERT INTO events VALUES (1, 1700000000.25), (2, 0.1), (3, NULL);
                INSERT INTO entitystore_meta VALUES ('format_version', '1'), ('app_schema_version', '0');
                INSERT INTO entitystore_tables VALUES ('events', 'Event', 'integer', 3, 0);
                INSERT INTO entitystore_columns VALUES ('events', 'id', 'integer', 0, 0), ('events', 'when', 'date', 1, 1);
                """
            let created = run(["-batch", snapshot], stdin: Data(script.utf8), executable: sqlite3)
            #expect(created.status == 0, "\(created)")

            let migrated = run(["migrate", snapshot])
            #expect(migrated.status == 0, "\(migrated)")
            #expect(migrated.stdout == "migrated \(snapshot) from format version 1 to \(Snapshot.formatVersion)\n")
            #expect(run(["verify", snapshot]).status == 0)
            let dates = run(["-batch", "-readonly", snapshot, "SELECT \"when\", date(\"when\") FROM events ORDER BY id;"], executable: sqlite3)
            // 0.1 s after 1970 becomes the Date the old reader made of it (-978,307,199.9 s from
            // 2001), whose shortest decimal shows as .1.
            #expect(dates.stdout == "2023-11-14T22:13:20.25+00:00|2023-11-14\n1970-01-01T00:00:00.1+00:00|1970-01-01\n|\n", "\(dates)")
            let exported = run(["export", snapshot])
            #expect(exported.status == 0, "\(exported)")
            #expect(exported.stdout.contains("\"2023-11-14T22:13:20.25+00:00\""), "\(exported)")
        }
    }
}
