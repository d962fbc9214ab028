#if PostgreSQL
import CLibPQ
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The synchronous face of a ``PostgresConnection``: statements, `COPY ... FROM STDIN`
/// and notifications, on the connection's own thread (never on a task's).
///
/// libpq runs in non-blocking mode; every wait for the server is a `poll` on its socket
/// and the connection's wake-up pipe, bounded by the operation timeout. A timeout, an
/// interruption or a lost server closes the connection (``broken``): the server then
/// rolls back whatever transaction was open, so nothing half-done is ever kept.
final class PostgresSession {
    /// `host:port`, for errors.
    let server: String
    /// The longest one statement (or one `COPY` message) may wait for the server.
    let operationTimeout: Duration
    /// Whether the call under way was cancelled (its task's cancellation handler sets it).
    var isCancelled: () -> Bool = { false }
    /// The connection is unusable; the owner drops it.
    private(set) var broken = false

    private let connection: OpaquePointer
    private let wake: Int32
    /// Whether ``Statement/reusable`` statements are prepared: not through a pooler in
    /// transaction mode, whose server connection changes between transactions.
    private let preparesStatements: Bool
    /// The statements prepared on this connection: SQL text → name.
    private var prepared: [String: String] = [:]
    /// The start of this connection's statement names: a pooler mistakenly set to share
    /// server connections between transactions (not told with `pool_mode=transaction`)
    /// then meets names that do not exist (which renews the connection), never another
    /// client's statement under the same name.
    private let namePrefix = "entitystore_" + String(UInt64.random(in: 0...UInt64.max), radix: 36) + "_"
    /// At most this many statements are prepared per connection (a bound on the server's
    /// memory); later reusable statements run unprepared.
    static let preparedLimit = 64

    private init(connection: OpaquePointer, server: String, operationTimeout: Duration, wake: Int32, preparesStatements: Bool) {
        self.connection = connection
        self.server = server
        self.operationTimeout = operationTimeout
        self.wake = wake
        self.preparesStatements = preparesStatements
    }

    /// Connects with libpq's keyword parameters (blocking this thread, bounded by
    /// `connect_timeout`), then switches to non-blocking mode.
    static func open(
        parameters: [(String, String)], server: String, operationTimeout: Duration, wake: Int32, preparesStatements: Bool
    ) throws(PostgresStoreError) -> PostgresSession {
        let keywords = parameters.map { strdup($0.0) } + [nil]
        let values = parameters.map { strdup($0.1) } + [nil]
        defer {
            for pointer in keywords { free(pointer) }
            for pointer in values { free(pointer) }
        }
        let connection: OpaquePointer? = keywords.withUnsafeBufferPointer { keys in
            values.withUnsafeBufferPointer { vals in
                keys.withMemoryRebound(to: UnsafePointer<CChar>?.self) { keys in
                    vals.withMemoryRebound(to: UnsafePointer<CChar>?.self) { vals in
                        PQconnectdbParams(keys.baseAddress, vals.baseAddress, 0)
                    }
                }
            }
        }
        guard let connection else { throw .connectionFailed(server: server, reason: "out of memory") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = PostgresSession.connectionMessage(connection)
            let usedPassword = PQconnectionUsedPassword(connection) != 0
            let neededPassword = PQconnectionNeedsPassword(connection) != 0
            PQfinish(connection)
            let sslMode = parameters.first { $0.0 == "sslmode" }?.1 ?? "prefer"
            throw classifyConnectFailure(message, server: server, sslMode: sslMode, usedPassword: usedPassword, neededPassword: neededPassword)
        }
        es_pg_silence_notices(connection)
        guard PQsetnonblocking(connection, 1) == 0 else {
            PQfinish(connection)
            throw .connectionFailed(server: server, reason: "cannot switch the connection to non-blocking mode")
        }
        return PostgresSession(
            connection: connection, server: server, operationTimeout: operationTimeout, wake: wake, preparesStatements: preparesStatements)
    }

    /// Closes the connection. Idempotent through the owner (it drops the session after).
    func finish() {
        PQfinish(connection)
    }

    /// The server process serving this connection.
    var backendPID: Int32 { PQbackendPID(connection) }

    /// Whether the server is a hot standby (in recovery): `in_hot_standby`, reported at login.
    var inHotStandby: Bool {
        guard let value = PQparameterStatus(connection, "in_hot_standby") else { return false }
        return String(cString: value) == "on"
    }

    // MARK: Statements

    /// One statement: its SQL, its parameters (sent as text, typed by the statement's
    /// casts), and whether it is worth preparing.
    struct Statement {
        var sql: String
        var parameters: [PostgresParameter]
        /// Prepared on the connection at its first run (parsed, analysed and planned once,
        /// in the same round trip) and run by name afterwards: for the statements every push
        /// or pull sends. Only for statements whose result columns cannot change type (the
        /// server refuses to run a prepared statement whose tables changed its result
        /// columns); their tables may be replaced (a full snapshot): the server analyses a
        /// prepared statement again when the tables it names change.
        var reusable: Bool

        init(_ sql: String, _ parameters: [PostgresParameter] = [], reusable: Bool = false) {
            self.sql = sql
            self.parameters = parameters
            self.reusable = reusable
        }
    }

    /// Runs one statement with its parameters (sent as text, typed by the statement's
    /// casts), and returns its rows.
    /// - Throws: ``PostgresStoreError/server(message:sqlState:)`` for a refused statement,
    ///   ``PostgresStoreError/connectionLost(server:reason:)`` for a lost or timed-out
    ///   connection, `CancellationError` when the caller was cancelled.
    /// - Complexity: one round trip; O(size of the result) in memory.
    @discardableResult
    func execute(_ sql: String, _ parameters: [PostgresParameter] = [], reusable: Bool = false) throws -> PostgresRows {
        try checkOpen()
        if !queued.isEmpty || (reusable && preparesStatements) {
            return try execute(pipeline: [Statement(sql, parameters, reusable: reusable)])[0]
        }
        return try executeNow(sql, parameters)
    }

    /// One statement on its own (nothing queued).
    private func executeNow(_ sql: String, _ parameters: [PostgresParameter]) throws -> PostgresRows {
        let texts = try parameters.map { try $0.text() }
        let sent: Int32 = texts.withCStrings { values, lengths in
            PQsendQueryParams(connection, sql, Int32(texts.count), nil, values, lengths, nil, 0)
        }
        guard sent == 1 else { throw lost(connectionMessage()) }
        let deadline = ContinuousClock.now + operationTimeout
        try flush(until: deadline)
        let results = try collectResults(until: deadline)
        return try single(results, sql: sql)
    }

    /// Statements queued by ``enqueue(_:_:reusable:)``, sent ahead of the next statement.
    private var queued: [Statement] = []

    /// Queues a statement whose result nobody reads (`BEGIN`, a write): it goes to the
    /// server with the next statement, in the same round trip (libpq's pipeline mode).
    /// An error it meets is thrown by that next call. O(1).
    func enqueue(_ sql: String, _ parameters: [PostgresParameter] = [], reusable: Bool = false) {
        queued.append(Statement(sql, parameters, reusable: reusable))
    }

    /// Forgets the queued statements (they were never sent): for a transaction that failed
    /// before sending anything.
    func discardQueued() {
        queued.removeAll()
    }

    /// Runs statements one after another in one round trip (libpq's pipeline mode), after
    /// the queued ones, and returns the rows of each of `statements`. Once one fails the
    /// server skips the rest (up to the end of the pipeline), and its error is thrown.
    /// - Complexity: one round trip; O(size of the results) in memory.
    @discardableResult
    func execute(pipeline statements: [Statement]) throws -> [PostgresRows] {
        try checkOpen()
        let all = queued + statements
        queued.removeAll()
        if all.count == 1 && !(all[0].reusable && preparesStatements) {
            let rows = try executeNow(all[0].sql, all[0].parameters)
            return statements.isEmpty ? [] : [rows]
        }
        let results = try runPipeline(all)
        return Array(results.suffix(statements.count))
    }

    /// Sends the queued statements now, if any (before a call that cannot join a pipeline).
    private func sendQueued() throws {
        guard !queued.isEmpty else { return }
        _ = try execute(pipeline: [])
    }

    /// Sends `statements` in pipeline mode with one sync point at the end, and reads every
    /// result up to it; leaves pipeline mode. A reusable statement not yet prepared is
    /// prepared in the same pipeline, just before it runs. Anything unexpected breaks the
    /// connection (the server then rolls back what was open).
    private func runPipeline(_ statements: [Statement]) throws -> [PostgresRows] {
        // Parameters first: a value PostgreSQL cannot hold fails before anything is sent.
        let texts = try statements.map { statement in try statement.parameters.map { try $0.text() } }
        guard PQenterPipelineMode(connection) == 1 else { throw lost(connectionMessage()) }
        // Each command sent, in order: a preparation (its name), or a statement's run.
        var commands: [(sql: String, preparing: String?)] = []
        var naming: [String: String] = [:]
        for (statement, values) in zip(statements, texts) {
            var name = statement.reusable && preparesStatements ? prepared[statement.sql] ?? naming[statement.sql] : nil
            if name == nil && statement.reusable && preparesStatements && prepared.count + naming.count < Self.preparedLimit {
                let fresh = namePrefix + String(prepared.count + naming.count)
                guard PQsendPrepare(connection, fresh, statement.sql, Int32(values.count), nil) == 1 else { throw lost(connectionMessage()) }
                naming[statement.sql] = fresh
                commands.append((statement.sql, fresh))
                name = fresh
            }
            let sent: Int32 = values.withCStrings { pointers, lengths in
                if let name {
                    PQsendQueryPrepared(connection, name, Int32(values.count), pointers, lengths, nil, 0)
                } else {
                    PQsendQueryParams(connection, statement.sql, Int32(values.count), nil, pointers, lengths, nil, 0)
                }
            }
            guard sent == 1 else { throw lost(connectionMessage()) }
            commands.append((statement.sql, nil))
        }
        guard PQpipelineSync(connection) == 1 else { throw lost(connectionMessage()) }
        try flush(until: ContinuousClock.now + operationTimeout)
        var rows: [PostgresRows] = []
        var failure: (any Error)?
        for command in commands {
            // Each statement may wait up to the operation timeout (a lock, say).
            let results = try collectResults(until: ContinuousClock.now + operationTimeout)
            var skipped = false
            let kept = results.filter { result in
                guard PQresultStatus(result) == PGRES_PIPELINE_ABORTED else { return true }
                skipped = true
                PQclear(result)
                return false
            }
            if skipped || failure != nil {
                for result in kept {
                    if failure == nil { failure = error(of: result) }
                    PQclear(result)
                }
                if failure == nil { failure = lost("the server skipped a statement of the pipeline without an error") }
                continue
            }
            do {
                let result = try single(kept, sql: command.sql)
                if let name = command.preparing { prepared[command.sql] = name } else { rows.append(result) }
            } catch { failure = error }
        }
        try awaitSync(until: ContinuousClock.now + operationTimeout)
        guard PQexitPipelineMode(connection) == 1 else { throw lost(connectionMessage()) }
        if let failure { throw failure }
        return rows
    }

    /// Reads the pipeline's sync point.
    private func awaitSync(until deadline: ContinuousClock.Instant) throws {
        while true {
            while PQisBusy(connection) == 0 {
                guard let result = PQgetResult(connection) else { throw lost("the pipeline ended without its sync point") }
                let status = PQresultStatus(result)
                PQclear(result)
                if status == PGRES_PIPELINE_SYNC { return }
            }
            try wait(forWriting: false, until: deadline)
            guard PQconsumeInput(connection) == 1 else { throw lost(connectionMessage()) }
        }
    }

    /// Runs statements separated by semicolons (no parameters) in one round trip.
    func executeScript(_ sql: String) throws {
        try checkOpen()
        try sendQueued()
        guard PQsendQuery(connection, sql) == 1 else { throw lost(connectionMessage()) }
        let deadline = ContinuousClock.now + operationTimeout
        try flush(until: deadline)
        let results = try collectResults(until: deadline)
        var failure: (any Error)?
        for result in results {
            if failure == nil { failure = error(of: result) }
            PQclear(result)
        }
        if let failure { throw failure }
    }

    /// Runs a `COPY ... FROM STDIN` statement, sending what `nextChunk` returns (bytes
    /// in the statement's format) until it returns nil; returns the rows the server
    /// counted.
    /// - Complexity: O(bytes sent); each chunk waits at most the operation timeout to be sent.
    @discardableResult
    func copyIn(_ sql: String, nextChunk: () throws -> [UInt8]?) throws -> Int {
        try checkOpen()
        try sendQueued()
        guard PQsendQuery(connection, sql) == 1 else { throw lost(connectionMessage()) }
        var deadline = ContinuousClock.now + operationTimeout
        try flush(until: deadline)
        // The server answers COPY_IN (or an error, which collectResults reports).
        let started = try collectResults(until: deadline, stoppingAtCopy: true)
        var failure: (any Error)?
        var copying = false
        for result in started {
            if PQresultStatus(result) == PGRES_COPY_IN { copying = true } else if failure == nil { failure = error(of: result) }
            PQclear(result)
        }
        if let failure { throw failure }
        guard copying else { throw PostgresStoreError.server(message: "the statement did not start a COPY FROM STDIN", sqlState: nil) }
        var producerError: (any Error)?
        do {
            while let chunk = try nextChunk() {
                deadline = ContinuousClock.now + operationTimeout
                try put(chunk, until: deadline)
            }
        } catch {
            // A broken connection aborts the COPY by itself; an error of the producer (a
            // row that cannot be stored) ends it with a failure message instead.
            if broken { throw error }
            producerError = error
        }
        deadline = ContinuousClock.now + operationTimeout
        // Ending with an error message makes the server fail the COPY (and the transaction).
        while true {
            let ended = producerError == nil ? PQputCopyEnd(connection, nil) : PQputCopyEnd(connection, "aborted by the client")
            if ended == 1 { break }
            if ended < 0 { throw lost(connectionMessage()) }
            try wait(forWriting: true, until: deadline)
        }
        try flush(until: deadline)
        let finished = try collectResults(until: deadline)
        var count = 0
        for result in finished {
            if failure == nil { failure = error(of: result) }
            if let text = PQcmdTuples(result), let number = Int(String(cString: text)) { count += number }
            PQclear(result)
        }
        if let producerError { throw producerError }
        if let failure { throw failure }
        return count
    }

    /// Waits up to `timeout` for notifications on the channels this session listens on;
    /// returns their payloads (empty when none came in time).
    func notifications(waitingUpTo timeout: Duration) throws -> [String] {
        try checkOpen()
        try sendQueued()
        var payloads = drainNotifications()
        if !payloads.isEmpty { return payloads }
        let deadline = ContinuousClock.now + timeout
        while payloads.isEmpty {
            do {
                try wait(forWriting: false, until: deadline, timeoutBreaks: false)
            } catch is WaitTimedOut {
                return []
            }
            guard PQconsumeInput(connection) == 1 else { throw lost(connectionMessage()) }
            payloads = drainNotifications()
        }
        return payloads
    }

    private func drainNotifications() -> [String] {
        var payloads: [String] = []
        while let notification = PQnotifies(connection) {
            payloads.append(notification.pointee.extra.map { String(cString: $0) } ?? "")
            PQfreemem(notification)
        }
        return payloads
    }

    // MARK: Waiting

    private func checkOpen() throws {
        if broken { throw PostgresStoreError.connectionLost(server: server, reason: "the connection is closed") }
        if isCancelled() {
            markBroken()
            throw CancellationError()
        }
    }

    private func markBroken() {
        broken = true
    }

    /// Sends what libpq has buffered.
    private func flush(until deadline: ContinuousClock.Instant) throws {
        while true {
            let result = PQflush(connection)
            if result == 0 { return }
            if result < 0 { throw lost(connectionMessage()) }
            try wait(forWriting: true, until: deadline)
        }
    }

    /// Queues one chunk of COPY data, waiting while libpq's buffer is full.
    private func put(_ chunk: [UInt8], until deadline: ContinuousClock.Instant) throws {
        guard !chunk.isEmpty else { return }
        while true {
            let result = chunk.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { PQputCopyData(connection, $0.baseAddress, Int32(bytes.count)) }
            }
            if result == 1 { break }
            if result < 0 { throw lost(connectionMessage()) }
            try wait(forWriting: true, until: deadline)
        }
        try flush(until: deadline)
    }

    /// Reads results until libpq has none left (or, with `stoppingAtCopy`, until a COPY starts).
    private func collectResults(until deadline: ContinuousClock.Instant, stoppingAtCopy: Bool = false) throws -> [OpaquePointer] {
        var results: [OpaquePointer] = []
        do {
            while true {
                while PQisBusy(connection) == 0 {
                    guard let result = PQgetResult(connection) else { return results }
                    results.append(result)
                    let status = PQresultStatus(result)
                    if status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH {
                        if stoppingAtCopy { return results }
                        throw PostgresStoreError.server(message: "unexpected COPY", sqlState: nil)
                    }
                }
                try wait(forWriting: false, until: deadline)
                guard PQconsumeInput(connection) == 1 else { throw lost(connectionMessage()) }
            }
        } catch {
            for result in results { PQclear(result) }
            throw error
        }
    }

    private struct WaitTimedOut: Error {}

    /// Waits until the socket is readable (or writable), the deadline passes, or the wake
    /// pipe says the call was cancelled.
    private func wait(forWriting: Bool, until deadline: ContinuousClock.Instant, timeoutBreaks: Bool = true) throws {
        let socket = PQsocket(connection)
        guard socket >= 0 else { throw lost(connectionMessage()) }
        while true {
            if isCancelled() {
                markBroken()
                throw CancellationError()
            }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else {
                guard timeoutBreaks else { throw WaitTimedOut() }
                markBroken()
                throw PostgresStoreError.connectionLost(
                    server: server, reason: "no answer within the operation timeout (\(Self.describe(operationTimeout))); the connection was closed")
            }
            let milliseconds = min(Int64(Int32.max), max(1, remaining.milliseconds))
            var fds = [
                pollfd(fd: socket, events: Int16(forWriting ? POLLOUT | POLLIN : POLLIN), revents: 0),
                pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, Int32(milliseconds))
            if ready < 0 {
                if errno == EINTR { continue }
                markBroken()
                throw PostgresStoreError.connectionLost(server: server, reason: "poll failed: \(String(cString: strerror(errno)))")
            }
            if fds[1].revents != 0 {
                var bytes = [UInt8](repeating: 0, count: 64)
                while read(wake, &bytes, bytes.count) > 0 {}
                continue
            }
            if fds[0].revents != 0 { return }
        }
    }

    // MARK: Results and errors

    private func single(_ results: [OpaquePointer], sql: String) throws -> PostgresRows {
        var failure: (any Error)?
        var rows: OpaquePointer?
        for result in results {
            if failure == nil, let error = error(of: result) {
                failure = error
                PQclear(result)
            } else if rows == nil, failure == nil {
                rows = result
            } else {
                PQclear(result)
            }
        }
        if let failure {
            if let rows { PQclear(rows) }
            throw failure
        }
        guard let rows else { throw lost("no result") }
        return PostgresRows(rows)
    }

    /// The error a result carries, if any (a fatal one breaks the connection).
    private func error(of result: OpaquePointer) -> (any Error)? {
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY, PGRES_SINGLE_TUPLE, PGRES_COPY_IN, PGRES_COPY_OUT: return nil
        default: break
        }
        func field(_ code: Int32) -> String? { PQresultErrorField(result, code).map { String(cString: $0) } }
        let state = field(es_pg_diag_sqlstate())
        let severity = field(es_pg_diag_severity())
        let message = field(es_pg_diag_message()) ?? PQresultErrorMessage(result).map { String(cString: $0) } ?? "unknown error"
        if PQstatus(connection) == CONNECTION_BAD || severity == "FATAL" || severity == "PANIC" {
            markBroken()
            return PostgresStoreError.connectionLost(server: server, reason: PostgresStoreError.oneLine(message))
        }
        if state == nil {
            // A client-side failure (the connection broke while reading the result).
            markBroken()
            return lost(message)
        }
        // The server function that refused a statement whose tables changed its result
        // columns: its name, unlike the message, is the same in every language.
        let staleResult = state == "0A000" && (field(es_pg_diag_source_function()) == "RevalidateCachedQuery" || message.contains("cached plan"))
        if state == "26000" || state == "42P05" || staleResult {
            // A prepared statement that is gone, a name this connection took for free that
            // is not, or a statement whose tables now give other result columns: a new
            // connection prepares afresh; the caller retries as after any lost connection.
            return lost("a prepared statement no longer fits the server (\(PostgresStoreError.oneLine(message))); the connection is renewed")
        }
        return PostgresStoreError.server(message: PostgresStoreError.oneLine(message), sqlState: state)
    }

    private func connectionMessage() -> String { Self.connectionMessage(connection) }

    /// libpq's message for the connection, in one line, without its "connection to server
    /// at ... failed:" preamble (errors name the server themselves).
    static func connectionMessage(_ connection: OpaquePointer) -> String {
        let raw = PQerrorMessage(connection).map { String(cString: $0) } ?? ""
        return cleaned(raw)
    }

    static func cleaned(_ raw: String) -> String {
        var lines = raw.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        lines = lines.map { line in
            var line = line
            if line.hasPrefix("connection to server"), let range = line.range(of: "failed: ") { line = String(line[range.upperBound...]) }
            for prefix in ["FATAL:", "ERROR:"] where line.hasPrefix(prefix) {
                line = String(line.dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces)
            }
            return line
        }
        return lines.isEmpty ? "connection failed" : lines.joined(separator: "; ")
    }

    private func lost(_ message: String) -> PostgresStoreError {
        markBroken()
        return .connectionLost(server: server, reason: message.isEmpty ? "the server closed the connection" : message)
    }

    /// One readable error for a failed login, never with the password.
    static func classifyConnectFailure(
        _ message: String, server: String, sslMode: String, usedPassword: Bool, neededPassword: Bool
    ) -> PostgresStoreError {
        let lowered = message.lowercased()
        if lowered.contains("session is read-only") || lowered.contains("session is not read-only")
            || lowered.contains("in hot standby mode") || lowered.contains("is not in hot standby") {
            // A multi-host target whose servers all have the wrong role: during a failover,
            // before the standby is promoted.
            return .connectionFailed(server: server, reason: "no server of the list has the role target_session_attrs asks for (\(message))")
        }
        if lowered.contains("unsupported startup parameter") {
            return .connectionFailed(server: server, reason: "\(message) (a pooler such as pgbouncer: add pool_mode=transaction to the URL)")
        }
        if neededPassword || lowered.contains("no password supplied") {
            return .authenticationFailed(server: server, reason: "the server asks for a password and none was given (PGPASSWORD or the URL)")
        }
        if lowered.contains("password authentication failed") || lowered.contains("authentication failed") || lowered.contains("pg_hba.conf") {
            return .authenticationFailed(server: server, reason: message)
        }
        if lowered.contains("connection refused") {
            return .connectionFailed(server: server, reason: "connection refused (is the server running and listening on that port?)")
        }
        if lowered.contains("timeout expired") {
            return .connectionFailed(server: server, reason: "no answer within the connect timeout (connect_timeout, at least 2 s)")
        }
        if lowered.contains("does not support ssl") {
            return .connectionFailed(server: server, reason: "the server does not offer TLS, which sslmode=\(sslMode) demands")
        }
        if lowered.contains("certificate verify failed") || lowered.contains("root certificate file") || lowered.contains("server certificate for") {
            return .connectionFailed(server: server, reason: "TLS: sslmode=\(sslMode) cannot verify the server's certificate (\(message))")
        }
        if lowered.contains("could not translate host name") || lowered.contains("name or service not known") {
            return .connectionFailed(server: server, reason: "unknown host (the name does not resolve)")
        }
        return .connectionFailed(server: server, reason: message)
    }

    static func describe(_ duration: Duration) -> String {
        let milliseconds = duration.milliseconds
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }
}

extension Duration {
    /// Whole milliseconds (rounded down).
    var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}

extension [String?] {
    /// Calls `body` with C strings of the elements (NULL for nil) and their lengths, valid
    /// for the call.
    fileprivate func withCStrings<R>(_ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?) -> R) -> R {
        let pointers = map { $0.map { strdup($0) } ?? nil }
        defer { for pointer in pointers { free(pointer) } }
        let lengths = map { Int32($0?.utf8.count ?? 0) }
        let constants = pointers.map { $0.map { UnsafePointer($0) } }
        return constants.withUnsafeBufferPointer { values in
            lengths.withUnsafeBufferPointer { lengths in body(values.baseAddress, lengths.baseAddress) }
        }
    }
}
#endif
