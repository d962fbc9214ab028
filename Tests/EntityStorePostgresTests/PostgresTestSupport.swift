#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import Testing

/// The PostgreSQL server the tests use: `ENTITYSTORE_POSTGRES_URL` when set; otherwise a
/// throwaway cluster this test process starts on first use with PostgreSQL's own server
/// binaries (`scripts/postgres-cluster`: a temporary directory, a free loopback port,
/// stopped and removed once the process is gone, however it ended). Without either, the
/// tests are skipped with a note locally and fail under CI (`CI` set).
enum TestServer {
    static let configuredURL = ProcessInfo.processInfo.environment["ENTITYSTORE_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let isCI = ProcessInfo.processInfo.environment["CI"].map { !$0.isEmpty && $0 != "0" && $0 != "false" } ?? false

    /// The directory of PostgreSQL's server binaries (`ENTITYSTORE_POSTGRES_BIN`, or the
    /// newest of Debian's `/usr/lib/postgresql/*/bin`), if installed.
    static let serverBinaries: String? = {
        if let configured = ProcessInfo.processInfo.environment["ENTITYSTORE_POSTGRES_BIN"], !configured.isEmpty {
            return FileManager.default.isExecutableFile(atPath: configured + "/initdb") ? configured : nil
        }
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .filter { FileManager.default.isExecutableFile(atPath: "\(root)/\($0)/bin/initdb") }
            .sorted { Int($0) ?? 0 < Int($1) ?? 0 }
        return versions.last.map { "\(root)/\($0)/bin" }
    }()

    /// Whether the PostgreSQL tests run: with a server or the means to start one, or under
    /// CI (where a missing one fails them).
    static var enabled: Bool { configuredURL != nil || serverBinaries != nil || isCI }

    struct Missing: Error, CustomStringConvertible {
        var description: String {
            "no PostgreSQL server: install Debian's postgresql package (the tests start their own) or set ENTITYSTORE_POSTGRES_URL"
        }
    }

    /// The server's URL, starting the throwaway cluster on first use.
    static func url() async throws -> String {
        if let configuredURL { return configuredURL }
        guard serverBinaries != nil else { throw Missing() }
        return try await ThrowawayCluster.shared.url()
    }

    /// A target in a schema of its own (dropped by `drop`).
    static func target(_ prefix: String = "t") async throws -> PostgresTarget {
        try PostgresTarget(url: try await url(), schema: "\(prefix)_\(UInt32.random(in: 0...UInt32.max))")
    }

    /// Drops the target's schema on a server of the user's (`ENTITYSTORE_POSTGRES_URL`).
    /// The run's throwaway cluster is removed whole at its end: its schemas are left, and
    /// no connection opens while the process exits (a crash in libpq, seen after runs that
    /// had passed).
    static func drop(_ target: PostgresTarget) async {
        guard configuredURL != nil else { return }
        waitsForDropsAtExit
        dropsInFlight.enter()
        defer { dropsInFlight.leave() }
        _ = try? await target.withSession { session in
            try session.execute("DROP SCHEMA IF EXISTS \(SQL.quote(target.schema)) CASCADE")
        }
    }

    /// The drops still running (tests start them as they end, in tasks of their own).
    static let dropsInFlight = DispatchGroup()

    /// At exit, waits (at most 10 s) for the drops still running: exit tears down the TLS
    /// library (OpenSSL's exit handler), and a drop connecting meanwhile would crash the
    /// process after its tests passed. Registered after the first connection, so it runs
    /// before OpenSSL's handler (exit handlers run last registered first).
    private static let waitsForDropsAtExit: Void = {
        atexit { _ = TestServer.dropsInFlight.wait(timeout: .now() + 10) }
    }()

    /// The rows of a query, as text.
    static func rows(_ target: PostgresTarget, _ sql: String, _ parameters: [PostgresParameter] = []) async throws -> [[String?]] {
        try await target.withSession { session in try session.execute(sql, parameters).texts() }
    }
}

extension PostgresConnection {
    /// Runs one statement on this connection; its rows as text.
    @discardableResult
    func execute(_ sql: String, _ parameters: [PostgresParameter] = []) async throws -> [[String?]] {
        try await run { session in try session.execute(sql, parameters).texts() }
    }
}

extension PostgresRows {
    /// Every cell as text (booleans `t`/`f`, bytes as their decimal values joined by commas).
    func texts() throws -> [[String?]] {
        try (0..<count).map { row in
            try (0..<columnCount).map { column -> String? in
                switch try value(row, column, table: "") {
                case .null: return nil
                case let .integer(number): return String(number)
                case let .double(number): return String(number)
                case let .bool(flag): return flag ? "t" : "f"
                case let .text(text): return text
                case let .bytes(bytes): return bytes.map { String($0) }.joined(separator: ",")
                }
            }
        }
    }
}

/// The comment a skipped PostgreSQL test shows.
let postgresSkipNote: Comment = """
    PostgreSQL tests skipped: no server binaries (apt-get install postgresql, and the tests \
    start their own) and no ENTITYSTORE_POSTGRES_URL
    """

/// The cluster this test process starts when no URL is configured: one for the whole
/// run, started by the first test that needs it.
actor ThrowawayCluster {
    static let shared = ThrowawayCluster()
    private var starting: Task<String, any Error>?
    /// The cluster's directory (its data, and `server.crt` when it offers TLS).
    nonisolated let directory = FileManager.default.temporaryDirectory.appendingPathComponent("entitystore-pg-\(UUID().uuidString)").path

    func url() async throws -> String {
        if let starting { return try await starting.value }
        let directory = self.directory
        let task = Task { () async throws -> String in
            let started = try await onOwnThread { try clusterScript(["start", directory, String(getpid())]) }
            guard started.status == 0, let url = started.output.split(separator: "\n").last.map(String.init), url.hasPrefix("postgres://") else {
                throw ChildFailure("cannot start a throwaway PostgreSQL cluster: \(started.output)")
            }
            return url
        }
        starting = task
        return try await task.value
    }
}

/// Runs `scripts/postgres-cluster` with `arguments`; its output goes through a file, since
/// the server it starts outlives it. Returns the exit status and the output. It waits for
/// the script: call it on a thread of its own.
func clusterScript(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/postgres-cluster").path
    let log = FileManager.default.temporaryDirectory.appendingPathComponent("cluster-\(UUID().uuidString).log").path
    // posix_spawn and waitpid rather than Foundation's Process, which can miss the exit of
    // a child whose grandchild (the server) lives on.
    var environment = ProcessInfo.processInfo.environment
    if let binaries = TestServer.serverBinaries { environment["ENTITYSTORE_POSTGRES_BIN"] = binaries }
    // The script's children (the server, the watcher) outlive it: first close every
    // descriptor this process holds beyond the standard three, or a pipe another test
    // reads until its end would stay open in them and never end.
    let closeInherited = #"for fd in /proc/$$/fd/*; do n=${fd##*/}; if [ "$n" -gt 2 ]; then eval "exec $n>&-"; fi; done 2>/dev/null; "#
    let argv = ["/bin/bash", "-c", closeInherited + "exec \"$0\" \"$@\" >\"\(log)\" 2>&1 </dev/null", script] + arguments
    var pointers = argv.map { strdup($0) }
    pointers.append(nil)
    var environmentPointers = environment.map { strdup("\($0.key)=\($0.value)") }
    environmentPointers.append(nil)
    defer {
        for pointer in pointers { free(pointer) }
        for pointer in environmentPointers { free(pointer) }
    }
    // The script's servers and watchers must not inherit the signals this process blocks
    // (its threads block SIGTERM): pgbouncer would never end on one.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, "/bin/bash", nil, &attributes, pointers, environmentPointers)
    guard spawned == 0 else { throw ChildFailure("cannot run \(script): error \(spawned)") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    try? FileManager.default.removeItem(atPath: log)
    return (exitStatus, output)
}

#endif
