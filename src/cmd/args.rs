//! Options shared by several commands, defined below `cli.rs` so that `cmd/` never
//! reaches up to it.

use std::path::PathBuf;

use clap::Args;

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
