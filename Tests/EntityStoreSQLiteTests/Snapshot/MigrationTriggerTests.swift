import EntityStore
import EntityStoreSQLite
import Foundation
import Testing

/// A restore that migrates a file writes to it: the file is checked first.
@Suite("Migrations never run a hostile file's triggers")
struct MigrationTriggerTests {
    @Test("a restore with an app schema version refuses a trigger before it can run")
    func triggerRunsDuringAnAppVersionBump() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("hostile.sqlite").path
            let store = try populatedLibraryStore()
            try store.snapshot(to: path)
            // Fires on the app-schema-version row a restore with a newer app version writes.
            try sqlExecute(path, "CREATE TRIGGER hostile AFTER INSERT ON entitystore_meta BEGIN DELETE FROM books; END;")
            #expect(!Snapshot.verify(at: path).isSound, "verify refuses the trigger")
            let target = EntityStore(schema: store.schema)
            #expect(throws: (any Error).self) {
                try target.restore(from: path, options: SnapshotOptions(appSchemaVersion: 1))
            }
            // The refused file must be as it was: the trigger must not have run.
            let remaining = try sqlValue(path, "SELECT count(*) FROM books")
            #expect(remaining == .integer(12), "the refused trigger ran during the restore and left \(String(describing: remaining)) books")
        }
    }
}
