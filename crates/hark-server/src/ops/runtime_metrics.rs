//! The runtime series etcd's exporter writes beside its own: `go_*` (Go's
//! runtime collector), `os_fd_*` (etcd's file descriptor gauges) and
//! `promhttp_*` (the exporter's own requests). Tools and etcd's e2e suite
//! look for them by name.
//!
//! Hark has no Go runtime. Each `go_*` series holds what this process has of
//! the same thing, or what Go reports when it has none:
//! - `go_goroutines`: live tokio tasks; `go_threads`: the process's OS
//!   threads; `go_sched_gomaxprocs_threads`: tokio's worker threads.
//! - `go_memstats_sys_bytes`, `heap_sys_bytes`, `heap_inuse_bytes`,
//!   `heap_alloc_bytes` and `alloc_bytes`: the resident memory of the whole
//!   process (mimalloc's heap is most of it; `process_resident_memory_bytes`
//!   is the same figure).
//! - There is no garbage collector: `go_gc_gogc_percent` is -1 (how Go
//!   reports `GOGC=off`), `go_gc_gomemlimit_bytes` is Go's "no limit",
//!   `go_gc_duration_seconds` has no sample and `go_memstats_last_gc_time_seconds`
//!   is 0.
//! - Go's allocator internals (`mcache`, `mspan`, `buck_hash`, `stack`,
//!   `gc_sys`, `other_sys`, `next_gc`, idle and released heap) and its
//!   allocation counters are 0: mimalloc keeps no such figures without its
//!   statistics build.

/// `go_info{version}` and `etcd_server_go_version{server_go_version}`: the
/// compiler the binary was built with (`rust1.90.0`).
pub const RUST_VERSION: &str = env!("HARK_RUSTC_VERSION");

/// Go's `math.MaxInt64`: `GOMEMLIMIT` unset.
const NO_MEMORY_LIMIT: f64 = 9_223_372_036_854_775_807.0;

const GAUGES: [(&str, &str); 24] = [
    (
        "go_goroutines",
        "Number of goroutines that currently exist.",
    ),
    ("go_threads", "Number of OS threads created."),
    (
        "go_sched_gomaxprocs_threads",
        "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously.",
    ),
    (
        "go_gc_gogc_percent",
        "Heap size target percentage configured by the user, otherwise 100.",
    ),
    (
        "go_gc_gomemlimit_bytes",
        "Go runtime memory limit configured by the user, otherwise math.MaxInt64.",
    ),
    (
        "go_memstats_alloc_bytes",
        "Number of heap bytes allocated and currently in use.",
    ),
    (
        "go_memstats_buck_hash_sys_bytes",
        "Number of bytes used by the profiling bucket hash table.",
    ),
    (
        "go_memstats_gc_sys_bytes",
        "Number of bytes used for garbage collection system metadata.",
    ),
    (
        "go_memstats_heap_alloc_bytes",
        "Number of heap bytes allocated and currently in use.",
    ),
    (
        "go_memstats_heap_idle_bytes",
        "Number of heap bytes waiting to be used.",
    ),
    (
        "go_memstats_heap_inuse_bytes",
        "Number of heap bytes that are in use.",
    ),
    (
        "go_memstats_heap_objects",
        "Number of currently allocated objects.",
    ),
    (
        "go_memstats_heap_released_bytes",
        "Number of heap bytes released to OS.",
    ),
    (
        "go_memstats_heap_sys_bytes",
        "Number of heap bytes obtained from system.",
    ),
    (
        "go_memstats_last_gc_time_seconds",
        "Number of seconds since 1970 of last garbage collection.",
    ),
    (
        "go_memstats_mcache_inuse_bytes",
        "Number of bytes in use by mcache structures.",
    ),
    (
        "go_memstats_mcache_sys_bytes",
        "Number of bytes used for mcache structures obtained from system.",
    ),
    (
        "go_memstats_mspan_inuse_bytes",
        "Number of bytes in use by mspan structures.",
    ),
    (
        "go_memstats_mspan_sys_bytes",
        "Number of bytes used for mspan structures obtained from system.",
    ),
    (
        "go_memstats_next_gc_bytes",
        "Number of heap bytes when next garbage collection will take place.",
    ),
    (
        "go_memstats_other_sys_bytes",
        "Number of bytes used for other system allocations.",
    ),
    (
        "go_memstats_stack_inuse_bytes",
        "Number of bytes in use by the stack allocator.",
    ),
    (
        "go_memstats_stack_sys_bytes",
        "Number of bytes obtained from system for stack allocator.",
    ),
    (
        "go_memstats_sys_bytes",
        "Number of bytes obtained from system.",
    ),
];

const COUNTERS: [(&str, &str); 3] = [
    (
        "go_memstats_alloc_bytes_total",
        "Total number of bytes allocated, even if freed.",
    ),
    ("go_memstats_frees_total", "Total number of frees."),
    ("go_memstats_mallocs_total", "Total number of mallocs."),
];

/// The series that hold this process's resident memory (see the module docs).
const RESIDENT: [&str; 5] = [
    "go_memstats_sys_bytes",
    "go_memstats_heap_sys_bytes",
    "go_memstats_heap_inuse_bytes",
    "go_memstats_heap_alloc_bytes",
    "go_memstats_alloc_bytes",
];

/// The codes etcd's exporter pre-creates for its own requests.
pub const PROMHTTP_CODES: [&str; 3] = ["200", "500", "503"];

/// Describes every series and sets those with a fixed value.
pub fn register() {
    for (name, help) in GAUGES {
        metrics::describe_gauge!(name, help);
        metrics::gauge!(name).set(0.0);
    }
    for (name, help) in COUNTERS {
        metrics::describe_counter!(name, help);
        metrics::counter!(name).absolute(0);
    }
    metrics::describe_histogram!(
        "go_gc_duration_seconds",
        "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles."
    );
    // No buckets are set for it: rendered as a summary, as Go's, with no sample.
    let _ = metrics::histogram!("go_gc_duration_seconds");
    metrics::describe_gauge!("go_info", "Information about the Go environment.");
    metrics::gauge!("go_info", "version" => RUST_VERSION).set(1.0);
    metrics::gauge!("go_gc_gogc_percent").set(-1.0);
    metrics::gauge!("go_gc_gomemlimit_bytes").set(NO_MEMORY_LIMIT);
    metrics::describe_gauge!("os_fd_used", "The number of used file descriptors.");
    metrics::describe_gauge!("os_fd_limit", "The file descriptor limit.");
    metrics::describe_gauge!(
        "promhttp_metric_handler_requests_in_flight",
        "Current number of scrapes being served."
    );
    metrics::gauge!("promhttp_metric_handler_requests_in_flight").set(0.0);
    metrics::describe_counter!(
        "promhttp_metric_handler_requests_total",
        "Total number of scrapes by HTTP status code."
    );
    for code in PROMHTTP_CODES {
        metrics::counter!("promhttp_metric_handler_requests_total", "code" => code).increment(0);
    }
    refresh();
}

/// Re-reads what changes: tasks, threads, memory, file descriptors.
pub fn refresh() {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        let m = runtime.metrics();
        metrics::gauge!("go_goroutines").set(m.num_alive_tasks() as f64);
        metrics::gauge!("go_sched_gomaxprocs_threads").set(m.num_workers() as f64);
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(threads) = status_field(&status, "Threads:") {
        metrics::gauge!("go_threads").set(threads as f64);
    }
    if let Some(kib) = status_field(&status, "VmRSS:") {
        for name in RESIDENT {
            metrics::gauge!(name).set((kib * 1024) as f64);
        }
    }
    if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
        metrics::gauge!("os_fd_used").set(fds.count() as f64);
    }
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes only into the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
        metrics::gauge!("os_fd_limit").set(limit.rlim_cur as f64);
    }
}

/// The number after `name` on its line of `/proc/self/status`.
fn status_field(status: &str, name: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Counts one `/metrics` request as etcd's exporter counts its own: in
/// flight while it lives, then by its status code.
pub struct Scrape;

impl Scrape {
    pub fn start() -> Scrape {
        metrics::gauge!("promhttp_metric_handler_requests_in_flight").increment(1.0);
        Scrape
    }
}

impl Drop for Scrape {
    fn drop(&mut self) {
        metrics::gauge!("promhttp_metric_handler_requests_in_flight").decrement(1.0);
        metrics::counter!("promhttp_metric_handler_requests_total", "code" => "200").increment(1);
    }
}

#[cfg(test)]
mod tests {
    use super::status_field;

    #[test]
    fn status_fields_are_read_by_name() {
        let status = "Name:\thark\nVmRSS:\t  51200 kB\nThreads:\t12\n";
        assert_eq!(status_field(status, "VmRSS:"), Some(51200));
        assert_eq!(status_field(status, "Threads:"), Some(12));
        assert_eq!(status_field(status, "VmSwap:"), None);
    }
}
