internal import CSQLite

/// Application-defined SQL functions.
extension SQLiteConnection {
    /// The body of a scalar SQL function: the argument values in, the result out. An error
    /// it throws makes the statement that called it fail with the error's description.
    package typealias ScalarFunction = ([SQLiteValue]) throws -> SQLiteValue

    /// Runs `body` with the scalar SQL function `name` defined on this connection, and
    /// removes the function afterwards (also when `body` throws).
    ///
    /// The function is deterministic and direct-only: statements may call it, but the
    /// schema (views, triggers, defaults, indexes) may not, so a file cannot make it run.
    /// - Throws: the ``SQLiteError`` of the definition, or what `body` throws.
    /// - Complexity: O(1) on top of `body`; each call of the function costs its arguments'
    ///   conversion to ``SQLiteValue`` plus what `function` does.
    package func withFunction<R>(
        named name: String, argumentCount: Int32, _ function: @escaping ScalarFunction, _ body: () throws -> R
    ) throws -> R {
        try defineFunction(name, argumentCount: argumentCount, function)
        defer { removeFunction(name, argumentCount: argumentCount) }
        return try body()
    }

    private func defineFunction(_ name: String, argumentCount: Int32, _ function: @escaping ScalarFunction) throws(SQLiteError) {
        let db = try handle.open()
        // SQLite owns this reference from here on and releases it through the destructor
        // below, when the function is removed or the connection closes (and also when the
        // definition fails).
        let box = Unmanaged.passRetained(FunctionBox(function)).toOpaque()
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY
        let rc = sqlite3_create_function_v2(
            db, name, argumentCount, flags, box,
            { context, count, arguments in FunctionBox.call(context, count, arguments) },
            nil, nil,
            { pointer in
                guard let pointer else { return }
                Unmanaged<FunctionBox>.fromOpaque(pointer).release()
            })
        guard rc == SQLITE_OK else { throw handle.error(rc, sql: nil) }
    }

    private func removeFunction(_ name: String, argumentCount: Int32) {
        guard let db = handle.db else { return }
        // Removing a function this connection defined cannot fail for a reason worth
        // reporting over the caller's result; the connection's close removes it anyway.
        _ = sqlite3_create_function_v2(db, name, argumentCount, SQLITE_UTF8, nil, nil, nil, nil, nil)
    }
}

/// Holds a scalar function's Swift body for SQLite's C callback.
private final class FunctionBox {
    let function: SQLiteConnection.ScalarFunction

    init(_ function: @escaping SQLiteConnection.ScalarFunction) {
        self.function = function
    }

    /// The C entry point: converts the arguments, runs the body, sets the result or the error.
    static func call(_ context: OpaquePointer?, _ count: Int32, _ arguments: UnsafeMutablePointer<OpaquePointer?>?) {
        guard let context, let data = sqlite3_user_data(context) else { return }
        let box = Unmanaged<FunctionBox>.fromOpaque(data).takeUnretainedValue()
        var values: [SQLiteValue] = []
        values.reserveCapacity(Int(max(0, count)))
        for index in 0..<Int(max(0, count)) {
            values.append(value(arguments?[index]))
        }
        do {
            setResult(try box.function(values), context)
        } catch {
            sqlite3_result_error(context, String(describing: error), -1)
        }
    }

    private static func value(_ argument: OpaquePointer?) -> SQLiteValue {
        guard let argument else { return .null }
        switch sqlite3_value_type(argument) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_value_int64(argument))
        case SQLITE_FLOAT:
            return .real(sqlite3_value_double(argument))
        case SQLITE_TEXT:
            guard let bytes = sqlite3_value_text(argument) else { return .text("") }
            let count = Int(sqlite3_value_bytes(argument))
            return .text(String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            guard let bytes = sqlite3_value_blob(argument) else { return .blob([]) }
            let count = Int(sqlite3_value_bytes(argument))
            return .blob([UInt8](UnsafeRawBufferPointer(start: bytes, count: count)))
        default:
            return .null
        }
    }

    private static func setResult(_ value: SQLiteValue, _ context: OpaquePointer) {
        switch value {
        case .null:
            sqlite3_result_null(context)
        case .integer(let integer):
            sqlite3_result_int64(context, integer)
        case .real(let double):
            sqlite3_result_double(context, double)
        case .text(var text):
            text.withUTF8 { buffer in
                guard let base = buffer.baseAddress, !buffer.isEmpty else {
                    // A nil pointer would give NULL; an empty text stays text.
                    es_result_text_transient(context, "", 0)
                    return
                }
                base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                    es_result_text_transient(context, $0, sqlite3_uint64(buffer.count))
                }
            }
        case .blob(let bytes):
            bytes.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress, !buffer.isEmpty else {
                    sqlite3_result_zeroblob(context, 0)
                    return
                }
                es_result_blob_transient(context, base, sqlite3_uint64(buffer.count))
            }
        }
    }
}
