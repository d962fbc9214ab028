import Foundation

/// How much work the randomized and large tests do: the default run keeps every kind of
/// step, kill point and edge with few seeds and small sizes, in minutes; a soak run
/// (`ENTITYSTORE_SOAK=1`, or `scripts/soak`) takes many more seeds and larger sizes.
public enum Soak {
    /// Whether this is a soak run.
    public static let isOn: Bool = {
        guard let value = ProcessInfo.processInfo.environment["ENTITYSTORE_SOAK"] else { return false }
        return !value.isEmpty && value != "0" && value != "false"
    }()

    /// `quick` in the default run, `soak` in a soak run.
    public static func pick<T>(_ quick: T, soak: T) -> T { isOn ? soak : quick }

    /// The seeds of a randomized test: `quick` by default, `soak` in a soak run.
    public static func seeds(_ quick: some Sequence<UInt64>, soak: some Sequence<UInt64>) -> [UInt64] {
        isOn ? Array(soak) : Array(quick)
    }
}
