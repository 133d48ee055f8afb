//! What every command runs with: the endpoints, the output format, the
//! command timeout, and the connection options.

use std::time::Duration;

use hark_client::Client;

use crate::exit::{EXIT_BAD_CONNECTION, EXIT_ERROR, Exit};
use crate::print::Format;

/// `defrag`'s timeout when `--command-timeout` is not given: Hark
/// defragments about 1 GiB in 20 s (docs/benchmarks.md), so this covers an
/// 8 GiB store (etcd's largest recommended quota) with room to spare.
pub(crate) const LONG_COMMAND_TIMEOUT: Duration = Duration::from_secs(300);

pub struct Ctx {
    pub(crate) endpoints: Vec<String>,
    pub(crate) command_timeout: Duration,
    /// The timeout of commands that take as long as the store is big
    /// (`defrag`): `--command-timeout` when given, else [`LONG_COMMAND_TIMEOUT`].
    pub(crate) long_timeout: Duration,
    pub(crate) format: Format,
    /// `--hex` (etcdctl's JSON member list prints ids in hex with it).
    pub(crate) hex: bool,
    /// `--user`, `--password` and the TLS flags.
    pub(crate) options: hark_client::ConnectOptions,
}

impl Ctx {
    pub(crate) async fn client(&self) -> Result<Client, Exit> {
        self.connect(&self.endpoints).await
    }

    /// A client of `endpoints` with this command's user and TLS.
    pub(crate) async fn connect(&self, endpoints: &[impl AsRef<str>]) -> Result<Client, Exit> {
        Client::connect_with(endpoints, self.options.clone())
            .await
            // A refused login too, as etcdctl exits.
            .map_err(|e| Exit::new(EXIT_BAD_CONNECTION, e.to_string()))
    }

    /// With `--cluster`: every member's client URLs from the member list
    /// instead of `--endpoints` (etcdctl's `endpoint --cluster`).
    pub(crate) async fn with_cluster_endpoints(&self, cluster: bool) -> Result<Ctx, Exit> {
        let endpoints = if cluster {
            let c = self.client().await?;
            let members = self.timed(c.member_list(true)).await.map_err(|e| {
                Exit::new(
                    EXIT_ERROR,
                    format!(
                        "failed to fetch endpoints from etcd cluster member list: {}",
                        e.message.unwrap_or_default()
                    ),
                )
            })?;
            members
                .members
                .into_iter()
                .flat_map(|m| m.client_ur_ls)
                .collect()
        } else {
            self.endpoints.clone()
        };
        Ok(Ctx {
            endpoints,
            command_timeout: self.command_timeout,
            long_timeout: self.long_timeout,
            format: self.format,
            hex: self.hex,
            options: self.options.clone(),
        })
    }

    /// Runs a call under `--command-timeout`.
    pub(crate) async fn timed<T>(
        &self,
        call: impl std::future::Future<Output = Result<T, hark_client::Error>>,
    ) -> Result<T, Exit> {
        match tokio::time::timeout(self.command_timeout, call).await {
            Ok(r) => r.map_err(Exit::from),
            Err(_) => Err(Exit::new(EXIT_ERROR, "context deadline exceeded")),
        }
    }
}
