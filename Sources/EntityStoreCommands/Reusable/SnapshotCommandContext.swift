import EntityStore
import EntityStoreSQLite

/// What an app tells the reusable snapshot commands about its typed store.
///
/// ```swift
/// enum Library: SnapshotCommandContext {
///     static func makeStore() throws -> EntityStore { try EntityStore { authors; books } }
///     static func load(_ store: EntityStore, from input: String) throws { ... ingest input ... }
/// }
///
/// struct LibraryTool: ParsableCommand {
///     static let configuration = CommandConfiguration(subcommands: [
///         SnapshotCommand<Library>.self, RestoreCommand<Library>.self, InspectCommand.self, VerifyCommand.self,
///     ])
/// }
/// ```
public protocol SnapshotCommandContext {
    /// A new, empty store with the app's schema.
    static func makeStore() throws -> EntityStore
    /// Fills `store` from the app's input (a file, a directory, a URL...), for `snapshot`.
    static func load(_ store: EntityStore, from input: String) throws
    /// The app schema version and migrations used when writing and reading snapshots.
    static var snapshotOptions: SnapshotOptions { get }
}

extension SnapshotCommandContext {
    /// No app schema version and no migrations.
    public static var snapshotOptions: SnapshotOptions { SnapshotOptions() }
}
