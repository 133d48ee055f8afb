//! Deliberate bugs for the fault suite's mutation runs (`cargo xtask chaos
//! --mutation NAME`), which show that its checkers catch them. They exist
//! only in builds with the `chaos-mutations` feature, and one is switched
//! on by naming it in `HARK_MUTATION`; otherwise [`mutation`] is a constant
//! `false` the compiler removes.
//!
//! - `read-without-read-index`: linearizable reads served from the member's
//!   own state (`hark-raft`).
//! - `watch-drop-event`: one revision in 300 not sent to synced watchers
//!   (`hark-watch`; which one differs between processes).
//! - `reapply-after-restart`: a restarted member re-applies the last entry
//!   its store had applied (`hark-raft`).
//! - `lease-without-leadership-check`: a leader renews leases without
//!   confirming it still leads (`hark-raft`).
//! - `revoke-in-any-term`: an expired lease's revoke is applied whichever
//!   leader appended it (`hark-raft`).
//! - `read-index-after-restore`: openraft restores a leader at restart in
//!   its old term, whose read index is its lazily saved commit index, as
//!   before the fix (`hark-raft`).
//! - `log-append-unsynced`: the raft log reports appends durable without
//!   syncing them (`hark-raft`); only a power loss shows it.
//! - `apply-before-leader-durable`: the leader applies (and answers) an
//!   entry before its own log has synced it (`hark-raft`; its syncs then
//!   take 20 ms more, a slow disk).
//! - `commit-before-leader-durable`: the commit index sent to followers is
//!   not held back to what the leader has synced (`hark-raft`; slow disk too).
//! - `limits-at-apply`: a committed txn is checked again at apply against
//!   the member's own `--max-txn-ops` (the store), so members with
//!   different limits apply different logs.
//! - `install-visible-to-readers`: a snapshot install takes the store's
//!   index lock only after refilling the rows, in small batches with a
//!   pause after each of the first five (the store): backups, watch
//!   catch-up and reads on an installing member see it half-filled.

/// Whether mutation `name` is on in this process.
#[cfg(feature = "chaos-mutations")]
pub fn mutation(name: &str) -> bool {
    static ON: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ON.get_or_init(|| {
        let on = std::env::var("HARK_MUTATION").unwrap_or_default();
        if !on.is_empty() {
            tracing::warn!(mutation = %on, "running with a deliberate bug (fault suite mutation run)");
        }
        on
    }) == name
}

/// Whether mutation `name` is on in this process: never, in this build.
#[cfg(not(feature = "chaos-mutations"))]
#[inline(always)]
pub fn mutation(_name: &str) -> bool {
    false
}
