import EntityStore
import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
import Testing

extension LongRunning {
    @Suite("Records in id order stream from the snapshot")
    struct StreamingQueryTests {
        /// Rows of about 1 KB: 20 MB of records (80 MB in a soak run), which a query that
        /// held them would need twice over as Swift values.
        static let rows = LongRunning.isSanitized ? 5_000 : Soak.pick(20_000, soak: 80_000)
        /// What a query may use beyond its use on a one-row snapshot: half the records' size.
        static let growthBound = rows / 2

        /// A snapshot of `rows` records (`rows` 1: one small one), written by the library
        /// and grown in SQL.
        private func bigSnapshot(_ scratch: Scratch, rows: Int = Self.rows) throws -> String {
            let path = scratch.path("big-\(rows).sqlite")
            let table = Table<DynamicRecord>("t")
            let state = try EntityState.build(schema: try Schema([table])) { transaction in
                try transaction[table].insert(DynamicRecord(id: 1, fields: ["text": "x", "n": 1]))
            }
            try state.writeSnapshot(to: path)
            guard rows > 1 else { return path }
            let connection = try SQLiteConnection(path: path, mode: .readWrite)
            try connection.execute("""
                WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
                    INSERT INTO t (id, text, n) SELECT i, replace(hex(zeroblob(500)), '00', 'ab') || i, i FROM n;
                UPDATE entitystore_tables SET row_count = \(rows) WHERE name = 't';
                """)
            try connection.close()
            return path
        }

        /// The peak resident memory of `entity-store ARGUMENTS > /dev/null`, in KB, from GNU time.
        private func peakMemory(_ arguments: [String]) -> Int? {
            let result = run(
                ["-c", "/usr/bin/time -f %M \"$@\" > /dev/null", "sh", Tool.entityStore.path] + arguments,
                executable: URL(fileURLWithPath: "/bin/sh"))
            #expect(result.status == 0, "\(result)")
            return result.errorLines.last.flatMap { Int($0) }
        }

        @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/time"), "needs GNU time"), .timeLimit(.minutes(10)))
        func recordsInIDOrderStreamInBoundedMemory() throws {
            try withScratch { scratch in
                let path = try bigSnapshot(scratch)
                let small = try bigSnapshot(scratch, rows: 1)
                // Growth over the same query on one row, not an absolute figure: the
                // baseline (the runtime, the binary) differs between builds and machines.
                for arguments in [["--format", "ndjson"], ["--where", "n>2", "--format", "csv"], ["--format", "table"]] {
                    let peak = try #require(peakMemory(["query", path, "t"] + arguments))
                    let baseline = try #require(peakMemory(["query", small, "t"] + arguments))
                    #expect(peak - baseline < Self.growthBound, "\(arguments): \(peak) KB against \(baseline) KB for one row")
                }
                let lines = run(["query", path, "t", "--fields", "id", "--where", "n>=2"])
                #expect(lines.outputLines.count == Self.rows - 1)
                #expect(lines.outputLines.last == "{\"id\":\(Self.rows)}")
                let last = run(["query", path, "t", "--offset", "\(Self.rows - 2)", "--fields", "id,n", "--format", "json"])
                #expect(last.stdout == "[\n  {\"id\":\(Self.rows - 1),\"n\":\(Self.rows - 1)},\n  {\"id\":\(Self.rows),\"n\":\(Self.rows)}\n]\n")
            }
        }
    }
}
