import EntityStoreSQLite

/// The tool's version, for `entity-store --version`: the release and the snapshot format
/// it writes (it reads every earlier format).
public enum ToolVersion {
    /// The release of the package.
    public static let release = "0.13.0"

    /// `0.13.0 (snapshot format 3)`.
    public static var description: String { "\(release) (snapshot format \(Snapshot.formatVersion))" }
}
