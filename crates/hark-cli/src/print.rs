//! etcdctl's printers: `simple`, `json`, `fields`, and `table` where etcdctl
//! has one (endpoint status and health; elsewhere etcdctl refuses it after the
//! request ran, and so does harkctl).

use std::time::Duration;

use hark_client::{KeyValue, WatchUpdate, pb};

use crate::exit::{EXIT_BAD_ARGS, EXIT_BAD_FEATURE, Exit};
use crate::json::{self, Obj};
use crate::kv::GetArgs;

#[derive(Debug, Clone, Copy)]
pub enum Format {
    Simple { hex: bool },
    Json,
    Fields,
    Table,
}

pub struct Health {
    pub endpoint: String,
    pub healthy: bool,
    pub took: Duration,
    pub error: String,
}

pub(crate) fn unsupported(what: &str) -> Exit {
    Exit::new(
        EXIT_BAD_FEATURE,
        format!("{what} not supported as output format"),
    )
}

impl Format {
    pub fn parse(s: &str, hex: bool) -> Result<Format, Exit> {
        match s {
            "simple" => Ok(Format::Simple { hex }),
            "json" => Ok(Format::Json),
            "fields" => Ok(Format::Fields),
            "table" => Ok(Format::Table),
            _ => Err(Exit::new(EXIT_BAD_FEATURE, "unsupported output format")),
        }
    }

    fn hex(&self) -> bool {
        matches!(self, Format::Simple { hex: true })
    }

    fn kv(&self, kv: &KeyValue, value_only: bool) {
        print_kv(self.hex(), value_only, kv);
    }

    pub fn put(&self, r: &pb::PutResponse) -> Result<(), Exit> {
        match self {
            Format::Simple { .. } => {
                println!("OK");
                if let Some(prev) = &r.prev_kv {
                    self.kv(prev, false);
                }
            }
            Format::Json => println!("{}", json::put(r)),
            Format::Fields => {
                fields_header(&r.header);
                if let Some(prev) = &r.prev_kv {
                    fields_kv("Prev", prev);
                }
            }
            Format::Table => return Err(unsupported("table")),
        }
        Ok(())
    }

    pub fn get(&self, r: &pb::RangeResponse, a: &GetArgs) -> Result<(), Exit> {
        if a.count_only && !matches!(self, Format::Fields) {
            return Err(Exit::new(
                EXIT_BAD_ARGS,
                "--count-only is only for `--write-out=fields`",
            ));
        }
        if a.print_value_only && !matches!(self, Format::Simple { .. }) {
            return Err(Exit::new(
                EXIT_BAD_ARGS,
                "print-value-only is only for `--write-out=simple`",
            ));
        }
        self.range(r, a.print_value_only)
    }

    /// What a Range read, as etcdctl's `display.Get` prints it (`lock` and
    /// `elect` print their key this way too).
    pub fn range(&self, r: &pb::RangeResponse, print_value_only: bool) -> Result<(), Exit> {
        match self {
            Format::Simple { .. } => {
                for kv in &r.kvs {
                    self.kv(kv, print_value_only);
                }
            }
            Format::Json => println!("{}", json::range(r)),
            Format::Fields => {
                fields_header(&r.header);
                for kv in &r.kvs {
                    fields_kv("", kv);
                }
                println!("\"More\" : {}", r.more);
                println!("\"Count\" : {}", r.count);
            }
            Format::Table => return Err(unsupported("table")),
        }
        Ok(())
    }

    pub fn del(&self, r: &pb::DeleteRangeResponse) -> Result<(), Exit> {
        match self {
            Format::Simple { .. } => {
                println!("{}", r.deleted);
                for kv in &r.prev_kvs {
                    self.kv(kv, false);
                }
            }
            Format::Json => println!("{}", json::delete(r)),
            Format::Fields => {
                fields_header(&r.header);
                println!("\"Deleted\" : {}", r.deleted);
                for kv in &r.prev_kvs {
                    fields_kv("Prev", kv);
                }
            }
            Format::Table => return Err(unsupported("table")),
        }
        Ok(())
    }

    pub fn txn(&self, r: &pb::TxnResponse) -> Result<(), Exit> {
        use pb::response_op::Response;
        match self {
            Format::Simple { .. } => {
                println!("{}", if r.succeeded { "SUCCESS" } else { "FAILURE" });
                for op in &r.responses {
                    println!();
                    match &op.response {
                        Some(Response::ResponsePut(p)) => {
                            println!("OK");
                            if let Some(prev) = &p.prev_kv {
                                self.kv(prev, false);
                            }
                        }
                        Some(Response::ResponseRange(g)) => {
                            for kv in &g.kvs {
                                self.kv(kv, false);
                            }
                        }
                        Some(Response::ResponseDeleteRange(d)) => {
                            println!("{}", d.deleted);
                            for kv in &d.prev_kvs {
                                self.kv(kv, false);
                            }
                        }
                        other => println!("unexpected response {other:?}"),
                    }
                }
            }
            Format::Json => println!("{}", json::txn(r)),
            Format::Fields => {
                fields_header(&r.header);
                println!("\"Succeeded\" : {}", r.succeeded);
                for op in &r.responses {
                    match &op.response {
                        Some(Response::ResponsePut(p)) => self.put(p)?,
                        Some(Response::ResponseRange(g)) => {
                            fields_header(&g.header);
                            for kv in &g.kvs {
                                fields_kv("", kv);
                            }
                            println!("\"More\" : {}", g.more);
                            println!("\"Count\" : {}", g.count);
                        }
                        Some(Response::ResponseDeleteRange(d)) => self.del(d)?,
                        _ => {}
                    }
                }
            }
            Format::Table => return Err(unsupported("table")),
        }
        Ok(())
    }

    pub fn watch(&self, u: &WatchUpdate) {
        if u.is_progress() && u.revision != 0 {
            println!("progress notify: {}", u.revision);
        }
        match self {
            Format::Simple { .. } => {
                for e in &u.events {
                    println!("{}", event_type(e.r#type));
                    if let Some(prev) = &e.prev_kv {
                        self.kv(prev, false);
                    }
                    if let Some(kv) = &e.kv {
                        self.kv(kv, false);
                    }
                }
            }
            Format::Json => println!("{}", watch_json(u.header.as_ref(), &u.events, 0, false)),
            Format::Fields | Format::Table => {
                fields_header(&u.header);
                for e in &u.events {
                    println!("\"Type\" : {}", event_type(e.r#type));
                    if let Some(prev) = &e.prev_kv {
                        fields_kv("Prev", prev);
                    }
                    if let Some(kv) = &e.kv {
                        fields_kv("", kv);
                    }
                }
            }
        }
    }

    pub fn watch_canceled(&self, compact_revision: i64) {
        if let Format::Json = self {
            println!("{}", watch_json(None, &[], compact_revision, true));
        }
    }

    pub fn lease_grant(&self, r: &pb::LeaseGrantResponse) {
        match self {
            Format::Json => println!(
                "{}",
                flat_header(&r.header)
                    .int("ID", r.id)
                    .int("TTL", r.ttl)
                    .raw("Error", &json::string(&r.error))
                    .end()
            ),
            Format::Fields | Format::Table => {
                fields_header(&r.header);
                println!("\"ID\" : {}", r.id);
                println!("\"TTL\" : {}", r.ttl);
            }
            Format::Simple { .. } => {
                println!("lease {:016x} granted with TTL({}s)", r.id, r.ttl)
            }
        }
    }

    pub fn lease_revoke(&self, id: i64, r: &pb::LeaseRevokeResponse) {
        match self {
            Format::Json => println!(
                "{}",
                Obj::new().opt("header", json::header(&r.header)).end()
            ),
            Format::Fields | Format::Table => fields_header(&r.header),
            Format::Simple { .. } => println!("lease {id:016x} revoked"),
        }
    }

    pub fn lease_time_to_live(&self, r: &pb::LeaseTimeToLiveResponse, with_keys: bool) {
        match self {
            Format::Json => {
                let keys = if r.keys.is_empty() {
                    "null".to_string()
                } else {
                    format!(
                        "[{}]",
                        r.keys
                            .iter()
                            .map(|k| json::b64(k))
                            .collect::<Vec<_>>()
                            .join(",")
                    )
                };
                println!(
                    "{}",
                    flat_header(&r.header)
                        .int("id", r.id)
                        .int("ttl", r.ttl)
                        .int("granted-ttl", r.granted_ttl)
                        .raw("keys", &keys)
                        .end()
                );
            }
            Format::Fields | Format::Table => {
                fields_header(&r.header);
                println!("\"ID\" : {}", r.id);
                println!("\"TTL\" : {}", r.ttl);
                println!("\"GrantedTTL\" : {}", r.granted_ttl);
                for k in &r.keys {
                    println!("\"Key\" : {}", go_quote(k));
                }
            }
            Format::Simple { .. } => {
                if r.granted_ttl == 0 && r.ttl == -1 {
                    println!("lease {:016x} already expired", r.id);
                    return;
                }
                let mut line = format!(
                    "lease {:016x} granted with TTL({}s), remaining({}s)",
                    r.id, r.granted_ttl, r.ttl
                );
                if with_keys {
                    let keys: Vec<String> = r
                        .keys
                        .iter()
                        .map(|k| String::from_utf8_lossy(k).to_string())
                        .collect();
                    line += &format!(", attached keys([{}])", keys.join(" "));
                }
                println!("{line}");
            }
        }
    }

    pub fn lease_list(&self, r: &pb::LeaseLeasesResponse) {
        match self {
            Format::Json => {
                let leases: Vec<String> = r
                    .leases
                    .iter()
                    .map(|l| Obj::new().int_nz("id", l.id).end())
                    .collect();
                println!(
                    "{}",
                    flat_header(&r.header)
                        .raw("leases", &format!("[{}]", leases.join(",")))
                        .end()
                );
            }
            Format::Fields | Format::Table => {
                fields_header(&r.header);
                for l in &r.leases {
                    println!("\"ID\" : {}", l.id);
                }
            }
            Format::Simple { .. } => {
                println!("found {} leases", r.leases.len());
                for l in &r.leases {
                    println!("{:016x}", l.id);
                }
            }
        }
    }

    pub fn lease_keep_alive(&self, id: i64, ttl: i64, header: &Option<pb::ResponseHeader>) {
        match self {
            Format::Json => println!(
                "{}",
                flat_header(header).int("ID", id).int("TTL", ttl).end()
            ),
            Format::Fields | Format::Table => {
                fields_header(header);
                println!("\"ID\" : {id}");
                println!("\"TTL\" : {ttl}");
            }
            Format::Simple { .. } => println!("lease {id:016x} keepalived with TTL({ttl})"),
        }
    }

    pub fn lease_expired(&self, id: i64) {
        if let Format::Simple { .. } = self {
            println!("lease {id:016x} expired or revoked.");
        }
    }

    pub fn endpoint_status(&self, statuses: &[(String, pb::StatusResponse)]) -> Result<(), Exit> {
        let rows: Vec<Vec<String>> = statuses.iter().map(|(ep, s)| status_row(ep, s)).collect();
        match self {
            Format::Simple { .. } => {
                for row in rows {
                    println!("{}", row.join(", "));
                }
            }
            Format::Json => {
                let items: Vec<String> = statuses
                    .iter()
                    .map(|(ep, s)| {
                        let status = Obj::new()
                            .opt("header", json::header(&s.header))
                            .str_nz("version", &s.version)
                            .int_nz("dbSize", s.db_size)
                            .int_nz("leader", s.leader)
                            .int_nz("raftIndex", s.raft_index)
                            .int_nz("raftTerm", s.raft_term)
                            .int_nz("raftAppliedIndex", s.raft_applied_index)
                            .list_nz("errors", s.errors.iter().map(|e| json::string(e)).collect())
                            .int_nz("dbSizeInUse", s.db_size_in_use)
                            .bool_nz("isLearner", s.is_learner)
                            .end();
                        Obj::new()
                            .raw("Endpoint", &json::string(ep))
                            .raw("Status", &status)
                            .end()
                    })
                    .collect();
                println!("[{}]", items.join(","));
            }
            Format::Table => print_table(
                &[
                    "endpoint",
                    "ID",
                    "version",
                    "db size",
                    "is leader",
                    "is learner",
                    "raft term",
                    "raft index",
                    "raft applied index",
                    "errors",
                ],
                &rows,
            ),
            Format::Fields => {
                for (ep, s) in statuses {
                    fields_header(&s.header);
                    println!("\"Version\" : {}", go_quote(s.version.as_bytes()));
                    println!("\"DBSize\" : {}", s.db_size);
                    println!("\"Leader\" : {}", s.leader);
                    println!("\"IsLearner\" : {}", s.is_learner);
                    println!("\"RaftIndex\" : {}", s.raft_index);
                    println!("\"RaftTerm\" : {}", s.raft_term);
                    println!("\"RaftAppliedIndex\" : {}", s.raft_applied_index);
                    println!("\"Errors\" : [{}]", s.errors.join(" "));
                    println!("\"Endpoint\" : {}", go_quote(ep.as_bytes()));
                    println!();
                }
            }
        }
        Ok(())
    }

    /// `endpoint hashkv`, as etcdctl 3.5 prints it.
    pub fn endpoint_hashkv(&self, hashes: &[(String, pb::HashKvResponse)]) -> Result<(), Exit> {
        let rows: Vec<Vec<String>> = hashes
            .iter()
            .map(|(ep, h)| vec![ep.clone(), h.hash.to_string()])
            .collect();
        match self {
            Format::Simple { .. } => {
                for row in rows {
                    println!("{}", row.join(", "));
                }
            }
            Format::Json => {
                let items: Vec<String> = hashes
                    .iter()
                    .map(|(ep, h)| {
                        let hash = Obj::new()
                            .opt("header", json::header(&h.header))
                            .int_nz("hash", h.hash)
                            .int_nz("compact_revision", h.compact_revision)
                            // No hash_revision: etcdctl 3.5.1, the golden
                            // output, predates the field (3.5.17 prints it).
                            .end();
                        Obj::new()
                            .raw("Endpoint", &json::string(ep))
                            .raw("HashKV", &hash)
                            .end()
                    })
                    .collect();
                println!("[{}]", items.join(","));
            }
            Format::Table => print_table(&["endpoint", "hash"], &rows),
            Format::Fields => {
                for (ep, h) in hashes {
                    fields_header(&h.header);
                    println!("\"Endpoint\" : {}", go_quote(ep.as_bytes()));
                    println!("\"Hash\" : {}", h.hash);
                    println!();
                }
            }
        }
        Ok(())
    }

    pub fn endpoint_health(&self, results: &[Health]) -> Result<(), Exit> {
        match self {
            Format::Simple { .. } => {
                for h in results {
                    if h.healthy {
                        println!(
                            "{} is healthy: successfully committed proposal: took = {}",
                            h.endpoint,
                            go_duration(h.took)
                        );
                    } else {
                        eprintln!(
                            "{} is unhealthy: failed to commit proposal: {}",
                            h.endpoint, h.error
                        );
                    }
                }
            }
            Format::Json => {
                let items: Vec<String> = results
                    .iter()
                    .map(|h| {
                        Obj::new()
                            .raw("endpoint", &json::string(&h.endpoint))
                            .raw("health", if h.healthy { "true" } else { "false" })
                            .raw("took", &json::string(&go_duration(h.took)))
                            .str_nz("error", &h.error)
                            .end()
                    })
                    .collect();
                println!("[{}]", items.join(","));
            }
            Format::Table => {
                let rows: Vec<Vec<String>> = results
                    .iter()
                    .map(|h| {
                        vec![
                            h.endpoint.clone(),
                            h.healthy.to_string(),
                            go_duration(h.took),
                            h.error.clone(),
                        ]
                    })
                    .collect();
                print_table(&["endpoint", "health", "took", "error"], &rows);
            }
            Format::Fields => {
                for h in results {
                    println!("\"Endpoint\" : {}", go_quote(h.endpoint.as_bytes()));
                    println!("\"Health\" : {}", h.healthy);
                    println!("\"Took\" : {}", go_duration(h.took));
                    println!("\"Error\" : {}", h.error);
                    println!();
                }
            }
        }
        Ok(())
    }
}

fn event_type(t: i32) -> &'static str {
    if t == 1 { "DELETE" } else { "PUT" }
}

fn watch_json(
    header: Option<&pb::ResponseHeader>,
    events: &[hark_client::Event],
    compact_revision: i64,
    canceled: bool,
) -> String {
    let header = header
        .map(|h| json::header_fields(Obj::new(), h).end())
        .unwrap_or_else(|| "{}".to_string());
    let events = if events.is_empty() {
        "null".to_string()
    } else {
        format!(
            "[{}]",
            events.iter().map(json::event).collect::<Vec<_>>().join(",")
        )
    };
    Obj::new()
        .raw("Header", &header)
        .raw("Events", &events)
        .int("CompactRevision", compact_revision)
        .raw("Canceled", if canceled { "true" } else { "false" })
        .raw("Created", "false")
        .end()
}

/// clientv3's lease responses embed the header: its fields come first, flat.
fn flat_header(h: &Option<pb::ResponseHeader>) -> Obj {
    match h {
        Some(h) => json::header_fields(Obj::new(), h),
        None => Obj::new(),
    }
}

fn status_row(ep: &str, s: &pb::StatusResponse) -> Vec<String> {
    let member = s.header.map_or(0, |h| h.member_id);
    vec![
        ep.to_string(),
        format!("{member:x}"),
        s.version.clone(),
        humanize_bytes(s.db_size.max(0) as u64),
        (s.leader == member).to_string(),
        s.is_learner.to_string(),
        s.raft_term.to_string(),
        s.raft_index.to_string(),
        s.raft_applied_index.to_string(),
        s.errors.join(", "),
    ]
}

impl Format {
    /// etcdctl's alarm list: each member as protobuf's compact text
    /// (`memberID:<id> alarm:NOSPACE `, the id left out when it is 0).
    pub fn alarms(
        &self,
        header: &Option<pb::ResponseHeader>,
        alarms: &[pb::AlarmMember],
    ) -> Result<(), Exit> {
        match self {
            Format::Json => {
                let items: Vec<String> = alarms
                    .iter()
                    .map(|a| {
                        Obj::new()
                            .int_nz("memberID", a.member_id)
                            .int_nz("alarm", i64::from(a.alarm))
                            .end()
                    })
                    .collect();
                let resp = Obj::new()
                    .opt("header", json::header(header))
                    .list_nz("alarms", items)
                    .end();
                println!("{resp}");
            }
            _ => {
                for a in alarms {
                    let mut line = String::new();
                    if a.member_id != 0 {
                        line.push_str(&format!("memberID:{} ", a.member_id));
                    }
                    let name = pb::AlarmType::try_from(a.alarm)
                        .map(|t| t.as_str_name().to_string())
                        .unwrap_or_else(|_| a.alarm.to_string());
                    if a.alarm != 0 {
                        line.push_str(&format!("alarm:{name} "));
                    }
                    println!("{line}");
                }
            }
        }
        Ok(())
    }

    /// `etcdutl snapshot status`: hash (hex), revision, total keys, size.
    pub fn snapshot_status(&self, st: &hark_snapshot::SnapshotStatus) -> Result<(), Exit> {
        let row = vec![
            format!("{:x}", st.hash),
            st.revision.to_string(),
            st.total_keys.to_string(),
            humanize_bytes(st.total_size),
        ];
        match self {
            Format::Simple { .. } => println!("{}", row.join(", ")),
            Format::Json => println!(
                "{{\"hash\":{},\"revision\":{},\"totalKey\":{},\"totalSize\":{}}}",
                st.hash, st.revision, st.total_keys, st.total_size
            ),
            Format::Table => print_table(&["hash", "revision", "total keys", "total size"], &[row]),
            Format::Fields => {
                println!("\"Hash\" : {}", st.hash);
                println!("\"Revision\" : {}", st.revision);
                println!("\"Keys\" : {}", st.total_keys);
                println!("\"Size\" : {}", st.total_size);
            }
        }
        Ok(())
    }
}

/// go-humanize's `Bytes` (SI units).
pub fn humanize_bytes(s: u64) -> String {
    if s < 10 {
        return format!("{s} B");
    }
    let units = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
    let e = ((s as f64).ln() / 1000f64.ln()).floor() as usize;
    let val = ((s as f64) / 1000f64.powi(e as i32) * 10.0 + 0.5).floor() / 10.0;
    if val < 10.0 {
        format!("{val:.1} {}", units[e])
    } else {
        format!("{val:.0} {}", units[e])
    }
}

/// Go's `time.Duration.String()`.
pub fn go_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    let trim = |v: f64, digits: usize| {
        let s = format!("{v:.digits$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if ns == 0 {
        "0s".into()
    } else if ns < 1_000 {
        format!("{ns}ns")
    } else if ns < 1_000_000 {
        format!("{}µs", trim(ns as f64 / 1e3, 3))
    } else if ns < 1_000_000_000 {
        format!("{}ms", trim(ns as f64 / 1e6, 6))
    } else {
        let secs = ns as f64 / 1e9;
        let (h, rest) = ((secs / 3600.0).floor(), secs % 3600.0);
        let (m, s) = ((rest / 60.0).floor(), rest % 60.0);
        let mut out = String::new();
        if h > 0.0 {
            out += &format!("{h}h");
        }
        if h > 0.0 || m > 0.0 {
            out += &format!("{m}m");
        }
        out + &format!("{}s", trim(s, 9))
    }
}

pub fn print_kv(hex: bool, value_only: bool, kv: &KeyValue) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let render = |b: &[u8]| -> Vec<u8> {
        if hex {
            b.iter()
                .flat_map(|x| format!("\\x{x:02x}").into_bytes())
                .collect()
        } else {
            b.to_vec()
        }
    };
    if !value_only {
        let _ = out.write_all(&render(&kv.key));
        let _ = out.write_all(b"\n");
    }
    let _ = out.write_all(&render(&kv.value));
    let _ = out.write_all(b"\n");
}

pub(crate) fn fields_header(h: &Option<pb::ResponseHeader>) {
    let h = h.unwrap_or_default();
    println!("\"ClusterID\" : {}", h.cluster_id);
    println!("\"MemberID\" : {}", h.member_id);
    println!("\"Revision\" : {}", h.revision);
    println!("\"RaftTerm\" : {}", h.raft_term);
}

fn fields_kv(prefix: &str, kv: &KeyValue) {
    println!("\"{prefix}Key\" : {}", go_quote(&kv.key));
    println!("\"{prefix}CreateRevision\" : {}", kv.create_revision);
    println!("\"{prefix}ModRevision\" : {}", kv.mod_revision);
    println!("\"{prefix}Version\" : {}", kv.version);
    println!("\"{prefix}Value\" : {}", go_quote(&kv.value));
    println!("\"{prefix}Lease\" : {}", kv.lease);
}

/// Go's `%q` of a byte string (strconv.Quote).
pub fn go_quote(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// tablewriter's default look: `+---+` borders, upper-cased centred headers,
/// right-aligned cells, one space of padding.
pub(crate) fn print_table(headers: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = format!(
        "+{}+",
        widths
            .iter()
            .map(|w| "-".repeat(w + 2))
            .collect::<Vec<_>>()
            .join("+")
    );
    println!("{line}");
    let header: Vec<String> = headers
        .iter()
        .zip(&widths)
        .map(|(h, w)| {
            let h = h.to_uppercase();
            let pad = w - h.chars().count();
            let left = pad / 2;
            format!(" {}{}{} ", " ".repeat(left), h, " ".repeat(pad - left))
        })
        .collect();
    println!("|{}|", header.join("|"));
    println!("{line}");
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!(" {c:>w$} "))
            .collect();
        println!("|{}|", cells.join("|"));
    }
    println!("{line}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_formats() {
        assert_eq!(humanize_bytes(5), "5 B");
        assert_eq!(humanize_bytes(24576), "25 kB");
        assert_eq!(humanize_bytes(8192), "8.2 kB");
        assert_eq!(humanize_bytes(1_200_000), "1.2 MB");
        assert_eq!(go_duration(Duration::from_nanos(2_095_242)), "2.095242ms");
        assert_eq!(go_duration(Duration::from_nanos(950_500)), "950.5µs");
        assert_eq!(go_duration(Duration::from_millis(62_500)), "1m2.5s");
        assert_eq!(go_quote(b"a\"b\n"), "\"a\\\"b\\n\"");
    }
}
