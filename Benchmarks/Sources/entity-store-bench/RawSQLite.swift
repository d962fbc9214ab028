import GRDB

/// The persistence baselines' raw SQLite work, through GRDB's lowest-level API: one
/// prepared statement executed per row inside one transaction, and a `SELECT` stepped
/// row by row into a Dictionary. No records, no Codable.
enum RawSQLite {
    static let createTableSQL = """
        CREATE TABLE items (
            id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL, quantity INTEGER NOT NULL,
            price REAL NOT NULL, note TEXT, ownerID INTEGER NOT NULL)
        """
    static let insertSQL = "INSERT INTO items (id, name, category, quantity, price, note, ownerID) VALUES (?, ?, ?, ?, ?, ?, ?)"
    static let replaceSQL = "INSERT OR REPLACE INTO items (id, name, category, quantity, price, note, ownerID) VALUES (?, ?, ?, ?, ?, ?, ?)"
    static let selectSQL = "SELECT id, name, category, quantity, price, note, ownerID FROM items"

    /// Writes every row of `rows` to a new file at `path` in one transaction; returns the row count.
    @discardableResult
    static func dump(_ rows: some Sequence<BenchItem>, to path: String) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.write { db in
            try db.execute(sql: createTableSQL)
            return try write(rows, with: db.makeStatement(sql: insertSQL))
        }
    }

    /// Writes `rows` over the rows of the same IDs (or as new rows) of the file at `path`,
    /// in one transaction; returns the row count.
    @discardableResult
    static func save(_ rows: some Sequence<BenchItem>, into path: String) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.write { db in try write(rows, with: db.makeStatement(sql: replaceSQL)) }
    }

    /// Reads every row of the file at `path` into a Dictionary by ID.
    static func load(from path: String) throws -> [Int: BenchItem] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            var rows: [Int: BenchItem] = [:]
            let cursor = try Row.fetchCursor(db.makeStatement(sql: selectSQL))
            while let row = try cursor.next() {
                let id: Int = row[0]
                rows[id] = BenchItem(
                    id: id, name: row[1], category: row[2], quantity: row[3], price: row[4], note: row[5], ownerID: row[6])
            }
            return rows
        }
    }

    private static func write(_ rows: some Sequence<BenchItem>, with statement: Statement) throws -> Int {
        var count = 0
        for entity in rows {
            try statement.execute(arguments: [
                entity.id, entity.name, entity.category, entity.quantity, entity.price, entity.note, entity.ownerID,
            ])
            count += 1
        }
        return count
    }
}
