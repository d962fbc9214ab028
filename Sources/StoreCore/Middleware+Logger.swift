extension Middleware {
    /// A middleware writing one line per published commit: `<prefix> <name> v<version> <µs>µs`.
    /// - Parameters:
    ///   - prefix: the start of every line.
    ///   - write: where lines go (standard output by default).
    /// - Complexity: O(1) per commit, plus the cost of `write`.
    public static func logger(
        prefix: String = "[store]", write: @escaping @Sendable (String) -> Void = { print($0) }
    ) -> Middleware {
        Middleware(name: "logger", didCommit: { record in
            let (seconds, attoseconds) = record.duration.components
            let micros = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
            write("\(prefix) \(record.name) v\(record.changes.version) \(micros)µs")
        })
    }
}
