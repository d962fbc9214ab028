import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads lines from standard input: with editing and history when it is a terminal
/// (raw mode only while a line is read, restored on every exit path), as plain lines
/// otherwise.
final class TerminalLineReader {
    private let prompt: String
    private let historyFile: String?
    private var editor: LineEditor
    private let isTerminal = isatty(STDIN_FILENO) == 1 && CommandOutput.isTerminal(STDOUT_FILENO)
    private static let historyLimit = 1_000

    /// A reader showing `prompt`, keeping its history in `historyFile` (when given).
    init(prompt: String, historyFile: String?) {
        self.prompt = prompt
        self.historyFile = historyFile
        let saved = historyFile.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
        editor = LineEditor(history: saved.split(separator: "\n").suffix(Self.historyLimit).map(String.init))
    }

    /// The next line, or nil at the end of input.
    func next() -> String? {
        guard isTerminal else { return readLine(strippingNewline: true) }
        var original = termios()
        guard tcgetattr(STDIN_FILENO, &original) == 0 else { return readLine(strippingNewline: true) }
        var raw = original
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
        guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0 else { return readLine(strippingNewline: true) }
        defer { tcsetattr(STDIN_FILENO, TCSAFLUSH, &original) }
        var decoder = KeyDecoder()
        redraw()
        while true {
            var byte: UInt8 = 0
            let count = read(STDIN_FILENO, &byte, 1)
            if count < 0, errno == EINTR { continue }
            guard count == 1 else {
                write("\r\n")
                return nil
            }
            guard let key = decoder.feed(byte) else { continue }
            switch editor.handle(key) {
            case .editing:
                redraw()
            case .submitted(let line):
                write("\r\n")
                save(line)
                return line
            case .cancelled:
                write("^C\r\n")
                redraw()
            case .finished:
                write("\r\n")
                return nil
            }
        }
    }

    /// Shows the prompt and the line, the cursor at its place.
    private func redraw() {
        let after = editor.characters.count - editor.cursor
        let back = after > 0 ? "\u{1B}[\(Echo.escaped(String(editor.characters[editor.cursor...])).count)D" : ""
        write("\r" + prompt + Echo.escaped(editor.line) + "\u{1B}[K" + back)
    }

    private func write(_ text: String) {
        CommandOutput.print(text, terminator: "")
    }

    /// Appends a submitted line to the history file (best effort: history is a comfort).
    private func save(_ line: String) {
        guard let historyFile, !line.trimmingSpaces.isEmpty, !line.contains("\n") else { return }
        guard let handle = FileHandle(forWritingAtPath: historyFile) ?? {
            _ = FileManager.default.createFile(atPath: historyFile, contents: nil, attributes: [.posixPermissions: 0o600])
            return FileHandle(forWritingAtPath: historyFile)
        }() else { return }
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        try? handle.write(contentsOf: Data((line + "\n").utf8))
    }
}
