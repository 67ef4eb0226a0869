//! What a process on this machine uses, read from `/proc`: its resident memory
//! and the CPU time it has had. Linux only, like the rest of the experiment.

/// Clock ticks per second in `/proc/<pid>/stat`: `USER_HZ`, fixed at 100 by
/// Linux's ABI on every architecture this runs on.
const TICKS_PER_SECOND: f64 = 100.0;

/// One reading of one process.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Reading {
    /// Resident set size, in bytes.
    pub rss_bytes: u64,
    /// User and system CPU time so far, in seconds.
    pub cpu_seconds: f64,
}

/// The process `pid` now, or `None` once it is gone.
pub fn read(pid: u32) -> Option<Reading> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(Reading { rss_bytes: rss_bytes(&status)?, cpu_seconds: cpu_seconds(&stat)? })
}

/// Several processes now, summed (a cluster's servers), or `None` if one could
/// not be read (gone, or no file to open it with when this process is at its limit).
pub fn read_all(pids: &[u32]) -> Option<Reading> {
    pids.iter().try_fold(Reading::default(), |sum, &pid| {
        let one = read(pid)?;
        Some(Reading { rss_bytes: sum.rss_bytes + one.rss_bytes, cpu_seconds: sum.cpu_seconds + one.cpu_seconds })
    })
}

/// This process now.
pub fn own() -> Option<Reading> {
    read(std::process::id())
}

/// `VmRSS:  12345 kB` from `/proc/<pid>/status`.
fn rss_bytes(status: &str) -> Option<u64> {
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// utime + stime (fields 14 and 15) from `/proc/<pid>/stat`. The command name
/// (field 2) is in parentheses and may hold spaces, so fields are counted
/// after its closing parenthesis.
fn cpu_seconds(stat: &str) -> Option<f64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace().skip(11);
    let user: f64 = fields.next()?.parse().ok()?;
    let system: f64 = fields.next()?.parse().ok()?;
    Some((user + system) / TICKS_PER_SECOND)
}

/// Lets this process (and the servers it starts, which inherit it) hold as many
/// open connections as the experiment needs: the soft limit on open files
/// raised to `wanted`, or as far as the hard limit allows (root may raise that too).
pub fn allow_open_files(wanted: u64) -> u64 {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else { return 0 };
    if soft >= wanted {
        return soft;
    }
    if hard < wanted && setrlimit(Resource::RLIMIT_NOFILE, wanted, wanted).is_ok() {
        return wanted;
    }
    let raised = wanted.min(hard);
    if setrlimit(Resource::RLIMIT_NOFILE, raised, hard).is_ok() { raised } else { soft }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_and_cpu_are_read_from_procs_own_formats() {
        let status = "Name:\tpayonce-server\nVmPeak:\t  999 kB\nVmRSS:\t   10532 kB\nThreads:\t3\n";
        assert_eq!(rss_bytes(status), Some(10_532 * 1024));
        let stat = "4242 (payonce server) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 3 0";
        assert_eq!(cpu_seconds(stat), Some(3.0), "250 + 50 ticks, past a name with a space");
        assert_eq!(rss_bytes("Name:\tx\n"), None);
    }

    #[test]
    fn this_process_can_be_read() {
        let now = own().expect("/proc/self");
        assert!(now.rss_bytes > 0);
    }
}
