//! `harkctl du` against a real server, its figures checked against what a
//! client reads back; the same sizes over the JSON gateway and in
//! `/metrics`, and again after a restart (rebuilt from the rows).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Output};

use base64::Engine;
use clap::Parser;

const HARKCTL: &str = env!("CARGO_BIN_EXE_harkctl");

async fn start(dir: &std::path::Path) -> hark_server::RunningServer {
    let config = hark_server::Config::try_parse_from([
        "hark".to_string(),
        "--listen-peer-urls=http://127.0.0.1:0".into(),
        "--listen-client-urls=http://127.0.0.1:0".into(),
        "--listen-metrics-urls=http://127.0.0.1:0".into(),
        "--usage-depth=4".into(),
        format!("--data-dir={}", dir.display()),
    ])
    .unwrap();
    hark_server::start(&config).await.unwrap()
}

fn harkctl(endpoint: &str, args: &[&str]) -> Output {
    Command::new(HARKCTL)
        .arg(format!("--endpoints={endpoint}"))
        .args(args)
        .output()
        .unwrap()
}

/// One HTTP/1.1 request; the response body.
fn http(addr: SocketAddr, method: &str, path: &str, body: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    if !head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return body.to_string();
    }
    let (mut rest, mut out) = (body, String::new());
    loop {
        let (size, after) = rest.split_once("\r\n").unwrap();
        let size = usize::from_str_radix(size.trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
}

/// `du -w json`'s entries: (prefix, keys, bytes, revisions, history bytes).
fn du_json(endpoint: &str, prefix: &str, depth: &str) -> Vec<(String, i64, i64, i64, i64)> {
    let out = harkctl(endpoint, &["du", prefix, "--depth", depth, "-w", "json"]);
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tracked_depth"], 4, "{v}");
    v["prefixes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let prefix = base64::engine::general_purpose::STANDARD
                .decode(p["prefix"].as_str().unwrap())
                .unwrap();
            (
                String::from_utf8(prefix).unwrap(),
                p["keys"].as_i64().unwrap(),
                p["bytes"].as_i64().unwrap(),
                p["revisions"].as_i64().unwrap(),
                p["history_bytes"].as_i64().unwrap(),
            )
        })
        .collect()
}

/// The entries without their history bytes.
fn brief(got: &[(String, i64, i64, i64, i64)]) -> Vec<(&str, i64, i64, i64)> {
    got.iter()
        .map(|(p, k, b, r, _)| (p.as_str(), *k, *b, *r))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn du_counts_keys_and_bytes_per_prefix_as_reads_see_them() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let endpoint = server.endpoints()[0].clone();
    let mut c = etcd_client::Client::connect([endpoint.as_str()], None)
        .await
        .unwrap();
    let v = |n: usize| vec![b'v'; n];
    c.put("/registry/pods/ns1/a", v(100), None).await.unwrap();
    c.put("/registry/pods/ns1/b", v(200), None).await.unwrap();
    c.put("/registry/pods/ns2/c", v(50), None).await.unwrap();
    c.put("/registry/svc/ns1/s", v(10), None).await.unwrap();
    c.put("plain", v(5), None).await.unwrap();
    c.put("/registry/pods/ns1/a", v(300), None).await.unwrap();
    c.delete("/registry/pods/ns2/c", None).await.unwrap();
    let last = c.put("plain", v(6), None).await.unwrap();

    // Live bytes are keys plus values, as a read returns them.
    let pods = 2 * "/registry/pods/ns1/a".len() as i64 + 300 + 200;
    let svc = "/registry/svc/ns1/s".len() as i64 + 10;
    let got = du_json(&endpoint, "/registry/", "1");
    assert_eq!(
        brief(&got),
        [
            ("/registry/", 3, pods + svc, 6),
            ("/registry/pods/", 2, pods, 5),
            ("/registry/svc/", 1, svc, 1),
        ]
    );
    // History: every stored row, so more than what lives now.
    assert!(got.iter().all(|e| e.4 > e.2), "{got:?}");
    let root = du_json(&endpoint, "", "0");
    assert_eq!(root.len(), 1);
    assert_eq!(root[0].1, 4, "{root:?}");
    assert_eq!(root[0].3, 8, "{root:?}");

    // Compaction removes history, and du follows it.
    let rev = last.header().unwrap().revision();
    c.compact(
        rev,
        Some(etcd_client::CompactionOptions::new().with_physical()),
    )
    .await
    .unwrap();
    let got = du_json(&endpoint, "/registry/pods/", "1");
    assert_eq!(
        brief(&got),
        [
            ("/registry/pods/", 2, pods, 2),
            ("/registry/pods/ns1/", 2, pods, 2),
        ]
    );
    // Each remaining row is its 17-byte revision key and the KeyValue
    // encoding a read returns, byte for byte.
    let rows: i64 = c
        .get(
            "/registry/pods/",
            Some(etcd_client::GetOptions::new().with_prefix()),
        )
        .await
        .unwrap()
        .kvs()
        .iter()
        .map(|kv| {
            let encoded = hark_proto::mvccpb::KeyValue {
                key: kv.key().to_vec().into(),
                create_revision: kv.create_revision(),
                mod_revision: kv.mod_revision(),
                version: kv.version(),
                value: kv.value().to_vec().into(),
                lease: kv.lease(),
                ..Default::default()
            };
            17 + prost::Message::encoded_len(&encoded) as i64
        })
        .sum();
    assert_eq!(got[0].4, rows, "{got:?}");

    // The human form: a header line, then one line per prefix.
    let out = harkctl(&endpoint, &["du", "/registry/"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].contains("KEYS") && lines[0].ends_with("PREFIX"),
        "{text}"
    );
    assert!(
        lines[2].trim_start().starts_with("2 ") && lines[2].ends_with(" /registry/pods/"),
        "{text}"
    );

    // Refused: not a prefix boundary, or deeper than kept.
    for bad in ["/registry", "/registry/pods/ns1/x/"] {
        let out = harkctl(&endpoint, &["du", bad]);
        assert!(!out.status.success(), "{bad}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("prefix"),
            "{bad}: {out:?}"
        );
    }

    // The gateway answers the same, in etcd's JSON style.
    let addr = server.client_addrs[0];
    let body = format!(
        r#"{{"prefix":"{}","depth":1}}"#,
        base64::engine::general_purpose::STANDARD.encode("/registry/")
    );
    let json: serde_json::Value =
        serde_json::from_str(&http(addr, "POST", "/v3/hark/du", &body)).unwrap();
    assert_eq!(json["prefixes"][1]["keys"], "2", "{json}");
    assert_eq!(json["tracked_depth"], 4, "{json}");

    // /metrics: the largest prefixes per depth.
    let metrics = http(addr, "GET", "/metrics", "");
    assert!(
        metrics.contains("hark_prefix_keys{prefix=\"/registry/pods/\",depth=\"3\"} 2\n"),
        "{}",
        metrics
            .lines()
            .filter(|l| l.contains("hark_prefix"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The metrics listener asks for no credentials (with mTLS on the client
    // port it would be the one open door): it names no prefix.
    let open = http(server.metrics_addrs[0], "GET", "/metrics", "");
    assert!(open.contains("etcd_mvcc_db_total_size_in_bytes"));
    assert!(!open.contains("hark_prefix"), "on --listen-metrics-urls");
    let before = du_json(&endpoint, "", "4");
    drop(c);
    server.shutdown().await;

    // Rebuilt from the rows on restart: the same figures.
    let server = start(dir.path()).await;
    let endpoint = server.endpoints()[0].clone();
    assert_eq!(du_json(&endpoint, "", "4"), before);

    // With auth on, /metrics (which asks nobody who they are) names no
    // prefix; du still answers a user who may read the prefix.
    let mut c = etcd_client::Client::connect([endpoint.as_str()], None)
        .await
        .unwrap();
    c.user_add("root", "pw", None).await.unwrap();
    c.user_grant_role("root", "root").await.unwrap();
    c.auth_enable().await.unwrap();
    let metrics = http(server.client_addrs[0], "GET", "/metrics", "");
    assert!(metrics.contains("etcd_mvcc_db_total_size_in_bytes"));
    assert!(!metrics.contains("hark_prefix_keys{"), "{metrics}");
    let out = harkctl(&endpoint, &["--user", "root:pw", "du", "/registry/"]);
    assert!(out.status.success(), "{out:?}");
    let out = harkctl(&endpoint, &["du", "/registry/"]);
    assert!(!out.status.success(), "no user, no sizes: {out:?}");
    server.shutdown().await;
}
