import EntityStore
import EntityStoreSQLite

/// Restores any snapshot as dynamic records, with a progress bar when asked, turning
/// failures into one clear line that names the file. The file is never written: one of
/// an older format is read through an upgraded private copy (only `migrate` upgrades it).
func restoreDynamic(_ path: String, quiet: Bool) throws -> EntityStore {
    let bar = ProgressBar("restore", quiet: quiet)
    defer { bar.finish() }
    return try reportingFailures(path) {
        try EntityStore.restoringDynamic(
            from: path, options: SnapshotOptions(progress: { bar.update($0.rowsDone, of: $0.totalRows) }), leavingFileUnchanged: true)
    }
}
