//! Benchmarks live in `benches/benches/`; this is what they share.

use hark_mvcc::{BackendKind, StoreOptions};

/// The on-disk backends this build has (both, in this crate): the store
/// benchmarks run once per backend, each result named after it.
pub fn backends() -> Vec<BackendKind> {
    [BackendKind::RocksDb, BackendKind::Fjall]
        .into_iter()
        .filter(|kind| kind.is_built())
        .collect()
}

/// Store options on `backend`, syncing each commit group or not.
pub fn options(backend: BackendKind, sync: bool) -> StoreOptions {
    StoreOptions {
        backend,
        sync,
        ..StoreOptions::default()
    }
}
