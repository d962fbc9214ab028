/// The parts of format migrations that SQL alone cannot make, by version.
///
/// ``FormatMigrator`` runs a version's code step right after the SQL file of that version
/// (`Migrations/NNNN_name.sql`), inside the same transaction, so the file reaches the
/// version with both or with neither.
package enum FormatCodeSteps {
    /// The versions that have a code step.
    package static let versions: Set<Int> = [2, 3]

    /// Runs the code step of `version`, if it has one.
    /// - Throws: ``SnapshotError`` or ``SQLiteError``; the caller rolls the version back.
    static func run(afterVersion version: Int, on connection: SQLiteConnection) throws {
        switch version {
        case 2: try DateColumnsUpgrade.run(connection)
        case 3: try SQLTrueColumnsUpgrade.run(connection)
        default: break
        }
    }
}
