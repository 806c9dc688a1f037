//! Command-line interface: argument definitions and dispatch, nothing else.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};

use crate::cmd;

#[derive(Parser)]
#[command(name = "lmdb-regress", version, about = "Did LMDB get slower? In which release, in which commit, by how much, and how sure are we?")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Where sources come from and how they are compiled: shared by every command that builds.
#[derive(Args, Debug, Clone, Default)]
pub struct BuildArgs {
    /// A local git repository of OpenLDAP or LMDB (clone or bare); also LMDB_GIT.
    #[arg(long, value_name = "PATH")]
    pub git: Option<PathBuf>,
    /// C compiler (default: as the cc crate finds it: $CC, else cc).
    #[arg(long, value_name = "CC")]
    pub cc: Option<String>,
    /// C flags, replacing the default "-O2 -g -fPIC -shared -pthread".
    #[arg(long, value_name = "FLAGS", allow_hyphen_values = true)]
    pub cflags: Option<String>,
    /// Parallel build jobs (default: the number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
}

#[derive(Subcommand)]
pub enum Command {
    /// List every tag in lmdb-tags: built, unavailable or failed, and why.
    Tags {
        #[command(flatten)]
        build: BuildArgs,
        /// Print one JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Fetch, verify and compile tags or commits.
    Build {
        /// Tags: 0.9.17..0.9.33, LMDB_0.9.19, 0.9.18,0.9.21, all, default, or commit ids with --git.
        #[arg(long, default_value = "default")]
        tags: String,
        #[command(flatten)]
        build: BuildArgs,
        /// Also build the C twin of the harness for each tag.
        #[arg(long)]
        c_harness: bool,
    },
}

pub fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Tags { build, json } => cmd::tags::run(&build, json),
        Command::Build { tags, build, c_harness } => cmd::build::run(&tags, &build, c_harness),
    }
}
