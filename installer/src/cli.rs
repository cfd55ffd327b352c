//! The `amplihack` command line.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::commands::{self, CommandError, Outcome};
use crate::scopes::Locations;

#[derive(Parser)]
#[command(
    name = "amplihack",
    version = amplihack_protocol::VERSION,
    about = "Install, check and remove amplihack's hooks for Claude Code, Amplifier, Codex, Copilot CLI, Qwen Code, Droid, Gemini CLI, opencode, Pi and Cline CLI"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Commands,
    /// Machine-readable output (one JSON object)
    #[arg(long, global = true)]
    json: bool,
    /// The project for project and local scopes (default: the git work tree of the current directory)
    #[arg(long, global = true, value_name = "DIR")]
    project: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Commands {
    /// Print the shell completion script of amplihack or amplihack-hooks
    ///
    /// bash: `amplihack completions bash > ~/.local/share/bash-completion/completions/amplihack`;
    /// zsh: `amplihack completions zsh > "${fpath[1]}/_amplihack"`;
    /// fish: `amplihack completions fish > ~/.config/fish/completions/amplihack.fish`.
    /// `amplihack install` writes them for you.
    Completions {
        /// The shell
        #[arg(value_enum)]
        shell: clap_complete::Shell,
        /// The program to complete
        #[arg(long, value_enum, default_value = "amplihack")]
        binary: crate::docs::Binary,
    },
    /// Write every completion script and man page of both binaries under DIR (release archives)
    #[command(hide = true)]
    Docs {
        /// Where: DIR/completions/<shell>/ and DIR/man/man1/
        dir: PathBuf,
    },
    /// Deploy the binaries and register the hooks (idempotent; repairs paths after a move)
    Install(commands::InstallArgs),
    /// Remove exactly amplihack's entries (every scope unless --scope) and the binaries
    Uninstall(commands::UninstallArgs),
    /// Check the binaries and every registration; exit 1 when something is wrong
    Doctor(commands::DoctorArgs),
    /// Show what is installed and where
    Status(commands::StatusArgs),
    /// Manage your own hook plugins in .amplifier/hooks/
    #[command(subcommand)]
    Hooks(HooksCommand),
    /// Turn lock mode on: at each stop the agent is told to keep working (see --status)
    Lock {
        /// What the agent is told at each stop (default: keep working on the task)
        #[arg(long, value_name = "TEXT", conflicts_with = "status")]
        message: Option<String>,
        /// Only show whether lock mode is on, and what the agent is told
        #[arg(long)]
        status: bool,
    },
    /// Turn lock mode off
    Unlock,
    /// Move both binaries to the newest release (or --version), verified, keeping the previous pair
    Update(crate::update::UpdateArgs),
    /// Re-register every recorded settings file for the binaries in --bin-dir (used by update)
    #[command(hide = true)]
    Reregister {
        /// The bin directory holding the binaries to register
        #[arg(long, value_name = "DIR")]
        bin_dir: PathBuf,
    },
    /// The project's memory: session records and your notes
    #[command(subcommand)]
    Memory(MemoryCommand),
    /// The recent hook runs and built-in decisions, newest last (--stats: what they cost)
    Log(crate::log::LogArgs),
}

#[derive(Subcommand)]
enum MemoryCommand {
    /// List the entries, oldest first
    List {
        /// Only this agent's entries
        #[arg(long)]
        agent: Option<String>,
        /// Only entries of this kind (session, note, ...)
        #[arg(long)]
        kind: Option<String>,
    },
    /// Show one entry in full
    Show {
        /// The entry's id (or a unique start of it)
        id: String,
    },
    /// Remember something for this project (or for one agent)
    Add {
        /// What to remember
        text: String,
        /// The agent it is for; it is injected when a prompt names the agent
        #[arg(long)]
        agent: Option<String>,
        /// The kind of entry
        #[arg(long, default_value = "note")]
        kind: String,
    },
    /// Remove one entry
    Forget {
        /// The entry's id (or a unique start of it)
        id: String,
    },
}

#[derive(Subcommand)]
enum HooksCommand {
    /// List the plugins of the user and project levels, with their state
    List,
    /// Validate plugins (all discovered ones, or the files given)
    Validate {
        /// hooks.json files to check (default: every plugin of both levels)
        files: Vec<PathBuf>,
    },
    /// Run the engine on a sample event and show each handler's result and the merged replies
    Test(crate::user_hooks::TestArgs),
    /// Enable a plugin disabled with `disable`
    Enable {
        /// The plugin's directory name, as `amplihack hooks list` shows it
        name: String,
    },
    /// Stop running a plugin (its files are left alone)
    Disable {
        /// The plugin's directory name, as `amplihack hooks list` shows it
        name: String,
    },
    /// Trust this project's hook plugins (records a hash of every file they run); lists, per
    /// handler, the files pinned and each part trust cannot pin
    Trust {
        /// Also run this plugin although it runs parts trust cannot pin (as listed); repeatable
        #[arg(long, value_name = "NAME")]
        accept: Vec<String>,
    },
    /// Withdraw trust from this project's hook plugins
    Untrust,
    /// Install a plugin from a directory or a git URL
    Install(crate::user_hooks::InstallArgs),
    /// Move your hooks from a Claude Code settings file (or copy a Claude Code plugin) into .amplifier/hooks/
    ImportClaude {
        /// Settings file or plugin directory (default ~/.claude/settings.json)
        #[arg(long)]
        from: Option<PathBuf>,
        /// Which hooks directory receives them: ~/.amplifier/hooks/ (user) or the project's
        #[arg(long, value_enum, default_value = "user")]
        level: crate::user_hooks::HooksLevel,
    },
}

fn run_hooks_command(
    command: HooksCommand,
    project: &std::path::Path,
) -> Result<Outcome, CommandError> {
    let ctx = crate::user_hooks::Context::new(project)?;
    let changes_plugins = matches!(
        command,
        HooksCommand::Install(_)
            | HooksCommand::Enable { .. }
            | HooksCommand::Disable { .. }
            | HooksCommand::Trust { .. }
            | HooksCommand::Untrust
            | HooksCommand::ImportClaude { .. }
    );
    let outcome = run_hooks_subcommand(command, &ctx)?;
    Ok(if changes_plugins {
        crate::plugin_events::with_sync(outcome, &ctx)
    } else {
        outcome
    })
}

fn run_hooks_subcommand(
    command: HooksCommand,
    ctx: &crate::user_hooks::Context,
) -> Result<Outcome, CommandError> {
    use crate::user_hooks;
    match command {
        HooksCommand::List => user_hooks::list(ctx),
        HooksCommand::Validate { files } => user_hooks::validate(ctx, &files),
        HooksCommand::Test(args) => user_hooks::test(ctx, &args),
        HooksCommand::Enable { name } => user_hooks::set_enabled(ctx, &name, true),
        HooksCommand::Disable { name } => user_hooks::set_enabled(ctx, &name, false),
        HooksCommand::Trust { accept } => user_hooks::trust(ctx, true, &accept),
        HooksCommand::Untrust => user_hooks::trust(ctx, false, &[]),
        HooksCommand::Install(args) => user_hooks::install(ctx, &args),
        HooksCommand::ImportClaude { from, level } => user_hooks::import_claude(
            ctx,
            from.as_deref(),
            level == crate::user_hooks::HooksLevel::Project,
        ),
    }
}

/// Runs the command line; returns the exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    let project = cli
        .project
        .clone()
        .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
    let result: Result<Outcome, CommandError> = match cli.command {
        Commands::Completions { shell, binary } => {
            let script = crate::docs::completions(shell, binary);
            return write_stdout(&script);
        }
        Commands::Docs { dir } => crate::docs::write_all(&dir)
            .map(|written| Outcome {
                text: format!("wrote {} files under {}\n", written.len(), dir.display()),
                json: serde_json::json!({"written": written}),
                code: 0,
            })
            .map_err(|e| CommandError::io("write the documentation under", &dir, e)),
        Commands::Install(args) => commands::install(&args, &project),
        Commands::Uninstall(args) => commands::uninstall(&args, &project),
        Commands::Doctor(args) => commands::doctor(&args, &project),
        Commands::Status(args) => commands::status(&args, &project),
        Commands::Hooks(command) => run_hooks_command(command, &project),
        Commands::Lock { message, status } => Locations::from_env(&project)
            .map_err(CommandError::from)
            .and_then(|l| {
                if status {
                    crate::lock::status(&l)
                } else {
                    crate::lock::lock(&l, message.as_deref())
                }
            }),
        Commands::Update(args) => crate::update::update(&args, &project),
        Commands::Reregister { bin_dir } => commands::reregister(&project, &bin_dir),
        Commands::Unlock => Locations::from_env(&project)
            .map_err(CommandError::from)
            .and_then(|l| crate::lock::unlock(&l)),
        Commands::Log(mut args) => {
            args.json = cli.json;
            // Printed as it goes (--follow), JSON Lines with --json: not one Outcome.
            return match crate::log::main(&args) {
                Ok(code) => code,
                Err(error) => {
                    eprintln!("amplihack: error: {error}");
                    error.exit_code()
                }
            };
        }
        Commands::Memory(command) => Locations::from_env(&project)
            .map_err(CommandError::from)
            .and_then(|l| match command {
                MemoryCommand::List { agent, kind } => {
                    crate::memory::list(&l, agent.as_deref(), kind.as_deref())
                }
                MemoryCommand::Show { id } => crate::memory::show(&l, &id),
                MemoryCommand::Add { text, agent, kind } => {
                    crate::memory::add(&l, &text, agent.as_deref(), &kind)
                }
                MemoryCommand::Forget { id } => crate::memory::forget(&l, &id),
            }),
    };
    // amplihack's own records found damaged on the way: set aside, and said once.
    for note in amplihack_state::files::take_notes() {
        eprintln!("amplihack: warning: {note}");
    }
    match result {
        Ok(outcome) => {
            if cli.json {
                println!("{}", outcome.json);
            } else {
                print!("{}", outcome.text);
            }
            outcome.code
        }
        Err(error) => {
            if cli.json {
                println!("{}", serde_json::json!({"error": error.to_string()}));
            }
            eprintln!("amplihack: error: {error}");
            error.exit_code()
        }
    }
}

/// Raw bytes to stdout; a reader that went away is not an error of ours.
fn write_stdout(bytes: &[u8]) -> i32 {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(bytes).and_then(|()| out.flush());
    0
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// `amplihack --help` and `amplihack install --help` as a person reads them: the commands'
    /// own `Args` and the flattened shared flags (`--dry-run`, `--verbose`, `--yes`) in place.
    #[test]
    fn help_as_printed() {
        let mut cli = Cli::command();
        insta::assert_snapshot!("help", cli.render_long_help().to_string());
        let mut cli = Cli::command();
        cli.build();
        let install = cli
            .find_subcommand_mut("install")
            .map(|c| c.render_long_help().to_string());
        insta::assert_snapshot!("install_help", install.unwrap_or_default());
    }

    /// Every option and argument of every subcommand says what it does in `--help`.
    #[test]
    fn every_option_has_a_description() {
        fn walk(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in command.get_arguments() {
                let id = arg.get_id().as_str();
                if id == "help" || id == "version" {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} {id}"));
                }
            }
            for sub in command.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "amplihack", &mut missing);
        assert!(missing.is_empty(), "without a description: {missing:?}");
    }
}
