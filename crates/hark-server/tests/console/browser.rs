//! A headless Chromium driven over WebDriver: Debian's `chromedriver`
//! (package `chromium-driver`) started per test on a free port, and
//! `fantoccini` speaking to it.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

use crate::common::free_port;

/// The two widths every page is checked and photographed at: a laptop's
/// and a phone's.
pub const WIDTHS: [(u32, u32); 2] = [(1280, 800), (390, 844)];

pub struct Browser {
    pub client: Client,
    shots: PathBuf,
    /// The driver leads its own process group, which Chromium and its
    /// helpers join: killing only the driver would orphan them (each test
    /// left a Chromium running).
    driver: tokio::process::Child,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(pid) = self.driver.id() {
            // SAFETY: a plain syscall; the group is the driver's own.
            unsafe {
                libc::killpg(pid as libc::pid_t, libc::SIGKILL);
            }
        }
    }
}

/// Chromium and its driver, if both are on PATH; with neither the browser
/// tests are skipped, unless `HARK_REQUIRE_CHROMIUM=1` (CI) makes that fail.
pub fn tools() -> Option<(PathBuf, PathBuf)> {
    let found =
        crate::common::find_on_path("chromium").zip(crate::common::find_on_path("chromedriver"));
    if found.is_none() {
        assert_ne!(
            std::env::var("HARK_REQUIRE_CHROMIUM").as_deref(),
            Ok("1"),
            "chromium or chromedriver is not on PATH"
        );
        eprintln!("no chromium and chromedriver on PATH: the browser test is skipped");
    }
    found
}

impl Browser {
    pub async fn start((chromium, chromedriver): &(PathBuf, PathBuf)) -> Browser {
        let port = free_port();
        let driver = tokio::process::Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .process_group(0)
            .spawn()
            .expect("chromedriver starts");
        // Chromium's own profile, per run: a shared one would lock.
        let profile = tempfile::tempdir().unwrap();
        let (width, height) = WIDTHS[0];
        let options = json!({
            "binary": chromium,
            "args": [
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                // A container's small /dev/shm can crash the renderer.
                "--disable-dev-shm-usage",
                // This machine's network is closed: Chromium's own calls
                // home would only fail, many at a time.
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-quic",
                "--no-first-run",
                format!("--window-size={width},{height}"),
                format!("--user-data-dir={}", profile.path().display()),
            ],
        });
        let mut capabilities = serde_json::Map::new();
        capabilities.insert("goog:chromeOptions".into(), options);
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let url = format!("http://127.0.0.1:{port}");
        let started = Instant::now();
        let client = loop {
            match ClientBuilder::new(connector.clone())
                .capabilities(capabilities.clone())
                .connect(&url)
                .await
            {
                Ok(client) => break client,
                Err(e) if started.elapsed() < Duration::from_secs(30) => {
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("no WebDriver session within 30 s: {e}"),
            }
        };
        let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("console-screenshots");
        std::fs::create_dir_all(&shots).unwrap();
        Browser {
            client,
            shots,
            driver,
            _profile: profile,
        }
    }

    /// Loads `url` afresh and waits until the console has drawn the route.
    /// (Going to the address shown, or one that differs only in its hash,
    /// would not reload the page.)
    pub async fn open(&self, url: &str) {
        self.client.goto("about:blank").await.unwrap();
        self.client.goto(url).await.unwrap();
        self.settled().await;
    }

    /// Waits until the console finished its current route (its `<main>`
    /// says `data-state="ready"` for the address shown), and fails on an
    /// error in the status line.
    pub async fn settled(&self) {
        self.until(
            "the page settled",
            "const m = document.getElementById('page'); \
             return m && m.dataset.route === location.hash && \
                    (m.dataset.state === 'ready' || m.dataset.state === 'error')",
        )
        .await;
        let status = self.text("#status").await;
        assert_eq!(status, "", "the console reported an error");
    }

    /// Polls a script's answer until it is truthy (10 s at most).
    pub async fn until(&self, what: &str, script: &str) -> Value {
        let started = Instant::now();
        loop {
            let answer = self.client.execute(script, vec![]).await.unwrap();
            if !(answer.is_null() || answer == json!(false) || answer == json!("")) {
                return answer;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{what}: not within 10 s; the page:\n{}",
                self.dom().await
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub async fn dom(&self) -> String {
        self.client.source().await.unwrap_or_default()
    }

    /// The first element `css` finds; fails the test if there is none.
    pub async fn element(&self, css: &str) -> fantoccini::elements::Element {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no {css}: {e}"))
    }

    /// The visible text of the first element `css` finds.
    pub async fn text(&self, css: &str) -> String {
        self.element(css).await.text().await.unwrap()
    }

    pub async fn click(&self, css: &str) {
        self.element(css).await.click().await.unwrap();
    }

    /// Replaces the content of a field with `text`, typed as a person would.
    pub async fn type_into(&self, css: &str, text: &str) {
        let field = self.element(css).await;
        field.clear().await.unwrap();
        field.send_keys(text).await.unwrap();
    }

    /// Saves the page as `<name>-<width>.png` at both widths.
    pub async fn screenshot(&self, name: &str) {
        for (width, height) in WIDTHS {
            self.client.set_window_size(width, height).await.unwrap();
            // Usable at this width: nothing wider than the window (a wide
            // table scrolls inside its own box).
            let overflow = self
                .client
                .execute(
                    "const d = document.documentElement; return d.scrollWidth - d.clientWidth",
                    vec![],
                )
                .await
                .unwrap();
            assert_eq!(overflow, json!(0), "{name} is wider than {width} px");
            let png = self.client.screenshot().await.unwrap();
            assert!(png.starts_with(b"\x89PNG"), "{name}: not a PNG");
            std::fs::write(self.path(name, width), png).unwrap();
        }
        let (width, height) = WIDTHS[0];
        self.client.set_window_size(width, height).await.unwrap();
    }

    pub fn path(&self, name: &str, width: u32) -> PathBuf {
        self.shots.join(format!("{name}-{width}.png"))
    }
}
