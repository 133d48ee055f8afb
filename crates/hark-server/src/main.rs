//! The `hark` binary: etcd's flags in, a serving member out; SIGTERM or SIGINT
//! stops it cleanly (exit status 0).

use hark_server::config::command_line;

// glibc's malloc took about a sixth of a member's CPU under write load
// (fragmented free lists, consolidation); mimalloc's per-thread pages do not.
// Built without its transparent-huge-page advice (`no_thp`): with it, pages
// purged and touched again were zeroed 2 MiB at a time, another sixth.
// (`--features system-allocator` keeps the C library's malloc, for a heap
// profiler that hooks it: docs/benchmarks.md, "Catch-up memory".)
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay`: its position in `mi_option_e` of the
/// v3 sources the mimalloc crate builds (libmimalloc-sys exports the
/// function but not this constant).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Freed pages go back to the OS at once rather than after the purge delay
/// (1 s in mimalloc v3). mimalloc purges delayed pages only when their
/// thread next calls the allocator, so a burst's buffers freed on a thread
/// that then idles (a tokio worker after 100k watch creates) stayed
/// resident: about 10 MB, 100 bytes per watcher at 100k watchers. A delay
/// set in the environment still wins.
fn purge_freed_memory_at_once() {
    let set_by_env = ["MIMALLOC_PURGE_DELAY", "MIMALLOC_RESET_DELAY"]
        .iter()
        .any(|name| std::env::var_os(name).is_some());
    if !set_by_env {
        // SAFETY: sets one integer option, before any other thread exists.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
        // Guards the constant against a reordered enum in a later mimalloc.
        debug_assert_eq!(
            unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) },
            0
        );
    }
}

fn main() -> std::process::ExitCode {
    purge_freed_memory_at_once();
    // Every file and dir the member creates (the store's and the raft log's
    // files, snapshots, backups, keys) is its owner's alone, as etcd makes
    // its data files 0600 and dirs 0700, whatever the umask it was given.
    // SAFETY: sets the process's file mode mask, before any thread exists.
    unsafe { libc::umask(0o077) };
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "gateway") {
        return gateway(&args[2..]);
    }
    // etcd's command line, ETCD_* variables or config file, read as etcd
    // reads them; what was ignored is logged once logging is up.
    let (config, notices) = match command_line::read(args, std::env::vars_os().collect()) {
        Ok(read) => read,
        Err(command_line::Error::Clap(e)) => e.exit(),
        Err(command_line::Error::Other(e)) => {
            eprintln!("hark: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    if let Err(e) = hark_server::logging::init(&config) {
        eprintln!("hark: {e}");
        return std::process::ExitCode::from(2);
    }
    notices.log();
    let runtime = tokio::runtime::Runtime::new().expect("start the tokio runtime");
    runtime.block_on(async move {
        let server = match hark_server::start(&config).await {
            Ok(s) => s,
            Err(e) => {
                tracing::error!("{e}");
                return std::process::ExitCode::FAILURE;
            }
        };
        // systemd's Type=notify (contrib/systemd/hark.service): the unit is
        // started once the member serves clients, after it joined its
        // cluster and published itself, as etcd notifies; a rolling restart
        // that waits on `systemctl start` then never takes out a quorum.
        // Without NOTIFY_SOCKET this does nothing.
        let ready = async {
            if server.serving().await
                && let Err(e) = sd_notify::notify(&[sd_notify::NotifyState::Ready])
            {
                tracing::warn!(error = %e, "could not notify systemd (NOTIFY_SOCKET) of readiness");
            }
            std::future::pending::<()>().await
        };
        let removed = async {
            server.removed().await;
            // etcd's words; and its delay, so that the answer to the
            // removal, and the entry's commit, still reach the others.
            tracing::warn!("the member has been permanently removed from the cluster");
            tracing::warn!(
                "data-dir" = %config.data_dir().display(),
                "the data-dir used by this member must be removed"
            );
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        };
        let failure = tokio::select! {
            _ = wait_for_signal() => None,
            why = server.failed() => Some(why),
            _ = removed => None,
            _ = ready => None,
        };
        match &failure {
            None => tracing::info!("shutting down"),
            Some(why) => tracing::error!(
                error = %why,
                "the replicated log stopped on a fatal error; shutting down to be restarted"
            ),
        }
        let _ = sd_notify::notify(&[sd_notify::NotifyState::Stopping]);
        server.shutdown().await;
        match failure {
            None => std::process::ExitCode::SUCCESS,
            Some(_) => std::process::ExitCode::FAILURE,
        }
    })
}

async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("install SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("install SIGINT handler");
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

/// `hark gateway start ...`: etcd's TCP gateway (see `hark_server::gateway`),
/// logging as a member does by default.
fn gateway(args: &[std::ffi::OsString]) -> std::process::ExitCode {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let gateway_args = match hark_server::gateway::parse(&args) {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("{e}");
            return std::process::ExitCode::from(2);
        }
    };
    let defaults = match command_line::read(vec!["hark".into()], Vec::new()) {
        Ok((config, _)) => config,
        Err(_) => return std::process::ExitCode::from(2),
    };
    if let Err(e) = hark_server::logging::init(&defaults) {
        eprintln!("hark: {e}");
        return std::process::ExitCode::from(2);
    }
    let runtime = tokio::runtime::Runtime::new().expect("start the tokio runtime");
    match runtime.block_on(hark_server::gateway::run(gateway_args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}
