#if PostgreSQL
import EntityStore
import Foundation
import NIOCore
import PostgresNIO
import StoreCore

/// SQL text building: identifiers are always quoted, values always bound.
enum SQL {
    /// `"name"` with embedded quotes doubled: any text is one identifier.
    static func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
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

    /// Runs `sql` with `binds`, reading no rows.
    @discardableResult
    static func run(_ connection: PostgresConnection, _ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws -> PostgresRowSequence {
        try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: PostgresTarget.logger)
    }

    /// Runs `body` in one transaction opened with `begin` and commits it; on an error, rolls
    /// it back, or, when the error broke the connection, closes the connection (the server
    /// then rolls back) instead of sending `ROLLBACK` on it: postgres-nio 1.33 can leave a
    /// statement sent after a fatal error (a terminated backend) waiting forever.
    static func transaction<R>(
        _ connection: PostgresConnection, begin: String = "BEGIN", _ body: (PostgresConnection) async throws -> R
    ) async throws -> R {
        try await run(connection, begin)
        do {
            let result = try await body(connection)
            try await run(connection, "COMMIT")
            return result
        } catch {
            if connection.isClosed || breaksConnection(error) {
                try? await connection.close()
            } else {
                _ = try? await run(connection, "ROLLBACK")
            }
            throw error
        }
    }

    /// Whether `error` leaves the connection unusable: the connection closed, or the server
    /// ended the session (a `FATAL` or `PANIC` error, such as a terminated backend).
    static func breaksConnection(_ error: any Error) -> Bool {
        if error is ConnectionClosedDuringCopy { return true }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .server:
            let severity = error.serverInfo?[.severity] ?? error.serverInfo?[.localizedSeverity]
            return severity == "FATAL" || severity == "PANIC"
        case .queryCancelled:
            return false
        default:
            return true
        }
    }

    /// Writes `buffer` to a `COPY ... FROM STDIN`, failing as soon as `connection` closes:
    /// postgres-nio 1.33 keeps a write that waits for the socket to drain waiting forever
    /// when the channel closes under it (a server stopped mid-push), so the write runs in
    /// a task of its own and the first of its end and the connection's close answers.
    /// O(bytes) plus one task per message.
    static func write(_ buffer: ByteBuffer, to writer: PostgresCopyFromWriter, of connection: PostgresConnection) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let answer = FirstAnswer(continuation)
            Task {
                do {
                    try await writer.write(buffer)
                    answer.resume(with: .success(()))
                } catch {
                    answer.resume(with: .failure(error))
                }
            }
            connection.closeFuture.whenComplete { _ in
                answer.resume(with: .failure(ConnectionClosedDuringCopy()))
            }
        }
    }

    /// Runs `sql` and collects its rows.
    static func rows(_ connection: PostgresConnection, _ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws -> [PostgresRow] {
        try await run(connection, sql, binds).collect()
    }

    /// Binds `values`, in order.
    static func binds(_ values: [any PostgresNonThrowingEncodable]) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values { bindings.append(value) }
        return bindings
    }
}

/// Text format of `COPY ... FROM STDIN`: tab-separated, `\N` for NULL, backslash escapes.
enum CopyText {
    /// Appends one row: its values separated by tabs, then the revision column, then the
    /// line's end. O(size of the values).
    static func appendRow(_ values: [PGValue], revision: Int64, to buffer: inout ByteBuffer) {
        for value in values {
            append(value, to: &buffer)
            buffer.writeInteger(UInt8(9))
        }
        append(.integer(revision), to: &buffer)
        buffer.writeInteger(UInt8(10))
    }

    /// Appends one value. O(size of the value).
    static func append(_ value: PGValue, to buffer: inout ByteBuffer) {
        switch value {
        case .null: buffer.writeStaticString("\\N")
        case let .integer(number): appendInteger(number, to: &buffer)
        case let .bool(flag): buffer.writeInteger(flag ? UInt8(ascii: "t") : UInt8(ascii: "f"))
        case let .double(number):
            if number.isNaN { buffer.writeStaticString("NaN") } else if number.isInfinite {
                buffer.writeStaticString(number < 0 ? "-Infinity" : "Infinity")
            } else {
                buffer.writeString(number.description)
            }
        case let .text(text): appendEscaped(text, to: &buffer)
        case let .bytes(bytes):
            // A bytea in hex, its backslash escaped for COPY: \\x0a1b...
            buffer.writeStaticString("\\\\x")
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            buffer.reserveCapacity(minimumWritableBytes: bytes.count * 2)
            for byte in bytes {
                buffer.writeInteger(hex[Int(byte >> 4)])
                buffer.writeInteger(hex[Int(byte & 15)])
            }
        }
    }

    private static func appendInteger(_ number: Int64, to buffer: inout ByteBuffer) {
        if number >= 0 && number < 10 {
            buffer.writeInteger(UInt8(48 + number))
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
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: raw[position...]))
        }
    }

    private static func appendEscaped(_ text: String, to buffer: inout ByteBuffer) {
        var text = text
        text.withUTF8 { bytes in
            var clean = true
            for byte in bytes where byte == UInt8(ascii: "\\") || byte == 9 || byte == 10 || byte == 13 {
                clean = false
                break
            }
            if clean {
                buffer.writeBytes(UnsafeRawBufferPointer(bytes))
                return
            }
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
                case 9: buffer.writeStaticString("\\t")
                case 10: buffer.writeStaticString("\\n")
                case 13: buffer.writeStaticString("\\r")
                default: buffer.writeInteger(byte)
                }
            }
        }
    }
}

/// Reads stored values out of result cells, by the column's kind.
enum CellReader {
    /// The value of `cell`; columns whose kind ``PostgresColumnKind/selectsAsText`` are read as text.
    static func value(_ cell: PostgresCell, table: String) throws -> PGValue {
        guard let bytes = cell.bytes else { return .null }
        if cell.format == .text {
            let text = bytes.getString(at: bytes.readerIndex, length: bytes.readableBytes) ?? ""
            switch cell.dataType {
            case .int8, .int4, .int2:
                guard let number = Int64(text) else { throw invalid(cell, table) }
                return .integer(number)
            case .float8, .float4:
                guard let number = Double(text) else { throw invalid(cell, table) }
                return .double(number)
            case .bool: return .bool(text == "t")
            default: return .text(text)
            }
        }
        switch cell.dataType {
        case .int8:
            guard let number = bytes.getInteger(at: bytes.readerIndex, as: Int64.self) else { throw invalid(cell, table) }
            return .integer(number)
        case .int4:
            guard let number = bytes.getInteger(at: bytes.readerIndex, as: Int32.self) else { throw invalid(cell, table) }
            return .integer(Int64(number))
        case .int2:
            guard let number = bytes.getInteger(at: bytes.readerIndex, as: Int16.self) else { throw invalid(cell, table) }
            return .integer(Int64(number))
        case .float8:
            guard let bits = bytes.getInteger(at: bytes.readerIndex, as: UInt64.self) else { throw invalid(cell, table) }
            return .double(Double(bitPattern: bits))
        case .float4:
            guard let bits = bytes.getInteger(at: bytes.readerIndex, as: UInt32.self) else { throw invalid(cell, table) }
            return .double(Double(Float(bitPattern: bits)))
        case .bool:
            guard let byte = bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) else { throw invalid(cell, table) }
            return .bool(byte != 0)
        case .bytea:
            return .bytes(bytes.getBytes(at: bytes.readerIndex, length: bytes.readableBytes) ?? [])
        case .uuid:
            guard let uuid = try? cell.decode(UUID.self) else { throw invalid(cell, table) }
            return .text(uuid.uuidString)
        default:
            guard let text = bytes.getString(at: bytes.readerIndex, length: bytes.readableBytes) else { throw invalid(cell, table) }
            return .text(text)
        }
    }

    private static func invalid(_ cell: PostgresCell, _ table: String) -> PostgresStoreError {
        .invalidData(table: table, detail: "column '\(cell.columnName)' holds a value this reader cannot decode")
    }
}
/// The connection closed while a `COPY` was writing.
struct ConnectionClosedDuringCopy: Error {}

/// A continuation resumed by the first of several answers; later ones are dropped.
final class FirstAnswer: Sendable {
    private let continuation: Lock<CheckedContinuation<Void, any Error>?>

    init(_ continuation: CheckedContinuation<Void, any Error>) {
        self.continuation = Lock(continuation)
    }

    func resume(with result: Result<Void, any Error>) {
        continuation.withLock { $0.take() }?.resume(with: result)
    }
}
#endif
