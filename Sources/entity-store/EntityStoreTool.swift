import ArgumentParser
import EntityStoreCommands

/// The `entity-store` command-line tool.
@main
struct EntityStoreTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entity-store",
        abstract: "Build, inspect and query EntityStore snapshots, and share them through PostgreSQL.",
        version: ToolVersion.description,
        subcommands: [
            DemoCommand.self, ImportCommand.self, ExportCommand.self, InspectCommand.self, VerifyCommand.self,
            QueryCommand.self, ShellCommand.self, DiffCommand.self, MigrateCommand.self, FixtureCommand.self,
            PushCommand.self, PullCommand.self, RepairCommand.self,
        ])

    /// Runs the command; no failure message shows a password typed in an argument.
    static func main() { mainRedactingPasswords() }
}
