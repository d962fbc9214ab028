import EntityStoreSQLite
import Foundation

/// Snapshots of formats 1 and 2 as the previous libraries wrote them, built with SQL:
/// the fixtures of the package's own older formats, shared by the test targets.
public enum OldFormatSnapshots {
    /// The package's `Migrations` folder.
    private static let migrations = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Migrations")

    private static func script(_ name: String) throws -> String {
        try String(contentsOf: migrations.appendingPathComponent(name), encoding: .utf8)
    }

    /// A format 2 file: `flights` (integer ids; JSON text in the fields with nulls, as the
    /// format 2 tool wrote them; a text column with canonically equivalent spellings) and
    /// `carriers` (string ids), with a relation `flights.carrier -> carriers`. With
    /// `extraFlights`, that many more flights, for a file that takes a while to read.
    public static func formatTwo(at path: String, extraFlights: Int = 0) throws {
        let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
        try connection.execute(try script("0001_initial.sql") + script("0002_date_text.sql"))
        try connection.execute("""
            PRAGMA application_id = 1164858228; PRAGMA user_version = 2;
            CREATE TABLE "flights" ("id" INTEGER PRIMARY KEY, "dep_delay", "carrier", "tailnum" TEXT);
            INSERT INTO flights VALUES (1, '227.0', '"UA"', 'N14228'), (2, '5.0', 'null', 'é'), (3, 'null', '"AA"', 'e\u{301}'),
                (4, '61.0', NULL, NULL), (5, '9.5', '"UA"', 'f'), (6, '-3', '"B6"', 'E'), (7, '12', '"e\u{301}"', 'Ω');
            WITH RECURSIVE n(i) AS (SELECT 8 UNION ALL SELECT i + 1 FROM n WHERE i < \(7 + extraFlights))
                INSERT INTO flights SELECT i, CAST(i % 300 AS TEXT) || '.0', '"UA"', 'N' || (i % 997) FROM n WHERE \(extraFlights) > 0;
            CREATE TABLE "carriers" ("id" TEXT PRIMARY KEY NOT NULL, "name" TEXT);
            INSERT INTO carriers VALUES ('UA', 'United'), ('AA', 'American'), ('é', 'Accented');
            INSERT INTO entitystore_meta VALUES ('format_version', '2'), ('app_schema_version', '0');
            INSERT INTO entitystore_tables VALUES ('flights', 'DynamicRecord', 'integer', \(7 + extraFlights), 0),
                ('carriers', 'DynamicRecord', 'string', 3, 1);
            INSERT INTO entitystore_columns VALUES ('flights', 'id', 'integer', 0, 0), ('flights', 'dep_delay', 'json', 1, 1),
                ('flights', 'carrier', 'json', 1, 2), ('flights', 'tailnum', 'string', 1, 3),
                ('carriers', 'id', 'string', 0, 0), ('carriers', 'name', 'string', 0, 1);
            INSERT INTO entitystore_relations VALUES ('flights', 'carrier', 'carriers', 'none');
            """)
        try connection.close()
    }

    /// A format 1 file: `events` with dates as REAL seconds since 1970 and an ordered
    /// index on them.
    public static func formatOne(at path: String) throws {
        let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
        try connection.execute(try script("0001_initial.sql"))
        try connection.execute("""
            PRAGMA application_id = 1164858228; PRAGMA user_version = 1;
            CREATE TABLE "events" ("id" INTEGER PRIMARY KEY, "name" TEXT, "when");
            INSERT INTO events VALUES (1, 'launch', 1700000000.25), (2, 'epoch', 0.1), (3, 'Épreuve', NULL), (4, 'E\u{301}preuve', 86400);
            INSERT INTO entitystore_meta VALUES ('format_version', '1'), ('app_schema_version', '0');
            INSERT INTO entitystore_tables VALUES ('events', 'Event', 'integer', 4, 0);
            INSERT INTO entitystore_columns VALUES ('events', 'id', 'integer', 0, 0), ('events', 'name', 'string', 0, 1),
                ('events', 'when', 'date', 1, 2);
            INSERT INTO entitystore_indexes VALUES ('events', 'when', 'ordered', 'when');
            CREATE INDEX "entitystore_index_events_when" ON "events" ("when");
            """)
        try connection.close()
    }
}
