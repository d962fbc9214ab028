// shared-notes: several processes sharing one store through PostgreSQL.
//
//   shared-notes watch URL [--read URL2] [--latency]
//                                       print the notes as they change, until killed
//                                       (--read: load and pull from URL2, a hot standby)
//   shared-notes add URL TEXT           add a note (pushed at once)
//   shared-notes increment URL ID N [--follow]
//                                       increment counter ID N times, losing no update
//                                       (--follow: while following the store with start())
//   shared-notes fill URL ROWS          replace the store with ROWS notes (a full snapshot)
//   shared-notes probe URL ROUNDS       add ROUNDS notes "ping T" (T: the monotonic clock at commit), 20 ms apart;
//                                       a `watch URL --latency` peer prints, per ping, the time from T to its
//                                       live query's notification
//
// URL is a postgres:// URL (?schema= picks the schema); "-" reads the PG* variables.
#if PostgreSQL
import EntityStore
import EntityStorePostgres
import Foundation
import StoreCore

struct Note: Entity {
    var id: String
    var text: String
    var author: String
    var written: Date
}

struct Tally: Entity {
    var id: String
    var value: Int
}

let notes = Table<Note>("notes").grouped(\.author)
let tallies = Table<Tally>("tallies")

/// The system-wide monotonic clock, comparable between processes of one machine.
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// One line on standard output, unbuffered (a parent process reads it as it comes).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("shared-notes: " + message + "\n").utf8))
    exit(1)
}

func target(_ url: String) -> PostgresTarget {
    do {
        return url == "-" ? try PostgresTarget.fromEnvironment() : try PostgresTarget(url: url)
    } catch {
        fail(error.description)
    }
}

/// A store joined to the database: loaded from it (or from `readURL`, a standby), or
/// written there first.
func joined(_ url: String, readingFrom readURL: String? = nil) async -> (EntityStore, PostgresSync) {
    do {
        let store = try EntityStore { notes; tallies }
        var options = PostgresSync.Options()
        options.readTarget = readURL.map(target)
        let sync = PostgresSync(store: store, target: target(url), options: options)
        try await sync.open()
        return (store, sync)
    } catch {
        fail(String(describing: error))
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
let author = ProcessInfo.processInfo.hostName + "/" + String(ProcessInfo.processInfo.processIdentifier)

switch (arguments.first, arguments.count) {
case ("watch", 2...5):
    var options = arguments.dropFirst(2)
    var readURL: String?
    var latencyAsked = false
    while let option = options.popFirst() {
        switch option {
        case "--latency": latencyAsked = true
        case "--read":
            guard let url = options.popFirst() else { fail("--read needs a URL") }
            readURL = url
        default: fail("unknown option \(option)")
        }
    }
    let latency = latencyAsked
    let (store, sync) = await joined(arguments[1], readingFrom: readURL)
    let all = store.live(LiveQuery(notes).sorted(by: \.written))
    say("watching \(all.value.count) notes")
    let watching = all.observe { update in
        let now = monotonicNanoseconds()
        for insertion in update.diff.inserted {
            if latency, insertion.entity.text.hasPrefix("ping "), let sent = UInt64(insertion.entity.text.dropFirst(5)) {
                say(String(format: "latency %.3f ms", Double(now - sent) / 1e6))
            } else {
                say("note \(insertion.entity.id): \(insertion.entity.text)")
            }
        }
    }
    await sync.start()
    watching.cancel()
case ("add", 3):
    let (_, sync) = await joined(arguments[1])
    let note = Note(id: UUID().uuidString, text: arguments[2], author: author, written: Date())
    do {
        try await sync.write { tx in try tx[notes].insert(note) }
        say("added \(note.id)")
    } catch {
        fail(String(describing: error))
    }
case ("increment", 4), ("increment", 5):
    guard let times = Int(arguments[3]) else { fail("N must be a number") }
    if arguments.count == 5 && arguments[4] != "--follow" { fail("unknown option \(arguments[4])") }
    let (store, sync) = await joined(arguments[1])
    let id = arguments[2]
    // Following the store pulls others' increments as they land, between this process's own.
    let follower = arguments.count == 5 ? Task { await sync.start() } : nil
    defer { follower?.cancel() }
    do {
        for _ in 0..<times {
            try await sync.write { tx in
                if tx[tallies].contains(id) {
                    _ = try tx[tallies].update(id) { $0.value += 1 }
                } else {
                    try tx[tallies].insert(Tally(id: id, value: 1))
                }
            }
        }
        say("done \(store.state[tallies].find(id)?.value ?? 0)")
    } catch {
        fail(String(describing: error))
    }
case ("fill", 3):
    guard let rows = Int(arguments[2]) else { fail("ROWS must be a number") }
    do {
        let store = try EntityStore { notes; tallies }
        try store.write { tx in
            try tx[notes].insert(contentsOf: (0..<rows).map {
                Note(id: String(format: "n%09d", $0), text: String(repeating: "x", count: 40), author: "filler", written: Date(timeIntervalSince1970: Double($0)))
            })
        }
        say("filling \(rows)")
        let summary = try await store.snapshot(to: target(arguments[1]))
        say("filled \(summary.rows)")
    } catch {
        fail(String(describing: error))
    }
case ("probe", 3):
    guard let rounds = Int(arguments[2]) else { fail("ROUNDS must be a number") }
    let (_, sync) = await joined(arguments[1])
    do {
        for round in 0..<rounds {
            try await sync.write { tx in
                try tx[notes].insert(Note(id: "probe-\(author)-\(round)", text: "ping \(monotonicNanoseconds())", author: author, written: Date()))
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        say("probed \(rounds)")
    } catch {
        fail(String(describing: error))
    }
default:
    fail("usage: shared-notes watch|add|increment|fill|probe URL ...")
}
#else
import Foundation
FileHandle.standardError.write(Data("shared-notes: built without PostgreSQL support; build with --traits PostgreSQL\n".utf8))
exit(1)
#endif
