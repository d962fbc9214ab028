import EntityStoreSQLite
import Foundation
import Testing

/// The version 1 metadata script, from the package's `Migrations` folder.
private let formatOneSQL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Migrations/0001_initial.sql")

@Suite("entity-store migrate upgrades a format 1 snapshot")
struct FormatUpgradeTests {
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
