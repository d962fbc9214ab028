/// Passwords hidden from what the tool prints.
///
/// A path or URL argument reaches messages as typed ("no snapshot file at '…'"), and a
/// mistyped scheme (`postgress://`) makes a connection URL look like a file name. So
/// message lines are redacted on their way out, whatever they quote, rather than at each
/// place that formats an argument.
enum Redaction {
    /// What a password is replaced with.
    static let mask = "***"

    /// `text` with every password replaced by ``mask``: the password of any
    /// `scheme://user:password@` (any scheme, misspelled ones too), and the value of any
    /// `password=` keyword (a URL query, a libpq `host=x password=secret` string,
    /// `PGPASSWORD=…`); and first the passwords of this process's arguments wherever
    /// the text quotes them.
    static func redacted(_ text: String) -> String {
        redacted(text, hiding: argumentCredentials)
    }

    /// `text` redacted as ``redacted(_:)``, for a process with `arguments`.
    static func redacted(_ text: String, arguments: [String]) -> String {
        redacted(text, hiding: credentials(in: arguments))
    }

    private static func redacted(_ text: String, hiding credentials: [(shown: String, hidden: String)]) -> String {
        // Every form, and every credential, holds "://" or "password": most lines hold neither.
        guard text.contains("://") || text.lowercased().contains("password") else { return text }
        var text = text
        for credential in credentials { text = text.replacing(credential.shown, with: credential.hidden) }
        // In a line, a password ends at the last `@` of its word (it may hold one).
        return text
            .replacing(#/([A-Za-z0-9+.\-]*://[^\s:/?#@]*:)\S*@/#) { $0.output.1 + mask + "@" }
            // A value ends at a space, `&` or `#`, less a quote closing the quotation it is in.
            .replacing(#/(?i)(password\s*=\s*)(?:'(?:[^'\\]|\\.)*'?|[^\s&#]*?(?=['"]?(?:[\s&#]|$)))/#) { $0.output.1 + mask }
    }

    private static let processCredentials = credentials(in: CommandLine.arguments)

    /// The credentials typed in the arguments of the run printing: the process's, or those
    /// of a command run inside a program (``CommandOutput``).
    private static var argumentCredentials: [(shown: String, hidden: String)] {
        CommandOutput.runArguments.map { credentials(in: $0) } ?? processCredentials
    }

    /// Each credential of `arguments` as typed, and hidden. An argument is one word
    /// whatever it holds, so there a password may hold spaces: it runs to the last `@`
    /// (a URL's), or to the next `&` or `#` (a `password=` value), which a line's words
    /// cannot tell.
    private static func credentials(in arguments: [String]) -> [(shown: String, hidden: String)] {
        var found: [(shown: String, hidden: String)] = []
        for argument in arguments where argument.contains("://") || argument.lowercased().contains("password") {
            for match in argument.matches(of: #/([A-Za-z0-9+.\-]*://[^\s:/?#@]*:).*@/#) {
                found.append((String(argument[match.range].dropLast()), String(match.output.1) + mask))
            }
            for match in argument.matches(of: #/(?i)(password\s*=\s*)(?:'(?:[^'\\]|\\.)*'?|[^&#]*)/#) {
                found.append((String(argument[match.range]), String(match.output.1) + mask))
            }
        }
        return found
    }
}
