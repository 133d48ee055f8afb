//! What the checkers found and what they checked. Its own room, so the
//! checkers beside `check.rs` (safety, limits, backups) report into it
//! without importing `check.rs`, which calls them.

#[derive(Default)]
pub struct Report {
    pub anomalies: Vec<String>,
    /// What was checked, for the summary.
    pub facts: Vec<String>,
}

impl Report {
    pub fn anomaly(&mut self, what: String) {
        // A broken guarantee tends to repeat: the first few say enough.
        if self.anomalies.len() < 200 {
            self.anomalies.push(what);
        }
    }
}
