/// The SQL migrations of the EntityStore snapshot file format, embedded into the binary.
///
/// Each `.sql` file in this folder is one format version, named `NNNN_name.sql`.
/// Adding a version means adding the file, declaring it with `.embedInCode` in the
/// package manifest and appending it to ``embeddedFiles``; the list is validated so a
/// gap or a misnamed file surfaces as an error instead of a silently skipped step.
///
/// A version whose change SQL alone cannot make (such as converting the values of every
/// column the metadata lists with some kind) also has a code step in `EntityStoreSQLite`
/// (`FormatCodeSteps`), which the migrator runs right after the file's SQL, in the same
/// transaction; its SQL file says so in a comment.
package enum FormatMigrations {
    /// One format migration: the version it brings a file to, its name and its SQL script.
    package typealias Migration = (version: Int, name: String, sql: String)

    /// The bundled migration files, by file name. SwiftPM names an embedded resource
    /// after its file, replacing characters that cannot start or appear in an
    /// identifier with `_` (hence `_001_initial_sql` for `0001_initial.sql`).
    static let embeddedFiles: [(fileName: String, contents: [UInt8])] = [
        ("0001_initial.sql", PackageResources._001_initial_sql),
        ("0002_date_text.sql", PackageResources._002_date_text_sql),
        ("0003_sql_true_columns.sql", PackageResources._003_sql_true_columns_sql),
    ]

    /// The bundled migrations in version order, or why the bundle is inconsistent.
    package static let bundled: Result<[Migration], MigrationListError> = Result {
        () throws(MigrationListError) in try validated(embeddedFiles)
    }

    /// Parses and validates migration files: names must be `NNNN_name.sql`, versions
    /// must run 1, 2, 3 ... without gaps or duplicates, and the SQL must be UTF-8.
    ///
    /// - Returns: the migrations sorted by version.
    /// - Complexity: O(*n* log *n* + total size of the files).
    package static func validated(
        _ files: [(fileName: String, contents: [UInt8])]
    ) throws(MigrationListError) -> [Migration] {
        var migrations: [Migration] = []
        migrations.reserveCapacity(files.count)
        for file in files {
            let (version, name) = try parse(fileName: file.fileName)
            guard let sql = String(validating: file.contents, as: UTF8.self) else {
                throw .invalidEncoding(fileName: file.fileName)
            }
            migrations.append((version, name, sql))
        }
        migrations.sort { $0.version < $1.version }
        for (offset, migration) in migrations.enumerated() where migration.version != offset + 1 {
            throw .nonConsecutive(expected: offset + 1, found: migration.version)
        }
        return migrations
    }

    /// Splits `NNNN_name.sql` into its version number and name.
    private static func parse(fileName: String) throws(MigrationListError) -> (Int, String) {
        let suffix = ".sql"
        guard fileName.hasSuffix(suffix) else { throw .invalidFileName(fileName) }
        let stem = fileName.dropLast(suffix.count)
        guard let underscore = stem.firstIndex(of: "_") else { throw .invalidFileName(fileName) }
        let digits = stem[..<underscore]
        let name = stem[stem.index(after: underscore)...]
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let version = Int(digits), version > 0, !name.isEmpty
        else { throw .invalidFileName(fileName) }
        return (version, String(name))
    }
}

/// Why a list of format migration files is unusable.
package enum MigrationListError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file name does not follow `NNNN_name.sql` with a positive version.
    case invalidFileName(String)
    /// The file is not valid UTF-8.
    case invalidEncoding(fileName: String)
    /// Versions must start at 1 and increase by one; `found` appeared where `expected` belonged.
    case nonConsecutive(expected: Int, found: Int)

    /// A sentence naming the offending file or version.
    package var description: String {
        switch self {
        case .invalidFileName(let name):
            "format migration file '\(name)' is not named NNNN_name.sql with a version of 1 or more"
        case .invalidEncoding(let name):
            "format migration file '\(name)' is not valid UTF-8"
        case .nonConsecutive(let expected, let found):
            "format migrations must be numbered 1, 2, 3 ... without gaps or duplicates: expected version \(expected), found \(found)"
        }
    }
}
