import EntityStoreTestSupport
import Foundation
import Testing

/// The system's SQLite command-line shell.
let sqlite3 = URL(fileURLWithPath: "/usr/bin/sqlite3")

@Suite("The sqlite3 shell reads snapshots the tool writes", .threadsOfItsOwn)
struct SQLiteInteropTests {
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: sqlite3.path), "needs /usr/bin/sqlite3"))
    func rowCountsMatch() throws {
        try withScratch { scratch in
            let snapshot = try importLibrary(scratch)
            let expected = ["authors": 2, "books": 4, "genres": 3]
            for (table, count) in expected {
                let result = run(["-batch", "-readonly", snapshot, "select count(*) from \"\(table)\";"], executable: sqlite3)
                #expect(result.status == 0, "\(result)")
                #expect(result.stdout == "\(count)\n", "table \(table): \(result)")
            }
            let integrity = run(["-batch", "-readonly", snapshot, "pragma integrity_check;"], executable: sqlite3)
            #expect(integrity.stdout == "ok\n", "\(integrity)")
            let titles = run(["-batch", "-readonly", snapshot, "select title from books where id = 12;"], executable: sqlite3)
            #expect(titles.stdout == "A Wizard of Earthsea\n", "\(titles)")
            #expect(run(["verify", snapshot]).status == 0, "reading with sqlite3 leaves the snapshot sound")
        }
    }
}
