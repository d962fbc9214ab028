import Foundation
import GRDB

// The same rows as GRDB records, with hand-written row coding (GRDB's fast path, rather
// than its Codable-based default).
extension BenchItem: FetchableRecord, PersistableRecord {
    static let databaseTableName = "items"

    init(row: Row) throws {
        self.init(
            id: row[0], name: row[1], category: row[2], quantity: row[3], price: row[4], note: row[5], ownerID: row[6])
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["name"] = name
        container["category"] = category
        container["quantity"] = quantity
        container["price"] = price
        container["note"] = note
        container["ownerID"] = ownerID
    }
}

/// The peer's figures: GRDB on a temporary SQLite file (GRDB's default configuration:
/// a `DatabaseQueue`, rollback journal, `synchronous = FULL`).
struct GRDBFigures {
    let data: Dataset
    let repetitions: Repetitions

    /// At most this many random primary-key fetches per run (each costs microseconds).
    static let maxLookups = 200_000

    /// `grdb_insert`, `grdb_lookup` and `grdb_fetch_all`, each against our own figure.
    func figures(oursInsert: Double, oursLookup: Double, oursIteration: Double) throws -> [Figure] {
        let count = Double(data.size)
        var database: (queue: DatabaseQueue, file: TemporaryFile)?
        let insertSeconds = try repetitions.medianOf {
            if let previous = database { try previous.queue.close(); previous.file.remove() }
            let file = TemporaryFile(prefix: "grdb")
            let queue = try DatabaseQueue(path: file.path)
            try queue.write { db in try db.execute(sql: RawSQLite.createTableSQL) }
            database = (queue, file)
            return try seconds {
                try queue.write { db in
                    for entity in data.entities { try entity.insert(db) }
                }
            }
        }
        guard let (queue, file) = database else { return [] }
        defer {
            try? queue.close()
            file.remove()
        }

        let ids = Array(data.lookupIDs.prefix(Self.maxLookups))
        var lookupSum = 0
        let lookupSeconds = try repetitions.medianOf {
            var sum = 0
            let elapsed = try seconds {
                try queue.read { db in
                    // A cached prepared statement: GRDB's fastest way to fetch one record.
                    let statement = try db.cachedStatement(sql: RawSQLite.selectSQL + " WHERE id = ?")
                    for id in ids {
                        if let entity = try BenchItem.fetchOne(statement, arguments: [id]) { sum &+= entity.quantity }
                    }
                }
            }
            lookupSum = sum
            return elapsed
        }
        consume(lookupSum)

        var fetched = 0
        let fetchSeconds = try repetitions.medianOf {
            var rows: [BenchItem] = []
            let elapsed = try seconds { rows = try queue.read { db in try BenchItem.fetchAll(db) } }
            fetched = rows.count
            return elapsed
        }
        if fetched != data.size { progress("warning: GRDB fetched \(fetched) rows, expected \(data.size)") }

        let insert = count / insertSeconds
        let lookup = Double(ids.count) / lookupSeconds
        let fetchAll = count / fetchSeconds
        return [
            Figure(
                name: "grdb_insert", value: insert, unit: "entities/s", baseline: oursInsert, ratio: oursInsert / insert,
                ratioMeaning: "ours / GRDB", direction: .higherIsBetter,
                baselineMeaning: "our insert (one transaction)"),
            Figure(
                name: "grdb_lookup", value: lookup, unit: "lookups/s", baseline: oursLookup, ratio: oursLookup / lookup,
                ratioMeaning: "ours / GRDB", direction: .higherIsBetter,
                baselineMeaning: "our lookup by ID"),
            Figure(
                name: "grdb_fetch_all", value: fetchAll, unit: "rows/s", baseline: oursIteration,
                ratio: oursIteration / fetchAll, ratioMeaning: "ours / GRDB", direction: .higherIsBetter,
                baselineMeaning: "our full iteration of state[items]"),
        ]
    }
}

/// A path for a database file in the temporary directory, removed with its journals.
struct TemporaryFile: Sendable {
    let path: String

    init(prefix: String) {
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("entity-store-bench-\(prefix)-\(UUID().uuidString).sqlite").path
    }

    func remove() {
        for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}
