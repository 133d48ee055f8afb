//! Revisions: points in the store's history (their encoding as backend
//! keys is in [`crate::layout`]).

/// A point in the store's history: `main` grows by one per write transaction that
/// changes something, `sub` numbers the changes inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub(crate) struct Revision {
    pub main: i64,
    pub sub: i64,
}

impl Revision {
    pub(crate) const fn new(main: i64, sub: i64) -> Self {
        Revision { main, sub }
    }
}
