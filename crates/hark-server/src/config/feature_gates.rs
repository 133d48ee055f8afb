//! etcd 3.6 and 3.7's `--feature-gates=Name=bool,…`: parsed as etcd's `featuregate`
//! package parses it (Go booleans, unknown names refused, `AllAlpha` and
//! `AllBeta` for every gate of that stage), with the gates Hark honours
//! read from it and the rest returned to be warned about.

/// A gate's release stage, for `AllAlpha` / `AllBeta`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    Alpha,
    Beta,
}

/// etcd 3.7.3's gates (3.6's and two more): name, stage, default, and why it has no effect in
/// Hark (`None`: Hark honours it).
const GATES: &[(&str, Stage, bool, Option<&str>)] = &[
    (
        "StopGRPCServiceOnDefrag",
        Stage::Alpha,
        false,
        Some(
            "Hark's defragmentation does not stop reads or writes, so clients need not be sent elsewhere",
        ),
    ),
    ("InitialCorruptCheck", Stage::Alpha, false, None),
    ("CompactHashCheck", Stage::Alpha, false, None),
    (
        "TxnModeWriteWithSharedBuffer",
        Stage::Beta,
        true,
        Some("tunes etcd's bbolt backend; Hark's store is RocksDB"),
    ),
    (
        "LeaseCheckpoint",
        Stage::Alpha,
        false,
        Some(super::etcd_flags::LEASE_CHECKPOINT),
    ),
    (
        "LeaseCheckpointPersist",
        Stage::Alpha,
        false,
        Some(super::etcd_flags::LEASE_CHECKPOINT),
    ),
    ("SetMemberLocalAddr", Stage::Alpha, false, None),
    (
        "FastLeaseKeepAlive",
        Stage::Beta,
        true,
        Some(
            "Hark's leader renews a lease once it has confirmed its leadership, never waiting for its apply to catch up (the gate's default)",
        ),
    ),
    (
        "PriorityRequest",
        Stage::Alpha,
        false,
        Some(
            "Hark applies the log in order; lease revocations are not moved ahead of other entries",
        ),
    ),
];

/// The gates as resolved.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FeatureGates {
    pub initial_corrupt_check: bool,
    pub compact_hash_check: bool,
    /// Connections to peers leave from the first advertised peer address
    /// that is an IP, neither loopback nor unspecified.
    pub set_member_local_addr: bool,
    /// Gates named (or set by `AllAlpha` / `AllBeta`) that Hark does not act
    /// on, with why.
    pub without_effect: Vec<(&'static str, &'static str)>,
}

/// Parses `--feature-gates`; errors are etcd's.
pub fn parse(value: &str) -> Result<FeatureGates, String> {
    let mut named: Vec<(String, bool)> = Vec::new();
    for part in value.split(',').filter(|p| !p.is_empty()) {
        let (name, setting) = match part.split_once('=') {
            Some((n, v)) => (n.trim(), v.trim()),
            None => return Err(format!("missing bool value for {}", part.trim())),
        };
        let on = super::etcd_flags::go_bool(setting).ok_or_else(|| {
            format!(
                "invalid value of {name}={setting}, err: strconv.ParseBool: parsing {setting:?}: invalid syntax"
            )
        })?;
        let known =
            matches!(name, "AllAlpha" | "AllBeta") || GATES.iter().any(|(gate, ..)| *gate == name);
        if !known {
            return Err(format!("unrecognized feature gate: {name}"));
        }
        named.retain(|(n, _)| n != name);
        named.push((name.to_string(), on));
    }
    let setting = |name: &str| named.iter().find(|(n, _)| n == name).map(|(_, on)| *on);
    let mut gates = FeatureGates::default();
    for &(gate, stage, default, reason) in GATES {
        let all = match stage {
            Stage::Alpha => setting("AllAlpha"),
            Stage::Beta => setting("AllBeta"),
        };
        let (on, set) = match (setting(gate), all) {
            (Some(on), _) => (on, true),
            (None, Some(on)) => (on, true),
            (None, None) => (default, false),
        };
        match reason {
            None if gate == "CompactHashCheck" => gates.compact_hash_check = on,
            None if gate == "SetMemberLocalAddr" => gates.set_member_local_addr = on,
            None => gates.initial_corrupt_check = on,
            Some(reason) if set => gates.without_effect.push((gate, reason)),
            Some(_) => {}
        }
    }
    Ok(gates)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gates_are_parsed_as_etcds_featuregate_parses_them() {
        assert_eq!(parse("").unwrap(), FeatureGates::default());
        let g = parse("InitialCorruptCheck=true").unwrap();
        assert!(g.initial_corrupt_check && g.without_effect.is_empty());
        let g = parse(" InitialCorruptCheck = 1 ,CompactHashCheck=false,").unwrap();
        assert!(g.initial_corrupt_check && !g.compact_hash_check);
        assert!(g.without_effect.is_empty());
        let g = parse("CompactHashCheck=true,LeaseCheckpoint=true").unwrap();
        assert!(g.compact_hash_check && !g.initial_corrupt_check);
        assert_eq!(g.without_effect.len(), 1);
        assert_eq!(g.without_effect[0].0, "LeaseCheckpoint");
        // The last setting of a gate wins; AllAlpha sets the alpha gates not named.
        assert!(
            !parse("InitialCorruptCheck=true,InitialCorruptCheck=false")
                .unwrap()
                .initial_corrupt_check
        );
        let g = parse("AllAlpha=true,LeaseCheckpoint=false").unwrap();
        assert!(g.initial_corrupt_check && g.compact_hash_check && g.set_member_local_addr);
        assert_eq!(g.without_effect.len(), 4, "{:?}", g.without_effect);
        // etcd 3.7's gates are taken (etcd's e2e suite sets them).
        let g = parse("FastLeaseKeepAlive=true,PriorityRequest=false").unwrap();
        assert_eq!(g.without_effect.len(), 2, "{:?}", g.without_effect);
        assert!(
            !parse("AllAlpha=true,InitialCorruptCheck=false")
                .unwrap()
                .initial_corrupt_check
        );
        assert!(!parse("AllBeta=true").unwrap().initial_corrupt_check);

        assert_eq!(
            parse("NoSuchGate=true").unwrap_err(),
            "unrecognized feature gate: NoSuchGate"
        );
        assert_eq!(
            parse("InitialCorruptCheck").unwrap_err(),
            "missing bool value for InitialCorruptCheck"
        );
        assert!(
            parse("InitialCorruptCheck=maybe")
                .unwrap_err()
                .starts_with("invalid value of InitialCorruptCheck=maybe")
        );
    }
}
