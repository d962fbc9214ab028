import CBenchPQ
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Throwaway PostgreSQL servers and poolers for the deployment figures, started by the
/// package's `scripts/postgres-cluster` in one temporary directory. Each is started with
/// this process's ID, so its watcher stops and removes it even if this process dies;
/// ``stopAll()`` stops them all at once, newest first.
final class BenchClusters {
    /// The temporary directory holding every cluster's directory.
    let root: String
    private let script: String
    private var started: [String] = []

    init() throws {
        script = try Self.findScript()
        var template = Array((FileManager.default.temporaryDirectory.path + "/entitystore-bench-pg-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw BenchFailure("cannot create a temporary directory")
        }
        root = String(cString: made)
        // The servers run as another user (as root, `postgres`): they must reach their directories.
        chmod(root, 0o755)
    }

    /// `scripts/postgres-cluster` of the package: from the current directory, its parent,
    /// or beside the executable (`Benchmarks/.build/release/`).
    static func findScript() throws -> String {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let beside = URL(fileURLWithPath: executable).deletingLastPathComponent()
        let candidates = [
            FileManager.default.currentDirectoryPath + "/scripts/postgres-cluster",
            FileManager.default.currentDirectoryPath + "/../scripts/postgres-cluster",
            beside.appendingPathComponent("../../../scripts/postgres-cluster").standardizedFileURL.path,
            beside.appendingPathComponent("../../../../scripts/postgres-cluster").standardizedFileURL.path,
        ]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw BenchFailure("cannot find scripts/postgres-cluster (run from the package or Benchmarks/)")
        }
        return found
    }

    /// The directory of the cluster named `name`.
    func directory(_ name: String) -> String { root + "/" + name }

    /// A new primary in `name`, with `pg_stat_statements` loaded; its URL.
    func primary(_ name: String) throws -> String {
        let dir = directory(name)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        // The script passes the file `extra` of the directory to the server.
        try "-c shared_preload_libraries=pg_stat_statements -c track_io_timing=on\n".write(toFile: dir + "/extra", atomically: true, encoding: .utf8)
        return try run(["start", dir], registering: dir)
    }

    /// A hot standby of the cluster `primary`, in `name`; its URL.
    func standby(of primary: String, _ name: String) throws -> String {
        try run(["standby", directory(primary), directory(name)], registering: directory(name))
    }

    /// pgbouncer (transaction pooling) in front of the cluster `cluster`, in `name`; its URL.
    func pgbouncer(for cluster: String, _ name: String) throws -> String {
        try run(["pgbouncer", directory(cluster), directory(name)], registering: directory(name))
    }

    /// The process ID of the postmaster of the cluster `name`.
    func postmaster(_ name: String) throws -> Int32 {
        let text = try String(contentsOfFile: directory(name) + "/data/postmaster.pid", encoding: .utf8)
        guard let first = text.split(separator: "\n").first, let pid = Int32(first) else { throw BenchFailure("no postmaster.pid in \(name)") }
        return pid
    }

    /// Stops every server and pooler started, newest first, and removes the directory.
    func stopAll() {
        for dir in started.reversed() { _ = try? runScript(["stop", dir]) }
        started.removeAll()
        try? FileManager.default.removeItem(atPath: root)
    }

    private func run(_ arguments: [String], registering dir: String) throws -> String {
        started.append(dir)
        let (status, output) = try runScript(arguments + [String(getpid())])
        guard status == 0, let url = output.split(separator: "\n").last.map(String.init), url.hasPrefix("postgres://") else {
            throw BenchFailure("postgres-cluster \(arguments[0]) failed: \(output)")
        }
        return url
    }

    /// Runs the script; its output goes through a file, since the servers it starts outlive
    /// it (and must not hold this process's pipes: every inherited descriptor past the
    /// standard three is closed first). posix_spawn with an empty signal mask: a pooler
    /// inheriting blocked signals would never end on TERM.
    private func runScript(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let log = root + "/script-\(UUID().uuidString).log"
        let closeInherited = #"for fd in /proc/$$/fd/*; do n=${fd##*/}; if [ "$n" -gt 2 ]; then eval "exec $n>&-"; fi; done 2>/dev/null; "#
        let argv = ["/bin/bash", "-c", closeInherited + "exec \"$0\" \"$@\" >\"\(log)\" 2>&1 </dev/null", script] + arguments
        var pointers = argv.map { strdup($0) }
        pointers.append(nil)
        var environmentPointers = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") }
        environmentPointers.append(nil)
        defer {
            for pointer in pointers { free(pointer) }
            for pointer in environmentPointers { free(pointer) }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/bash", nil, &attributes, pointers, environmentPointers)
        guard spawned == 0 else { throw BenchFailure("cannot run \(script): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: log)
        return (exitStatus, output)
    }
}

/// The rows of `sql` run on a new libpq connection to `url`, as text (NULL as "").
func pqRows(_ url: String, _ sql: String) throws -> [[String]] {
    guard let connection = PQconnectdb(url), PQstatus(connection) == CONNECTION_OK else {
        throw BenchFailure("cannot connect to \(url.split(separator: "@").last.map(String.init) ?? "the server")")
    }
    defer { PQfinish(connection) }
    guard let result = PQexec(connection, sql) else { throw BenchFailure("query failed: \(String(cString: PQerrorMessage(connection)))") }
    defer { PQclear(result) }
    let status = PQresultStatus(result)
    guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else {
        throw BenchFailure("query failed: \(String(cString: PQerrorMessage(connection)))")
    }
    return (0..<PQntuples(result)).map { row in
        (0..<PQnfields(result)).map { column in String(cString: PQgetvalue(result, row, column)) }
    }
}

/// Rows of `sql` as `name=value` pairs of its columns (for the pooler's SHOW commands).
func pqNamedRows(_ url: String, _ sql: String) throws -> [[(String, String)]] {
    guard let connection = PQconnectdb(url), PQstatus(connection) == CONNECTION_OK else {
        throw BenchFailure("cannot connect for \(sql)")
    }
    defer { PQfinish(connection) }
    guard let result = PQexec(connection, sql), PQresultStatus(result) == PGRES_TUPLES_OK else {
        throw BenchFailure("\(sql) failed: \(String(cString: PQerrorMessage(connection)))")
    }
    defer { PQclear(result) }
    return (0..<PQntuples(result)).map { row in
        (0..<PQnfields(result)).map { column in
            (String(cString: PQfname(result, column)), String(cString: PQgetvalue(result, row, column)))
        }
    }
}
