#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
@testable import StoreCore
import Testing

/// An executable built beside the test binary.
func product(_ name: String) throws -> URL {
    var candidates: [URL] = []
    for start in [CommandLine.arguments.first.map { URL(fileURLWithPath: $0) }, Bundle.main.executableURL] {
        guard var url = start?.standardizedFileURL else { continue }
        for _ in 0..<6 {
            url = url.deletingLastPathComponent()
            candidates.append(url.appendingPathComponent(name))
        }
    }
    guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
        throw ChildFailure("cannot find the \(name) executable near the test binary")
    }
    return found
}

struct ChildFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A child process whose output is collected as it comes.
final class Child: @unchecked Sendable {
    // `@unchecked Sendable` is safe: `output` is only touched under `lock` (the pipe's
    // handler runs on another thread); `process` is configured before `run()` and then
    // only read through its own thread-safe accessors.
    let process = Process()
    private let lock = NSLock()
    private var output = ""
    /// Whether the pipe reached its end (the child and everything it started closed it).
    private var ended = false
    private let pipe = Pipe()

    init(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil) throws {
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = pipe
        process.standardError = pipe
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self else { return }
            self.lock.lock()
            if data.isEmpty { self.ended = true } else { self.output += String(decoding: data, as: UTF8.self) }
            self.lock.unlock()
        }
        try process.run()
    }

    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return output
    }

    /// Waits until the output contains `needle`.
    func waitFor(_ needle: String, within limit: Duration = .seconds(90)) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if text.contains(needle) { return true }
            if !process.isRunning { return text.contains(needle) }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// Waits for the exit, up to `limit`; kills it past that.
    func finish(within limit: Duration = .seconds(180)) async throws -> Int32 {
        let deadline = ContinuousClock.now + limit
        while process.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        if process.isRunning { kill(SIGKILL) }
        process.waitUntilExit()
        // Its last output may still be on its way to `text`: wait for the pipe's end, which
        // a busy machine can deliver well after the exit (bounded, for a grandchild that
        // would keep the pipe open).
        let drained = ContinuousClock.now + .seconds(10)
        while !lock.withLock({ ended }) && ContinuousClock.now < drained { try await Task.sleep(for: .milliseconds(5)) }
        return process.terminationStatus
    }

    func kill(_ signal: Int32) {
        Foundation.kill(process.processIdentifier, signal)
    }
}

func url(of target: PostgresTarget) async throws -> String {
    let base = try await TestServer.url()
    let escaped = target.schema.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target.schema
    return base + (base.contains("?") ? "&" : "?") + "schema=" + escaped
}

/// Each test uses a schema (or a cluster) of its own, so they run side by side: most of
/// their time is spent waiting for child processes.
@Suite(.enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn)
struct PostgresProcessTests {
    @Test("two processes: a note added by one appears in the other's live query")
    func twoProcesses() async throws {
        let target = try await TestServer.target("notes")
        defer { Task { await TestServer.drop(target) } }
        let notes = try product("shared-notes")
        let watcher = try Child(notes, ["watch", try await url(of: target)])
        defer { watcher.kill(SIGKILL) }
        #expect(try await watcher.waitFor("watching"))
        let adder = try Child(notes, ["add", try await url(of: target), "hello from another process"])
        #expect(try await adder.finish() == 0, "\(adder.text)")
        // Generous: the whole test suite shares two cores with these processes.
        #expect(try await watcher.waitFor("hello from another process", within: .seconds(60)), "\(watcher.text)")
    }

    @Test("no lost update: two processes each increment one counter 200 times (500 in a soak run); none is lost")
    func noLostUpdateAcrossProcesses() async throws {
        let increments = Soak.pick(200, soak: 500)
        let target = try await TestServer.target("tally")
        defer { Task { await TestServer.drop(target) } }
        let notes = try product("shared-notes")
        // One process creates the schema first, so the two join the same store.
        let address = try await url(of: target)
        let first = try Child(notes, ["increment", address, "n", "1"])
        #expect(try await first.finish() == 0, "\(first.text)")
        let children = try (0..<2).map { _ in try Child(notes, ["increment", address, "n", String(increments)]) }
        for child in children { #expect(try await child.finish(within: .seconds(300)) == 0, "\(child.text)") }
        let stored = try await TestServer.rows(target, "SELECT value FROM \"\(target.schema)\".tallies WHERE id = 'n'")
        #expect(stored == [[String(1 + 2 * increments)]])
    }

    @Test("no lost update while following: three processes that also run start() each increment one counter 150 times")
    func noLostUpdateWhileFollowing() async throws {
        let target = try await TestServer.target("follow")
        defer { Task { await TestServer.drop(target) } }
        let notes = try product("shared-notes")
        let address = try await url(of: target)
        let first = try Child(notes, ["increment", address, "n", "1"])
        #expect(try await first.finish() == 0, "\(first.text)")
        let children = try (0..<3).map { _ in try Child(notes, ["increment", address, "n", "150", "--follow"]) }
        for child in children { #expect(try await child.finish(within: .seconds(300)) == 0, "\(child.text)") }
        let stored = try await TestServer.rows(target, "SELECT value FROM \"\(target.schema)\".tallies WHERE id = 'n'")
        #expect(stored == [["451"]])
    }

    @Test("SIGKILL in the middle of a large push: the database holds the old contents or the new, never a mix")
    func killedPush() async throws {
        let target = try await TestServer.target("killed")
        defer { Task { await TestServer.drop(target) } }
        let notes = try product("shared-notes")
        let old = try Child(notes, ["fill", try await url(of: target), "1000"])
        #expect(try await old.finish() == 0, "\(old.text)")
        // 100,000 rows: the push runs for seconds after "filling" in a debug build (4.6 s on an
        // idle machine), far past both kills; building twice as many only cost the child CPU.
        for delay in [50, 250] {
            let big = try Child(notes, ["fill", try await url(of: target), "100000"])
            #expect(try await big.waitFor("filling"))
            try await Task.sleep(for: .milliseconds(delay))
            big.kill(SIGKILL)
            _ = try await big.finish()
            let counts = try await TestServer.rows(target, """
                SELECT (SELECT count(*) FROM "\(target.schema)".notes), (SELECT row_count FROM "\(target.schema)".entitystore_tables WHERE name = 'notes')
                """)
            #expect(counts == [["1000", "1000"]] || counts == [["100000", "100000"]], "\(counts)")
        }
        // The killed transactions left nothing behind once the server noticed.
        var leftovers: [[String?]] = []
        for _ in 0..<100 {
            leftovers = try await TestServer.rows(target, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'entitystore_stage_%'")
            if leftovers == [["0"]] { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(leftovers == [["0"]])
    }

    @Test("entity-store push, pull and inspect: a snapshot through PostgreSQL and back, without printing the password")
    func commandLine() async throws {
        let target = try await TestServer.target("cli")
        defer { Task { await TestServer.drop(target) } }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pg-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("source.sqlite").path
        let store = try EntityStore { customers; orders }
        try store.write { tx in
            for index in 0..<30 { try tx[customers].insert(Customer(id: "c\(index)", name: "n\(index)", region: index % 3 == 0 ? "eu" : "us")) }
            for index in 0..<60 { try tx[orders].insert(Order(id: index, customerID: "c\(index % 30)", total: Double(index) / 4, placed: Date(timeIntervalSince1970: Double(index)))) }
        }
        try store.snapshot(to: source)
        let tool = try product("entity-store")
        let address = try await url(of: target)
        let password = try #require(target.password)

        let push = try Child(tool, ["push", source, address])
        #expect(try await push.finish() == 0, "\(push.text)")
        #expect(push.text.contains("pushed 90 rows in 2 tables"), "\(push.text)")
        #expect(!push.text.contains(password))

        let inspect = try Child(tool, ["inspect", address])
        #expect(try await inspect.finish() == 0, "\(inspect.text)")
        #expect(inspect.text.contains("table orders (DynamicRecord): 60 rows"), "\(inspect.text)")
        #expect(inspect.text.contains("index customerID: grouped on customerID"), "\(inspect.text)")
        #expect(!inspect.text.contains(password))
        // The --json shape of a snapshot file's, with the change log's place instead of the file's.
        let described = try Child(tool, ["inspect", address, "--json"])
        #expect(try await described.finish() == 0, "\(described.text)")
        let report = try JSONValue(parsing: described.text)
        #expect(report["schema"] == .string(target.schema) && report["logStart"] != nil && report["path"] == nil)
        let orderTable = try #require(report["tables"]?.arrayValue?.first { $0["name"] == .string("orders") })
        #expect(orderTable["columns"]?.arrayValue?.first?["name"] == .string("id"))
        #expect(orderTable["columns"]?.arrayValue?.allSatisfy { $0["nullable"] != nil } == true)

        let output = directory.appendingPathComponent("pulled.sqlite").path
        let pull = try Child(tool, ["pull", address, "--output", output, "--table", "customers"])
        #expect(try await pull.finish() == 0, "\(pull.text)")
        let pulled = try EntityStore.restoringDynamic(from: output)
        #expect(pulled.state.count(ofTable: "customers") == 30)
        #expect(pulled.state.count(ofTable: "orders") == 0)
        let full = directory.appendingPathComponent("full.sqlite").path
        let pullAll = try Child(tool, ["pull", address, "-o", full])
        #expect(try await pullAll.finish() == 0, "\(pullAll.text)")
        let copy = try EntityStore { customers; orders }
        try copy.restore(from: full)
        #expect(copy.state[orders].all() == store.state[orders].all())

        // A row written by hand: a load fails naming `repair`, which recounts and is quiet.
        _ = try await TestServer.rows(target, "DELETE FROM \"\(target.schema)\".orders WHERE id = 0")
        let broken = try Child(tool, ["pull", address, "-o", directory.appendingPathComponent("broken.sqlite").path])
        #expect(try await broken.finish() == 1, "\(broken.text)")
        #expect(broken.text.contains("entity-store repair"), "\(broken.text)")
        let repair = try Child(tool, ["repair", address])
        #expect(try await repair.finish() == 0, "\(repair.text)")
        #expect(repair.text.contains("table orders: 60 rows recorded, 59 held"), "\(repair.text)")
        #expect(!repair.text.contains(password))
        let repaired = try Child(tool, ["pull", address, "-o", directory.appendingPathComponent("repaired.sqlite").path])
        #expect(try await repaired.finish() == 0, "\(repaired.text)")

        // The PG* variables instead of a URL; a wrong password is one line, without it.
        var environment = ProcessInfo.processInfo.environment
        environment["PGHOST"] = target.host
        environment["PGPORT"] = String(target.port)
        environment["PGUSER"] = target.username
        environment["PGPASSWORD"] = "wrong-\(password)"
        environment["PGDATABASE"] = target.database
        let refused = try Child(tool, ["inspect", "postgres://", "--schema", target.schema], environment: environment)
        #expect(try await refused.finish() == 1)
        #expect(refused.text.contains("refused the login"), "\(refused.text)")
        #expect(!refused.text.contains(password))
        #expect(refused.text.split(separator: "\n").count == 1, "\(refused.text)")
        environment["PGPASSWORD"] = password
        let viaEnvironment = try Child(tool, ["pull", "--output", directory.appendingPathComponent("env.sqlite").path, "--schema", target.schema], environment: environment)
        #expect(try await viaEnvironment.finish() == 0, "\(viaEnvironment.text)")
    }

    @Test("the server stopped in the middle of a push: a clear error, the local store intact, and the next push after a restart succeeds")
    func serverStopped() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pg-stop-\(UUID().uuidString)").path
        let started = try await onOwnThread { try clusterScript(["start", directory, String(getpid())]) }
        guard started.status == 0 else {
            if TestServer.isCI { Issue.record("cannot start a cluster of its own: \(started.output)") }
            return
        }
        defer { _ = try? clusterScript(["stop", directory]) }
        let address = started.output.split(separator: "\n").last.map(String.init) ?? ""
        var target = try PostgresTarget(url: address, schema: "stopped")
        // Short waits, so the push ends soon after the halt; the test's own bound below
        // only catches a wait without any deadline, however slow the machine.
        target.operationTimeout = .seconds(30)
        let (store, sync) = try await replica(target)
        try store.write { tx in
            try tx[customers].insert(contentsOf: (0..<100_000).map { Customer(id: "c\($0)", name: String(repeating: "x", count: 30), region: "eu") })
        }
        let pushing = Task { try await sync.push() }
        try await Task.sleep(for: .milliseconds(150))
        let halt = try await onOwnThread { try clusterScript(["halt", directory]) }
        #expect(halt.status == 0, "\(halt.output)")
        // Every wait of the push is bounded (the operation timeout): it must end.
        let ended = Lock<Result<PostgresSyncSummary, any Error>?>(nil)
        Task { let result = await pushing.result; ended.withLock { $0 = result } }
        let deadline = ContinuousClock.now + .seconds(300)
        while ended.withLock({ $0 == nil }) && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        guard let result = ended.withLock({ $0 }) else {
            Issue.record("the push did not end within 300 s of the server stopping")
            return
        }
        guard case let .failure(error) = result, let failure = error as? PostgresStoreError else {
            Issue.record("the push should have failed (it may have finished before the server stopped): \(result)")
            return
        }
        #expect(failure.isTransient, "\(failure)")
        #expect(!failure.description.contains("\n"))
        #expect(store.state[customers].count == 100_000)
        let resume = try await onOwnThread { try clusterScript(["resume", directory]) }
        #expect(resume.status == 0, "\(resume.output)")
        let summary = try await sync.push()
        #expect(summary.rows == 100_000)
        let fresh = try EntityStore { customers; orders; counters }
        try await fresh.restore(from: target)
        #expect(fresh.state[customers].count == 100_000)
        await sync.close()
    }
}
#endif
