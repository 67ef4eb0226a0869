//! The real binaries as child processes: started on a port, killed with
//! SIGKILL (no shutdown code runs), frozen with SIGSTOP, and started again.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// Why a process could not be started or signalled.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("cannot start {binary}: {source}")]
    Spawn { binary: String, source: std::io::Error },
    #[error("{binary} did not print its URL within {within:?}; see {log}")]
    NoUrl { binary: String, within: Duration, log: String },
    #[error("cannot signal {binary}: {source}")]
    Signal { binary: String, source: nix::Error },
}

/// How to start one program, again and again.
#[derive(Debug, Clone)]
pub struct Program {
    pub binary: PathBuf,
    pub args: Vec<String>,
    pub log: PathBuf,
}

/// A started program and the URL it printed.
#[derive(Debug)]
pub struct Running {
    pub url: String,
    /// Every URL on the line it printed (a server's public and admin ones).
    pub urls: Vec<String>,
    child: Child,
    program: Program,
}

const START_WITHIN: Duration = Duration::from_secs(30);

impl Program {
    /// Starts it and waits for the `http://` URL it prints on its first lines.
    pub async fn start(&self) -> Result<Running, ProcessError> {
        let name = self.name();
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(|source| ProcessError::Spawn { binary: name.clone(), source })?;
        let mut child = Command::new(&self.binary)
            .args(&self.args)
            .stdout(Stdio::piped())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| ProcessError::Spawn { binary: name.clone(), source })?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let no_url =
            || ProcessError::NoUrl { binary: name.clone(), within: START_WITHIN, log: self.log.display().to_string() };
        let urls = tokio::time::timeout(START_WITHIN, async {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let urls: Vec<String> =
                    line.split_whitespace().filter(|word| word.starts_with("http://")).map(str::to_owned).collect();
                if !urls.is_empty() {
                    // Keep draining its stdout so it never blocks on a full pipe.
                    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
                    return Some(urls);
                }
            }
            None
        })
        .await
        .ok()
        .flatten()
        .ok_or_else(no_url)?;
        Ok(Running { url: urls[0].clone(), urls, child, program: self.clone() })
    }

    fn name(&self) -> String {
        self.binary.file_name().map_or_else(|| "program".to_owned(), |name| name.to_string_lossy().into_owned())
    }
}

impl Running {
    /// Its process id, while it runs (to read its memory and CPU time).
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// SIGKILL, and wait until it is gone.
    pub async fn kill(mut self) -> Program {
        let _ = self.child.kill().await;
        self.program
    }

    /// SIGSTOP: it keeps its sockets and its leases but does nothing.
    pub fn freeze(&self) -> Result<(), ProcessError> {
        self.signal(Signal::SIGSTOP)
    }

    /// SIGCONT after a freeze.
    pub fn thaw(&self) -> Result<(), ProcessError> {
        self.signal(Signal::SIGCONT)
    }

    fn signal(&self, signal: Signal) -> Result<(), ProcessError> {
        let Some(id) = self.child.id() else { return Ok(()) };
        let pid = Pid::from_raw(i32::try_from(id).unwrap_or(i32::MAX));
        kill(pid, signal).map_err(|source| ProcessError::Signal { binary: self.program.name(), source })
    }
}

/// Where the binaries are: the given folder, or the folder of this program
/// (`target/debug` or `target/release`, also from `target/*/deps` in tests).
pub fn bin_dir(given: Option<&Path>) -> PathBuf {
    if let Some(dir) = given {
        return dir.to_owned();
    }
    let exe = std::env::current_exe().unwrap_or_default();
    let dir = exe.parent().map(Path::to_owned).unwrap_or_default();
    if dir.ends_with("deps") { dir.parent().map(Path::to_owned).unwrap_or(dir) } else { dir }
}
