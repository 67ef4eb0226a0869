//! Flags renamed so that each idea has one word, still read under their old
//! names for one release, so that a deploy's scripts and environment keep
//! working: the old flag is a clap alias (in `flags`), and the old
//! environment variable is read here, since clap reads one per flag.

use std::ffi::OsString;

/// One renamed flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Renamed {
    pub flag: &'static str,
    pub old_flag: &'static str,
    pub env: &'static str,
    pub old_env: &'static str,
}

/// Every renamed flag, each with its old name.
pub const RENAMED: &[Renamed] = &[
    Renamed {
        flag: "--pg-limit",
        old_flag: "--pg-max-concurrency",
        env: "PAYONCE_PG_LIMIT",
        old_env: "PAYONCE_PG_MAX_CONCURRENCY",
    },
    Renamed {
        flag: "--reconcile-orphans",
        old_flag: "--reconcile-strays",
        env: "PAYONCE_RECONCILE_ORPHANS",
        old_env: "PAYONCE_RECONCILE_STRAYS",
    },
    Renamed {
        flag: "--check-interval",
        old_flag: "--poll-interval",
        env: "PAYONCE_CHECK_INTERVAL",
        old_env: "PAYONCE_POLL_INTERVAL",
    },
    Renamed {
        flag: "--max-checks",
        old_flag: "--poll-attempts",
        env: "PAYONCE_MAX_CHECKS",
        old_env: "PAYONCE_POLL_ATTEMPTS",
    },
];

/// `args` with each old environment variable that is set given as its new
/// flag, unless the new variable is set or the command line names the flag
/// under either name (the command line wins over the environment, as clap's
/// order is). Also a warning per old name still in use, for the log.
pub fn with_renamed_env(
    mut args: Vec<OsString>,
    env: impl Fn(&str) -> Option<OsString>,
) -> (Vec<OsString>, Vec<String>) {
    let mut warnings = Vec::new();
    for renamed in RENAMED {
        let named = |flag: &str| {
            args.iter().filter_map(|arg| arg.to_str()).any(|arg| arg == flag || arg.starts_with(&format!("{flag}=")))
        };
        if named(renamed.old_flag) {
            warnings
                .push(format!("{} is the old name of {}: it goes in a later release", renamed.old_flag, renamed.flag));
        }
        let Some(value) = env(renamed.old_env) else { continue };
        warnings.push(format!("{} is the old name of {}: it goes in a later release", renamed.old_env, renamed.env));
        if env(renamed.env).is_some() || named(renamed.flag) || named(renamed.old_flag) {
            continue;
        }
        let mut given = OsString::from(format!("{}=", renamed.flag));
        given.push(value);
        args.push(given);
    }
    (args, warnings)
}
