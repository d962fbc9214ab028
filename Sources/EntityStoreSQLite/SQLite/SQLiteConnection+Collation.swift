internal import CSQLite

extension SQLiteConnection {
    /// The name of the collation that orders text as Swift orders `String`s
    /// (``defineSwiftStringOrder()``): `ORDER BY "name" COLLATE entitystore_swift`.
    package static let swiftStringOrder = "entitystore_swift"

    /// Defines the collation ``swiftStringOrder`` on this connection: text compares as the
    /// `String`s a reader decodes from it (``SQLiteStatement/text(at:)``, invalid UTF-8
    /// repaired) compare in Swift, so canonically equivalent spellings (`"é"` and
    /// `"e\u{301}"`) are equal and order by their normalized form, where SQLite's own
    /// `BINARY` collation compares bytes. Pure ASCII text compares byte by byte, as Swift
    /// compares it, without making `String`s.
    ///
    /// A statement ordered or compared with it gives exactly the order and equality of
    /// the in-memory store; SQL indexes (which use `BINARY`) cannot serve it, so SQLite
    /// scans and sorts.
    /// - Complexity: each comparison O(length) for ASCII; otherwise the cost of two
    ///   `String`s and their comparison.
    package func defineSwiftStringOrder() throws(SQLiteError) {
        let db = try handle.open()
        let rc = sqlite3_create_collation_v2(db, Self.swiftStringOrder, SQLITE_UTF8, nil, { _, leftCount, left, rightCount, right in
            let left = UnsafeRawBufferPointer(start: left, count: Int(max(0, leftCount)))
            let right = UnsafeRawBufferPointer(start: right, count: Int(max(0, rightCount)))
            return Int32(SwiftStringOrder.compare(left, right))
        }, nil)
        guard rc == SQLITE_OK else { throw handle.error(rc, sql: nil) }
    }

    /// The name of the SQL function ``defineASCIITest()`` defines.
    package static let asciiTest = "entitystore_is_ascii"

    /// Defines the SQL function ``asciiTest``: `entitystore_is_ascii(x)` is 0 for text
    /// holding a byte above 127 (in UTF-8), else 1. Text of ASCII alone orders byte by
    /// byte in Swift, as SQLite's `BINARY` collation orders it, and equals only itself.
    /// Direct-only: a file's schema cannot call it.
    /// - Complexity: O(length) per call, without copying the text.
    package func defineASCIITest() throws(SQLiteError) {
        let db = try handle.open()
        let rc = sqlite3_create_function_v2(
            db, Self.asciiTest, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, nil,
            { context, count, arguments in
                guard count == 1, let value = arguments?[0], sqlite3_value_type(value) == SQLITE_TEXT,
                      let bytes = sqlite3_value_text(value)
                else {
                    sqlite3_result_int(context, 1)
                    return
                }
                let text = UnsafeBufferPointer(start: bytes, count: Int(max(0, sqlite3_value_bytes(value))))
                sqlite3_result_int(context, text.allSatisfy { $0 < 0x80 } ? 1 : 0)
            }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw handle.error(rc, sql: nil) }
    }
}

/// The comparison behind `SQLiteConnection/swiftStringOrder`.
package enum SwiftStringOrder {
    /// -1, 0 or 1 as the `String`s decoded from the UTF-8 bytes `left` and `right` order in Swift.
    package static func compare(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Int {
        if isASCII(left), isASCII(right) {
            // ASCII is in normal form: Swift compares it by code unit, as here.
            for (a, b) in zip(left, right) where a != b { return a < b ? -1 : 1 }
            return left.count == right.count ? 0 : (left.count < right.count ? -1 : 1)
        }
        let a = String(decoding: left, as: UTF8.self), b = String(decoding: right, as: UTF8.self)
        return a == b ? 0 : (a < b ? -1 : 1)
    }

    private static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.allSatisfy { $0 < 0x80 }
    }
}
