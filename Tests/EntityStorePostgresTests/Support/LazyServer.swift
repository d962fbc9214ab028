#if PostgreSQL
import Foundation

/// A server started once per run, on first use, shared by the tests that need it.
actor LazyServer {
    private let start: @Sendable () async throws -> String
    private var starting: Task<String, any Error>?

    init(_ start: @escaping @Sendable () async throws -> String) {
        self.start = start
    }

    /// The server's URL, starting it on the first call.
    func url() async throws -> String {
        if let starting { return try await starting.value }
        let task = Task { try await start() }
        starting = task
        return try await task.value
    }
}
#endif
