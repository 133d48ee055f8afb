//! What operators look at and what runs on its own: the HTTP probes
//! (`/health`, `/readyz`, `/livez`, `/metrics`, `/debug`), the Prometheus
//! metrics the server publishes, auto-compaction, automatic defragmentation
//! and scheduled backups.

pub(crate) mod auto_compaction;
pub(crate) mod auto_defrag;
pub(crate) mod metrics;
pub(crate) mod probes;
pub(crate) mod runtime_metrics;
pub(crate) mod scheduled_backups;
