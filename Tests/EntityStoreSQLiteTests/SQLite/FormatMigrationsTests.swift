import EntityStoreMigrations
import Testing

@Suite("FormatMigrations: the bundled migration list")
struct FormatMigrationsTests {
    private func file(_ name: String, _ sql: String = "SELECT 1;") -> (fileName: String, contents: [UInt8]) {
        (name, Array(sql.utf8))
    }

    @Test func bundledMigrationsAreValidAndStartWithTheInitialFormat() throws {
        let migrations = try FormatMigrations.bundled.get()
        #expect(migrations.map(\.version) == Array(1...migrations.count))
        let first = try #require(migrations.first)
        #expect(first.name == "initial")
        #expect(first.sql.contains("CREATE TABLE entitystore_meta"))
    }

    @Test func validationSortsByVersionAndSplitsNames() throws {
        let migrations = try FormatMigrations.validated([
            file("0002_add_things.sql", "B"), file("0001_initial.sql", "A"), file("3_short.sql", "C"),
        ])
        #expect(migrations.map(\.version) == [1, 2, 3])
        #expect(migrations.map(\.name) == ["initial", "add_things", "short"])
        #expect(migrations.map(\.sql) == ["A", "B", "C"])
    }

    @Test func anEmptyListIsValid() throws {
        #expect(try FormatMigrations.validated([]).isEmpty)
    }

    @Test(arguments: [
        [("0001_initial.sql"), ("0003_gap.sql")],
        [("0002_first.sql")],
        [("0001_initial.sql"), ("0001_again.sql")],
    ])
    func nonConsecutiveVersionsAreRejected(names: [String]) {
        let error = #expect(throws: MigrationListError.self) {
            _ = try FormatMigrations.validated(names.map { file($0) })
        }
        guard case .nonConsecutive = error else {
            Issue.record("expected nonConsecutive, got \(String(describing: error))")
            return
        }
        #expect(error?.description.contains("without gaps or duplicates") == true)
    }

    @Test(arguments: ["0001_initial.txt", "initial.sql", "0001.sql", "0001_.sql", "_initial.sql", "0000_zero.sql", "00x1_bad.sql", "-001_neg.sql", "٠٠٠١_arabic.sql"])
    func malformedFileNamesAreRejected(name: String) {
        let error = #expect(throws: MigrationListError.self) {
            _ = try FormatMigrations.validated([file(name)])
        }
        #expect(error == .invalidFileName(name))
        #expect(error?.description.contains(name) == true)
    }

    @Test func invalidUTF8IsRejected() {
        let error = #expect(throws: MigrationListError.self) {
            _ = try FormatMigrations.validated([("0001_initial.sql", [0x53, 0xFF, 0xFE])])
        }
        #expect(error == .invalidEncoding(fileName: "0001_initial.sql"))
        #expect(error?.description.contains("UTF-8") == true)
    }
}
