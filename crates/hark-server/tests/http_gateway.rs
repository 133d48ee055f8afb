//! etcd's JSON gateway, side by side with etcd 3.5.1: the same curl requests
//! go to a fresh etcd and a fresh Hark, and the answers must be the same
//! bytes once the values that differ by nature (cluster and member ids,
//! terms, sizes, version) are masked. Needs `etcd-3.5` and `curl` on PATH
//! (CI installs both; HARK_REQUIRE_ETCDCTL=1 fails rather than skips).

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::etcd::{Etcd, tool};
use regex::Regex;

struct Answer {
    status: u16,
    headers: String,
    body: String,
}

/// `curl -i` against `endpoint`; `args` are curl's (path first).
fn curl(endpoint: &str, args: &[&str]) -> Answer {
    let url = format!("{endpoint}{}", args[0]);
    let out = Command::new("curl")
        .args(["-s", "-i", "--max-time", "10"])
        .arg(&url)
        .args(&args[1..])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap().replace("\r\n", "\n");
    // A `100 Continue` comes before the answer for large bodies.
    let text = text
        .strip_prefix("HTTP/1.1 100 Continue\n\n")
        .unwrap_or(&text)
        .to_string();
    let Some((head, body)) = text.split_once("\n\n") else {
        return Answer {
            status: 0,
            headers: text,
            body: String::new(),
        };
    };
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Answer {
        status,
        headers: head.to_ascii_lowercase(),
        body: body.to_string(),
    }
}

fn post(endpoint: &str, path: &str, json: &str) -> Answer {
    curl(endpoint, &[path, "-X", "POST", "-d", json])
}

/// Values that differ between two servers by nature, masked.
fn masked(body: &str) -> String {
    let ids = Regex::new(
        r#""(cluster_id|member_id|raft_term|leader|raftIndex|raftAppliedIndex|raftTerm|dbSize|dbSizeInUse|name)":"[^"]*""#,
    )
    .unwrap();
    // Member ids (random 64-bit), not the small lease ids the script picks.
    let member_ids = Regex::new(r#""ID":"\d{10,}""#).unwrap();
    let versions = Regex::new(r#""version":"\d+\.\d+\.\d+""#).unwrap();
    let urls = Regex::new(r#""(peerURLs|clientURLs)":\[[^\]]*\]"#).unwrap();
    let body = ids.replace_all(body, r#""$1":"*""#);
    let body = member_ids.replace_all(&body, r#""ID":"*""#);
    let body = versions.replace_all(&body, r#""version":"*""#);
    let body = urls.replace_all(&body, r#""$1":["*"]"#);
    // A live lease's remaining TTL ticks; the key-value hash is each
    // store's own.
    let ttl = Regex::new(r#""TTL":"(59|60)""#).unwrap();
    let body = ttl.replace_all(&body, r#""TTL":"~60""#);
    let hash = Regex::new(r#""hash":\d+"#).unwrap();
    let body = hash.replace_all(&body, r#""hash":"*""#);
    // Status's quota (etcd 3.6's field 12), which Hark fills and 3.5.1
    // lacks; and its storage version (3.6's field 11), likewise.
    let quota = Regex::new(r#","dbSizeQuota":"\d+""#).unwrap();
    let body = quota.replace_all(&body, "");
    let storage = Regex::new(r#","storageVersion":"[^"]*""#).unwrap();
    storage.replace_all(&body, "").to_string()
}

/// One request of the script, and what of its answer must match.
struct Step {
    path: &'static str,
    body: &'static str,
    /// Compare only status and gRPC code (messages of a JSON parser differ).
    code_only: bool,
}

const fn step(path: &'static str, body: &'static str) -> Step {
    Step {
        path,
        body,
        code_only: false,
    }
}

/// etcd's documented curl examples (dev-guide/api_grpc_gateway.md) and the
/// gateway's edges: aliases, `/v3beta`, errors, zero values left out.
fn script() -> Vec<Step> {
    vec![
        // foo = bar, then read back: one key, one range.
        step("/v3/kv/put", r#"{"key": "Zm9v", "value": "YmFy"}"#),
        step("/v3/kv/range", r#"{"key": "Zm9v"}"#),
        step("/v3/kv/range", r#"{"key": "bm9uZQ=="}"#),
        step("/v3beta/kv/range", r#"{"key":"Zm9v","keys_only":true}"#),
        // lowerCamel names, numbers as numbers, enums by number and name.
        step(
            "/v3/kv/range",
            r#"{"key":"AA==","rangeEnd":"AA==","sort_order":2,"sortTarget":"MOD","limit":1}"#,
        ),
        step(
            "/v3/kv/put",
            r#"{"key":"Zm9vMg==","value":"","prev_kv":true}"#,
        ),
        step(
            "/v3/kv/put",
            r#"{"key":"Zm9vMg==","value":"eA==","prev_kv":true}"#,
        ),
        step(
            "/v3/kv/range",
            r#"{"key":"Zm9v","range_end":"Zm9w","count_only":true}"#,
        ),
        // The documented transaction.
        step(
            "/v3/kv/txn",
            r#"{"compare":[{"target":"CREATE","key":"Zm9v","createRevision":"2"}],"success":[{"requestPut":{"key":"Zm9v","value":"YmFy"}}]}"#,
        ),
        step(
            "/v3/kv/txn",
            r#"{"compare":[{"target":"VALUE","key":"Zm9v","value":"bm8=","result":"EQUAL"}],"failure":[{"request_range":{"key":"Zm9v"}},{"request_delete_range":{"key":"bm9uZQ=="}}]}"#,
        ),
        // Leases, with a chosen id so both servers grant the same one.
        step("/v3/lease/grant", r#"{"TTL": 60, "ID": "7587"}"#),
        step(
            "/v3/kv/put",
            r#"{"key":"bGVhc2Vk","value":"dg==","lease":"7587"}"#,
        ),
        step("/v3/lease/timetolive", r#"{"ID":"7587","keys":true}"#),
        step("/v3/lease/leases", "{}"),
        step("/v3/kv/lease/leases", ""),
        step("/v3/lease/keepalive", r#"{"ID":"7587"}"#),
        step("/v3/lease/keepalive", r#"{"ID":"1"}"#),
        step("/v3/lease/revoke", r#"{"ID":"7587"}"#),
        step("/v3/kv/lease/revoke", r#"{"ID":"7587"}"#),
        step("/v3/kv/lease/timetolive", r#"{"ID":"7587","keys":true}"#),
        step("/v3/kv/put", r#"{"key":"Zm9v","value":"YmFy","lease":"5"}"#),
        step("/v3/kv/deleterange", r#"{"key":"Zm9v","prev_kv":true}"#),
        step("/v3/kv/deleterange", r#"{"key":"Zm9v"}"#),
        // Compaction, then a read below it and one above the store.
        step("/v3/kv/compaction", r#"{"revision":"3"}"#),
        step("/v3/kv/range", r#"{"key":"Zm9v","revision":"2"}"#),
        step("/v3/kv/range", r#"{"key":"Zm9v","revision":"100"}"#),
        step("/v3/kv/compaction", r#"{"revision":"100"}"#),
        // Locks and elections under a lease of a chosen id (1da3 in hex):
        // keys `l/1da3` and `e/1da3`.
        step("/v3/lease/grant", r#"{"TTL": 60, "ID": "7587"}"#),
        step("/v3/lock/lock", r#"{"name":"bA==","lease":"7587"}"#),
        step("/v3/lock/lock", r#"{"name":"bA==","lease":"7587"}"#),
        step("/v3/lock/lock", r#"{"name":"bA==","lease":"1"}"#),
        step("/v3/lock/unlock", r#"{"key":"bC8xZGEz"}"#),
        step("/v3/election/leader", r#"{"name":"ZQ=="}"#),
        step(
            "/v3/election/campaign",
            r#"{"name":"ZQ==","lease":"7587","value":"djE="}"#,
        ),
        step("/v3/election/leader", r#"{"name":"ZQ=="}"#),
        step(
            "/v3/election/proclaim",
            r#"{"leader":{"name":"ZQ==","key":"ZS8xZGEz","rev":"1","lease":"7587"},"value":"djI="}"#,
        ),
        step("/v3/election/proclaim", r#"{"value":"djI="}"#),
        step(
            "/v3/election/resign",
            r#"{"leader":{"name":"ZQ==","key":"ZS8xZGEz","rev":"1"}}"#,
        ),
        step("/v3/election/resign", "{}"),
        step("/v3/lease/revoke", r#"{"ID":"7587"}"#),
        step("/v3/election/leader", r#"{"name":"ZQ=="}"#),
        // Cluster and maintenance, ids and sizes masked.
        step("/v3/cluster/member/list", "{}"),
        step("/v3/maintenance/status", "{}"),
        step("/v3/maintenance/alarm", r#"{"action":"GET"}"#),
        step("/v3/maintenance/defragment", "{}"),
        step("/v3/maintenance/hash", "{}"),
        step("/v3/cluster/member/remove", r#"{"ID":"42"}"#),
        // Bad input: the server answers and keeps serving.
        Step {
            path: "/v3/kv/range",
            body: r#"{"key":"Zm9v"#,
            code_only: true,
        },
        Step {
            path: "/v3/kv/range",
            body: r#"{"key":"!!!"}"#,
            code_only: true,
        },
        Step {
            path: "/v3/kv/put",
            body: r#"{"key":"Zm9v","lease":"not a number"}"#,
            code_only: true,
        },
        step("/v3/kv/nope", "{}"),
        step("/v3/kv/range", r#"{"key":""}"#),
        step("/v3/kv/put", r#"{"key":"","value":"eA=="}"#),
        step("/v3/kv/range", r#"{"key":"Zm9vMg=="}"#),
    ]
}

/// The fields of a JSON error body that both must share.
fn error_code(body: &str) -> Option<i64> {
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    value.get("code")?.as_i64()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_answers_etcds_curl_examples_as_etcd_3_5_does() {
    let (Some(etcd_binary), Some(_)) = (tool("etcd-3.5"), tool("curl")) else {
        return;
    };
    let etcd = Etcd::start(&etcd_binary);
    // etcd's default --cors is `*`; Hark's is same-origin only.
    let hark = common::start(&["--cors=*"]).await;
    let hark_endpoint = hark.endpoint();
    tokio::task::spawn_blocking(move || {
        let mut differences = Vec::new();
        for (n, step) in script().iter().enumerate() {
            let theirs = post(&etcd.endpoint, step.path, step.body);
            let ours = post(&hark_endpoint, step.path, step.body);
            let what = format!("step {n}: POST {} {}", step.path, step.body);
            assert_ne!(theirs.status, 0, "{what}: etcd did not answer");
            if theirs.status != ours.status {
                differences.push(format!(
                    "{what}: status {} (etcd) vs {} (hark)\n  etcd: {}\n  hark: {}",
                    theirs.status, ours.status, theirs.body, ours.body
                ));
                continue;
            }
            let content_type = |a: &Answer| {
                a.headers
                    .lines()
                    .find(|l| l.starts_with("content-type:"))
                    .map(str::to_string)
            };
            if content_type(&theirs) != content_type(&ours) {
                differences.push(format!(
                    "{what}: {:?} (etcd) vs {:?} (hark)",
                    content_type(&theirs),
                    content_type(&ours)
                ));
            }
            if step.code_only {
                let code = error_code(&theirs.body);
                assert!(code.is_some(), "{what}: etcd gave no error code");
                if code != error_code(&ours.body) {
                    differences.push(format!(
                        "{what}: code\n  etcd: {}\n  hark: {}",
                        theirs.body, ours.body
                    ));
                }
            } else if masked(&theirs.body) != masked(&ours.body) {
                differences.push(format!(
                    "{what}:\n  etcd: {}\n  hark: {}",
                    masked(&theirs.body),
                    masked(&ours.body)
                ));
            }
        }
        // HashKV has its own path since etcd 3.6 (3.5 answers 404): Hark
        // answers it with etcd 3.7's fields (its e2e TestCurlV3MaintenanceHashKV).
        let ours = post(&hark_endpoint, "/v3/maintenance/hashkv", "{}");
        let fields: serde_json::Value = serde_json::from_str(&ours.body).unwrap_or_default();
        for field in ["header", "hash", "compact_revision", "hash_revision"] {
            if fields.get(field).is_none() {
                differences.push(format!("hashkv lacks {field}: {}", ours.body));
            }
        }
        // GET on a POST path: Go's 405 in plain text.
        let theirs = curl(&etcd.endpoint, &["/v3/kv/range"]);
        let ours = curl(&hark_endpoint, &["/v3/kv/range"]);
        assert_eq!(theirs.status, 405);
        if (theirs.status, &theirs.body) != (ours.status, &ours.body) {
            differences.push(format!(
                "GET /v3/kv/range: {} {:?} (etcd) vs {} {:?} (hark)",
                theirs.status, theirs.body, ours.status, ours.body
            ));
        }
        // CORS: etcd's default allows any origin on every answer.
        for header in [
            "access-control-allow-origin: *",
            "access-control-allow-headers: accept, content-type, authorization",
            "access-control-allow-methods: post, get, options, put, delete",
        ] {
            for (who, answer) in [
                ("etcd", post(&etcd.endpoint, "/v3/kv/range", "{}")),
                ("hark", post(&hark_endpoint, "/v3/kv/range", "{}")),
            ] {
                if !answer.headers.lines().any(|l| l == header) {
                    differences.push(format!("{who} lacks {header:?}: {}", answer.headers));
                }
            }
        }
        assert!(
            differences.is_empty(),
            "{} differences:\n{}",
            differences.len(),
            differences.join("\n")
        );
    })
    .await
    .unwrap();
}

/// `curl -N --raw`: the chunks of a streamed answer, as sent.
fn raw_chunks(endpoint: &str, path: &str, body: &str, seconds: &str) -> Vec<String> {
    let out = Command::new("curl")
        .args([
            "-s",
            "-N",
            "--raw",
            "--max-time",
            seconds,
            "-X",
            "POST",
            "-d",
            body,
        ])
        .arg(format!("{endpoint}{path}"))
        .output()
        .unwrap();
    let mut raw = String::from_utf8(out.stdout).unwrap();
    let mut chunks = Vec::new();
    while let Some((size, rest)) = raw.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            panic!("not a chunk size: {size:?} in {raw:?}");
        };
        if size == 0 || rest.len() < size {
            break;
        }
        chunks.push(rest[..size].to_string());
        raw = rest[size..].trim_start_matches("\r\n").to_string();
    }
    chunks
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_over_http_streams_one_result_per_chunk_as_etcd_does() {
    let (Some(etcd_binary), Some(_)) = (tool("etcd-3.5"), tool("curl")) else {
        return;
    };
    let etcd = Etcd::start(&etcd_binary);
    let hark = common::start(&[]).await;
    let hark_endpoint = hark.endpoint();
    tokio::task::spawn_blocking(move || {
        let watch_id = Regex::new(r#""watch_id":"(\d+)""#).unwrap();
        let mut streams = Vec::new();
        for endpoint in [&etcd.endpoint, &hark_endpoint] {
            for (key, value) in [("Zm9v", "YQ=="), ("Zm9v", "Yg=="), ("YmFy", "Yw==")] {
                let put = format!(r#"{{"key":"{key}","value":"{value}"}}"#);
                assert_eq!(post(endpoint, "/v3/kv/put", &put).status, 200);
            }
            assert_eq!(post(endpoint, "/v3/kv/deleterange", r#"{"key":"Zm9v"}"#).status, 200);
            // Two watches on one stream, from history: the whole answer is
            // known before the request, so both servers must send the same.
            let body = concat!(
                r#"{"create_request":{"key":"Zm9v","start_revision":"2","prev_kv":true}}"#,
                "\n",
                r#"{"create_request":{"key":"AA==","range_end":"AA==","start_revision":"3","filters":["NODELETE"],"watch_id":"9"}}"#
            );
            let chunks = raw_chunks(endpoint, "/v3/watch", body, "2");
            for chunk in &chunks {
                assert!(
                    chunk.starts_with(r#"{"result":"#) && chunk.ends_with("}\n"),
                    "{endpoint}: not one result per chunk: {chunk:?}"
                );
                assert_eq!(chunk.matches('\n').count(), 1, "{chunk:?}");
            }
            // Each watch's messages in order; the two watches' messages may
            // interleave either way on one stream.
            let mut per_watch: Vec<(i64, String)> = chunks
                .iter()
                .map(|c| {
                    let id = watch_id.captures(c).map_or(0, |m| m[1].parse().unwrap());
                    (id, masked(c))
                })
                .collect();
            per_watch.sort_by_key(|(id, _)| *id);
            streams.push(per_watch);
        }
        assert!(streams[0].len() >= 4, "etcd sent {:?}", streams[0]);
        assert_eq!(streams[0], streams[1], "etcd (left) and hark (right) differ");

        // A keep-alive answers once and ends, like etcd's.
        for endpoint in [&etcd.endpoint, &hark_endpoint] {
            let grant = post(endpoint, "/v3/lease/grant", r#"{"TTL":30,"ID":"77"}"#);
            assert_eq!(grant.status, 200, "{}", grant.body);
            let chunks = raw_chunks(endpoint, "/v3/lease/keepalive", r#"{"ID":"77"}"#, "5");
            assert_eq!(chunks.len(), 1, "{endpoint}: {chunks:?}");
            assert!(chunks[0].contains(r#""ID":"77","TTL":"30""#), "{chunks:?}");
        }
    })
    .await
    .unwrap();
    // The HTTP clients are gone, and with them every watcher they held.
    let addr = hark.server.client_addrs[0];
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let metrics = tokio::task::spawn_blocking(move || common::http_get(addr, "/metrics").1)
            .await
            .unwrap();
        if metrics
            .lines()
            .any(|l| l == "etcd_debugging_mvcc_watcher_total 0")
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "watchers left behind:\n{metrics}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn version_and_a_separate_http_port() {
    let Some(_) = tool("curl") else { return };
    let http_port = common::free_port();
    let flag = format!("--listen-client-http-urls=http://127.0.0.1:{http_port}");
    let hark = common::start(&[&flag, "--cors=https://console.example"]).await;
    let client_endpoint = hark.endpoint();
    let http_endpoint = format!("http://127.0.0.1:{http_port}");
    assert_eq!(hark.server.client_http_addrs.len(), 1);
    tokio::task::spawn_blocking(move || {
        // Patroni int()s both versions.
        let version = curl(&http_endpoint, &["/version"]);
        assert_eq!(version.status, 200);
        let value: serde_json::Value = serde_json::from_str(&version.body).unwrap();
        for field in ["etcdserver", "etcdcluster"] {
            let text = value[field].as_str().unwrap();
            assert!(
                text.split('.').all(|n| n.parse::<u32>().is_ok()),
                "{field}: {text}"
            );
        }
        // Which Hark build answers, after etcd's fields.
        assert_eq!(value["harkserver"], hark_server::HARK_VERSION);
        assert_eq!(value["harkcommit"], hark_server::GIT_COMMIT);
        assert!(
            version.body.starts_with(r#"{"etcdserver":"#),
            "{}",
            version.body
        );
        let put = post(
            &http_endpoint,
            "/v3/kv/put",
            r#"{"key":"aw==","value":"dg=="}"#,
        );
        assert_eq!(put.status, 200, "{}", put.body);
        // The client port serves gRPC only now.
        let on_client_port = post(&client_endpoint, "/v3/kv/range", r#"{"key":"aw=="}"#);
        assert!(
            !on_client_port.body.contains("kvs"),
            "the gateway answered on the client port: {}",
            on_client_port.body
        );
        // Only the listed origin gets CORS headers; a preflight is answered.
        let listed = curl(
            &http_endpoint,
            &[
                "/v3/kv/range",
                "-X",
                "POST",
                "-d",
                "{}",
                "-H",
                "Origin: https://console.example",
            ],
        );
        assert!(
            listed
                .headers
                .contains("access-control-allow-origin: https://console.example"),
            "{}",
            listed.headers
        );
        let other = curl(
            &http_endpoint,
            &[
                "/v3/kv/range",
                "-X",
                "POST",
                "-d",
                "{}",
                "-H",
                "Origin: https://else.example",
            ],
        );
        assert!(!other.headers.contains("access-control-allow-origin"));
        let preflight = curl(
            &http_endpoint,
            &[
                "/v3/kv/put",
                "-X",
                "OPTIONS",
                "-H",
                "Origin: https://console.example",
            ],
        );
        assert_eq!(preflight.status, 200);
        // etcd 3.6's probes, served with the other HTTP endpoints.
        let live = curl(&http_endpoint, &["/livez"]);
        assert_eq!((live.status, live.body.as_str()), (200, "ok"));
        let ready = curl(&http_endpoint, &["/readyz?verbose"]);
        assert_eq!(ready.status, 200);
        assert_eq!(
            ready.body,
            "[+]data_corruption ok\n[+]serializable_read ok\n[+]linearizable_read ok\nok\n"
        );
        // An oversize body is refused as gRPC refuses an oversize message.
        let big = format!(r#"{{"key":"aw==","value":"{}"}}"#, "A".repeat(5 << 20));
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), big).unwrap();
        let data = format!("@{}", file.path().display());
        let refused = curl(
            &http_endpoint,
            &["/v3/kv/put", "-X", "POST", "--data-binary", &data],
        );
        assert_eq!(refused.status, 429, "{}", refused.body);
        assert_eq!(error_code(&refused.body), Some(8));
        // And the server still serves.
        let read = post(&http_endpoint, "/v3/kv/range", r#"{"key":"aw=="}"#);
        assert!(read.body.contains(r#""value":"dg==""#), "{}", read.body);
        // A CORRUPT alarm: not ready, still live.
        let alarm = r#"{"action":"ACTIVATE","alarm":"CORRUPT"}"#;
        assert_eq!(
            post(&http_endpoint, "/v3/maintenance/alarm", alarm).status,
            200
        );
        let ready = curl(&http_endpoint, &["/readyz"]);
        assert_eq!(ready.status, 503);
        assert!(
            ready
                .body
                .starts_with("[-]data_corruption failed: alarm activated: CORRUPT\n"),
            "{}",
            ready.body
        );
        assert!(
            ready.body.ends_with("readyz check failed\n"),
            "{}",
            ready.body
        );
        let excluded = curl(&http_endpoint, &["/readyz?exclude=data_corruption"]);
        assert_eq!(excluded.status, 200, "{}", excluded.body);
        assert_eq!(curl(&http_endpoint, &["/livez"]).status, 200);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consul_kv_raw_values_index_maps_and_a_blocked_index_map() {
    let Some(_) = tool("curl") else { return };
    let hark = common::start(&[]).await;
    let endpoint = hark.endpoint();
    tokio::task::spawn_blocking(move || {
        let put = |key: &str, value: &str| {
            let answer = curl(
                &endpoint,
                &[&format!("/v1/kv/{key}"), "-X", "PUT", "-d", value],
            );
            assert_eq!((answer.status, answer.body.as_str()), (200, "true"));
        };
        put("seed/a", "1");
        put("seed/b", "2");
        put("other", "3");
        let raw = curl(&endpoint, &["/v1/kv/seed/a?raw"]);
        assert_eq!((raw.status, raw.body.as_str()), (200, "1"));
        assert!(
            raw.headers.contains("content-type: text/plain"),
            "{}",
            raw.headers
        );
        let missing = curl(&endpoint, &["/v1/kv/seed/none"]);
        assert_eq!(missing.status, 404);
        assert!(
            missing.headers.contains("x-consul-index: 4"),
            "{}",
            missing.headers
        );

        // The index map: key → mod revision, so a client fetches only what moved.
        let map = curl(&endpoint, &["/v1/kv/seed/?index-map"]);
        assert_eq!(map.body, r#"{"seed/a":2,"seed/b":3}"#);
        assert!(map.headers.contains("x-hark-index: 4"), "{}", map.headers);
        // Parked on index 4: a put elsewhere does not end it, one under the
        // prefix does, and the map shows which key moved.
        let blocked = std::thread::spawn({
            let endpoint = endpoint.clone();
            move || {
                let started = Instant::now();
                let answer = curl(&endpoint, &["/v1/kv/seed/?index-map&index=4&wait=20s"]);
                (answer, started.elapsed())
            }
        });
        std::thread::sleep(Duration::from_millis(500));
        put("other", "4");
        std::thread::sleep(Duration::from_millis(500));
        assert!(!blocked.is_finished(), "woken by a put outside the prefix");
        put("seed/b", "5");
        let (answer, waited) = blocked.join().unwrap();
        assert_eq!(answer.body, r#"{"seed/a":2,"seed/b":6}"#);
        assert!(
            answer.headers.contains("x-consul-index: 6"),
            "{}",
            answer.headers
        );
        assert!(waited >= Duration::from_secs(1), "{waited:?}");

        // An index ahead of the store (the client saw another store) and one
        // below the compaction are answered at once, with the current data.
        assert_eq!(
            post(&endpoint, "/v3/kv/compaction", r#"{"revision":"5"}"#).status,
            200
        );
        for index in [1000, 2] {
            let started = Instant::now();
            let answer = curl(
                &endpoint,
                &[&format!("/v1/kv/seed/b?index={index}&wait=20s")],
            );
            assert_eq!(answer.status, 200, "{}", answer.body);
            assert!(
                answer.body.contains(r#""ModifyIndex":6"#),
                "{}",
                answer.body
            );
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "index {index} blocked"
            );
        }

        // Consul's delete-cas: true for a key that is not there, false for
        // one at another revision; recurse wins over cas.
        let delete = |path: &str| curl(&endpoint, &[path, "-X", "DELETE"]).body;
        assert_eq!(delete("/v1/kv/never-there?cas=5"), "true");
        assert_eq!(delete("/v1/kv/seed/a?cas=3"), "false");
        assert_eq!(delete("/v1/kv/seed/a?cas=2"), "true");
        assert_eq!(delete("/v1/kv/seed/?recurse&cas=1"), "true");
        assert_eq!(curl(&endpoint, &["/v1/kv/seed/?keys"]).status, 404);
        put("seed/a", "1");

        // Bad input: Consul's plain-text 400s, and the server keeps serving.
        for bad in [
            "/v1/kv/seed/a?index=soon",
            "/v1/kv/seed/a?index=4&wait=forever",
            "/v1/kv/",
        ] {
            let refused = curl(&endpoint, &[bad]);
            assert_eq!(refused.status, 400, "{bad}: {}", refused.body);
        }
        // Flags go with the value; an etcd client reads the same value, and
        // the JSON gateway shows them as Hark's hark_flags.
        let flagged = curl(
            &endpoint,
            &["/v1/kv/flagged?flags=7", "-X", "PUT", "-d", "v"],
        );
        assert_eq!(flagged.body, "true");
        let entry = curl(&endpoint, &["/v1/kv/flagged"]);
        assert!(entry.body.contains(r#""Flags":7,"#), "{}", entry.body);
        let over_gateway = post(&endpoint, "/v3/kv/range", r#"{"key":"ZmxhZ2dlZA=="}"#);
        assert!(
            over_gateway
                .body
                .contains(r#""value":"dg==","hark_flags":"7""#),
            "{}",
            over_gateway.body
        );
        let refused = curl(&endpoint, &["/v1/txn", "-X", "PUT", "-d", "[{\"KV\":"]);
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert_eq!(curl(&endpoint, &["/v1/kv/seed/a?raw"]).body, "1");
    })
    .await
    .unwrap();
    // An etcd client over gRPC (the etcd-client crate) reads the flagged key
    // as it reads any other: the extension field is skipped.
    let mut client = hark.client().await;
    let got = client.get("flagged", None).await.unwrap();
    assert_eq!(got.kvs().len(), 1);
    assert_eq!(got.kvs()[0].value(), b"v");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_over_four_mebibytes_go_through_the_gateway_and_the_kv_api() {
    let Some(_) = tool("curl") else { return };
    let hark = common::start(&[]).await;
    let mut client = hark.client().await;
    for i in 0..5 {
        client
            .put(format!("big/{i}"), vec![b'x'; 1 << 20], None)
            .await
            .unwrap();
    }
    let endpoint = hark.endpoint();
    tokio::task::spawn_blocking(move || {
        // tonic's clients stop at 4 MiB unless told otherwise; etcd's gateway
        // takes any size.
        let range = post(
            &endpoint,
            "/v3/kv/range",
            r#"{"key":"YmlnLw==","range_end":"YmlnMA=="}"#,
        );
        assert_eq!(
            range.status,
            200,
            "{}",
            &range.body[..range.body.len().min(300)]
        );
        assert_eq!(range.body.matches(r#""key":"#).count(), 5);
        let tree = curl(&endpoint, &["/v1/kv/big/?recurse"]);
        assert_eq!(
            tree.status,
            200,
            "{}",
            &tree.body[..tree.body.len().min(300)]
        );
        assert_eq!(tree.body.matches(r#""Key":"big/"#).count(), 5);
    })
    .await
    .unwrap();
}
