//! The `host` binary: parse the command line, run the command, map the outcome to an exit code.

use std::process::ExitCode;

use clap::Parser;
use host::cli::{Cli, Command};
use host::commands::{self, Outcome};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Run(args) => commands::run::run(args, cli.verbose),
        Command::Merge(args) => commands::merge::merge(args, cli.verbose),
        Command::Report(args) => commands::report::report(args, cli.verbose),
        Command::Runs(args) => commands::runs::runs(args),
        Command::Check(args) => commands::check::check(args, cli.verbose),
        Command::Test(args) => commands::test::test(args, cli.verbose),
        Command::Model(args) => commands::model::model(args),
        Command::Fetch(args) => commands::fetch::fetch(args),
        Command::Api(args) => commands::api::api(args),
        Command::Guest(command) => commands::guest::guest(command, cli.verbose),
        Command::Hook(args) => commands::hook::hook(args, cli.verbose),
        Command::Reap => {
            host::capabilities::proc::reaper::run();
            Ok(Outcome::Success)
        }
    };
    let outcome = result.unwrap_or_else(|error| {
        eprintln!("error: {error:#}");
        Outcome::Failed
    });
    ExitCode::from(outcome.exit_code())
}
