#if PostgreSQL
import EntityStore
import EntityStoreCodec
import Foundation
import StoreCore

/// SQL text building: identifiers are always quoted, values always bound.
enum SQL {
    /// `"name"` with embedded quotes doubled: any text is one identifier. O(length).
    static func quote(_ identifier: String) -> String {
        quoteIdentifier(identifier)
    }

    /// `"schema"."name"`.
    static func qualified(_ schema: String, _ name: String) -> String {
        quote(schema) + "." + quote(name)
    }

    /// PostgreSQL cuts identifiers at 63 bytes (with a notice, not an error): two names
    /// would then meet, so longer ones are refused, as NUL bytes are.
    static func checkIdentifier(_ name: String, what: String, table: String) throws(PostgresStoreError) {
        if name.isEmpty { throw .encodingFailed(table: table, detail: "\(what) has an empty name") }
        if name.utf8.count > 63 { throw .encodingFailed(table: table, detail: "\(what) '\(name)' is longer than PostgreSQL's 63-byte identifiers") }
        if name.utf8.contains(0) { throw .encodingFailed(table: table, detail: "\(what) contains a NUL character") }
    }

    /// The name of the SQL index of a declared index: `entitystore_index_<table>_<name>`,
    /// or, past 63 bytes, its first bytes and a hash of the whole.
    static func indexName(table: String, index: String) -> String {
        let full = "entitystore_index_\(table)_\(index)"
        if full.utf8.count <= 63 { return full }
        var prefix = ""
        for character in full {
            if prefix.utf8.count + String(character).utf8.count > 46 { break }
            prefix.append(character)
        }
        return prefix + "_" + String(fnv1a(full), radix: 16)
    }

    /// The NOTIFY channel of a schema: a fixed prefix and a hash, so any schema name works.
    static func channel(for schema: String) -> String {
        "entitystore_" + String(fnv1a(schema), radix: 16)
    }

    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// Runs `body` in one transaction opened with `begin` and commits it; on an error,
    /// rolls it back (a broken connection needs no rollback: the server ends the
    /// transaction when the connection closes).
    ///
    /// `begin` goes to the server with `body`'s first statement, and `COMMIT` with the
    /// statements `body` queued last (``PostgresSession/enqueue(_:_:)``): each in the same
    /// round trip, not one of its own.
    /// With `bodyCommits`, `body` sends the `COMMIT` itself (with its last statements).
    static func transaction<R>(_ session: PostgresSession, begin: String = "BEGIN", bodyCommits: Bool = false, _ body: () throws -> R) throws -> R {
        session.enqueue(begin)
        do {
            let result = try body()
            if !bodyCommits { try session.execute("COMMIT") }
            return result
        } catch {
            // What is still queued was never sent: nothing to undo there.
            session.discardQueued()
            if !session.broken { _ = try? session.execute("ROLLBACK") }
            throw error
        }
    }
}

/// Text format of `COPY ... FROM STDIN`: tab-separated, `\N` for NULL, backslash escapes.
enum CopyText {
    /// Appends one row: its values separated by tabs, then the revision column, then the
    /// line's end. O(size of the values).
    static func appendRow(_ values: [StoredValue], revision: Int64, to buffer: inout [UInt8]) {
        for value in values {
            append(value, to: &buffer)
            buffer.append(9)
        }
        append(.integer(revision), to: &buffer)
        buffer.append(10)
    }

    /// Appends one value. O(size of the value).
    static func append(_ value: StoredValue, to buffer: inout [UInt8]) {
        switch value {
        case .null: buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "N")])
        case let .integer(number): appendInteger(number, to: &buffer)
        case let .bool(flag): buffer.append(flag ? UInt8(ascii: "t") : UInt8(ascii: "f"))
        case let .double(number): buffer.append(contentsOf: PostgresParameter.text(of: number).utf8)
        case let .text(text): appendEscaped(text, to: &buffer)
        case let .bytes(bytes):
            // A bytea in hex, its backslash escaped for COPY: \\x0a1b...
            buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\"), UInt8(ascii: "x")])
            buffer.reserveCapacity(buffer.count + bytes.count * 2)
            for byte in bytes {
                buffer.append(hexDigits[Int(byte >> 4)])
                buffer.append(hexDigits[Int(byte & 15)])
            }
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private static func appendInteger(_ number: Int64, to buffer: inout [UInt8]) {
        if number >= 0 && number < 10 {
            buffer.append(UInt8(48 + number))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { raw in
            var magnitude = number.magnitude
            var position = raw.count
            repeat {
                position -= 1
                raw[position] = UInt8(48 + magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if number < 0 {
                position -= 1
                raw[position] = UInt8(ascii: "-")
            }
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[position...]))
        }
    }

    private static func appendEscaped(_ text: String, to buffer: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            var clean = true
            for byte in bytes where byte == UInt8(ascii: "\\") || byte == 9 || byte == 10 || byte == 13 {
                clean = false
                break
            }
            if clean {
                buffer.append(contentsOf: bytes)
                return
            }
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\\"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case 9: buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case 10: buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case 13: buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                default: buffer.append(byte)
                }
            }
        }
    }
}
#endif
