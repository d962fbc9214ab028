#if PostgreSQL
import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import StoreCore

/// Where a store lives in PostgreSQL: the server, the login, the database, and the schema
/// that holds the store's tables.
///
/// Build it from a `postgres://` URL (``init(url:schema:environment:)``) or from the
/// standard `PG*` variables (``fromEnvironment(_:schema:)``). Its ``description`` never
/// contains the password, so it can be printed and logged.
public struct PostgresTarget: Sendable, CustomStringConvertible {
    /// Whether the connection is encrypted, as libpq's `sslmode`.
    public enum TLSMode: String, Sendable {
        /// Plain TCP.
        case disable
        /// TLS if the server offers it, plain otherwise (libpq's default).
        case prefer
        /// TLS or no connection. The server's certificate is not verified, as libpq's
        /// `require`; use `verify-full` for that.
        case require
        /// TLS with the server's certificate verified against the system's trust roots and
        /// the host name.
        case verifyFull = "verify-full"
    }

    /// The server's host name or address.
    public var host: String
    /// The server's TCP port.
    public var port: Int
    /// The login role.
    public var username: String
    /// The password; never printed.
    public var password: String?
    /// The database (the user name when nil, as libpq).
    public var database: String?
    /// The PostgreSQL schema holding the store's tables (default `entitystore`).
    public var schema: String
    /// Encryption.
    public var tls: TLSMode
    /// How long to wait for the server to accept a connection.
    public var connectTimeout: Duration

    /// A target from its parts.
    public init(
        host: String = "127.0.0.1", port: Int = 5432, username: String, password: String? = nil, database: String? = nil,
        schema: String = "entitystore", tls: TLSMode = .prefer, connectTimeout: Duration = .seconds(10)
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.schema = schema
        self.tls = tls
        self.connectTimeout = connectTimeout
    }

    /// Reads `postgres://user:password@host:port/database?sslmode=require&schema=s&connect_timeout=5`
    /// (`postgresql://` too). Parts the URL leaves out come from the `PG*` variables of
    /// `environment`, then from libpq's defaults (localhost, 5432, the user `postgres`).
    /// - Throws: ``PostgresStoreError/invalidConfiguration(_:)``, which never quotes the password.
    public init(url: String, schema: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) throws(PostgresStoreError) {
        guard let components = URLComponents(string: url),
              let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql"
        else {
            throw .invalidConfiguration("expected a URL of the form postgres://user:password@host:port/database")
        }
        var target = try Self.fromEnvironment(environment, schema: schema)
        if let host = components.host, !host.isEmpty { target.host = host }
        if let port = components.port { target.port = port }
        if let user = components.user?.removingPercentEncoding, !user.isEmpty { target.username = user }
        if let password = components.password?.removingPercentEncoding { target.password = password }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        if !path.isEmpty { target.database = path.removingPercentEncoding ?? path }
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode": target.tls = try Self.tlsMode(value)
            case "schema" where schema == nil:
                guard !value.isEmpty else { throw .invalidConfiguration("the schema name is empty") }
                target.schema = value
            case "connect_timeout":
                guard let seconds = Int(value), seconds > 0 else { throw .invalidConfiguration("connect_timeout must be a positive number of seconds") }
                target.connectTimeout = .seconds(seconds)
            case "user": target.username = value
            case "password": target.password = value
            case "host": target.host = value
            case "port":
                guard let port = Int(value), (1...65535).contains(port) else { throw .invalidConfiguration("the port must be between 1 and 65535") }
                target.port = port
            case "dbname": target.database = value
            case "application_name", "schema": break
            default: throw .invalidConfiguration("unknown URL parameter '\(item.name)'")
            }
        }
        self = target
    }

    /// A target from libpq's variables: `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`,
    /// `PGDATABASE`, `PGSSLMODE`, `PGCONNECT_TIMEOUT`; unset ones take libpq's defaults.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment, schema: String? = nil
    ) throws(PostgresStoreError) -> PostgresTarget {
        var target = PostgresTarget(
            host: "localhost", port: 5432, username: environment["PGUSER"] ?? environment["USER"] ?? "postgres",
            password: environment["PGPASSWORD"], database: environment["PGDATABASE"], schema: schema ?? "entitystore")
        if let host = environment["PGHOST"], !host.isEmpty {
            guard !host.hasPrefix("/") else {
                throw .invalidConfiguration("PGHOST names a socket directory; give a host name or address (a TCP connection)")
            }
            target.host = host
        }
        if let port = environment["PGPORT"], !port.isEmpty {
            guard let number = Int(port), (1...65535).contains(number) else { throw .invalidConfiguration("PGPORT must be between 1 and 65535") }
            target.port = number
        }
        if let mode = environment["PGSSLMODE"], !mode.isEmpty { target.tls = try tlsMode(mode) }
        if let timeout = environment["PGCONNECT_TIMEOUT"], !timeout.isEmpty {
            guard let seconds = Int(timeout), seconds > 0 else { throw .invalidConfiguration("PGCONNECT_TIMEOUT must be a positive number of seconds") }
            target.connectTimeout = .seconds(seconds)
        }
        return target
    }

    private static func tlsMode(_ value: String) throws(PostgresStoreError) -> TLSMode {
        switch value {
        case "disable", "allow": return .disable
        case "prefer": return .prefer
        case "require", "verify-ca": return .require
        case "verify-full": return .verifyFull
        default: throw .invalidConfiguration("unknown sslmode '\(value)' (disable, prefer, require, verify-full)")
        }
    }

    /// `user@host:port/database schema s`: no password.
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(username)@\(shownHost):\(port)/\(database ?? username) (schema \(schema))"
    }

    /// `host:port`, for errors.
    var server: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// A logger for postgres-nio that reports nothing below errors (and never a password:
    /// postgres-nio does not log it).
    static let logger: Logger = {
        var logger = Logger(label: "entitystore.postgres")
        logger.logLevel = .critical
        return logger
    }()

    /// Opens one connection, authenticated, within ``connectTimeout``.
    /// - Throws: ``PostgresStoreError`` (unreachable, refused login, TLS unavailable).
    /// - Complexity: one TCP (and TLS) handshake and one authentication round trip.
    func connect() async throws(PostgresStoreError) -> PostgresConnection {
        var configuration: PostgresConnection.Configuration
        do {
            configuration = PostgresConnection.Configuration(
                host: host, port: port, username: username, password: password, database: database, tls: try makeTLS())
        } catch {
            throw .connectionFailed(server: server, reason: "cannot set up TLS: \(PostgresStoreError.oneLine(String(describing: error)))")
        }
        let milliseconds = connectTimeout.components.seconds * 1000 + connectTimeout.components.attoseconds / 1_000_000_000_000_000
        configuration.options.connectTimeout = .milliseconds(max(1, milliseconds))
        if tls == .require { configuration.options.tlsServerName = nil }
        let id = Self.connectionIDs.withLock { count in count += 1; return count }
        do {
            return try await PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: id, logger: Self.logger)
        } catch {
            // Before the login completes, a closed connection is a failure to connect.
            let mapped = PostgresStoreError.from(error, server: server)
            if case let .connectionLost(server, reason) = mapped { throw .connectionFailed(server: server, reason: reason) }
            throw mapped
        }
    }

    private func makeTLS() throws -> PostgresConnection.Configuration.TLS {
        switch tls {
        case .disable: return .disable
        case .prefer, .require:
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .none
            let context = try NIOSSLContext(configuration: configuration)
            return tls == .require ? .require(context) : .prefer(context)
        case .verifyFull:
            return .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
    }

    private static let connectionIDs = Lock(0)

    /// Connects, runs `body`, and closes the connection whatever happens.
    func withConnection<R: Sendable>(_ body: (PostgresConnection) async throws -> R) async throws(PostgresStoreError) -> R {
        let connection = try await connect()
        do {
            let result = try await body(connection)
            try? await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw PostgresStoreError.from(error, server: server)
        }
    }
}

#endif
