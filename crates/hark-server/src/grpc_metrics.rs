//! go-grpc-prometheus' server counters, which etcd exports and dashboards use:
//! `grpc_server_started_total`, `grpc_server_handled_total`,
//! `grpc_server_msg_received_total` and `grpc_server_msg_sent_total`.

use tonic::{Code, Status};

/// Every method Hark serves, as `(service, method, grpc_type)`; each one's
/// series exist (at zero) from the first scrape, as go-grpc-prometheus
/// pre-registers them.
pub const METHODS: &[(&str, &str, &str)] = &[
    ("etcdserverpb.KV", "Range", "unary"),
    ("etcdserverpb.KV", "Put", "unary"),
    ("etcdserverpb.KV", "DeleteRange", "unary"),
    ("etcdserverpb.KV", "Txn", "unary"),
    ("etcdserverpb.KV", "Compact", "unary"),
    ("etcdserverpb.Watch", "Watch", "bidi_stream"),
    ("etcdserverpb.Lease", "LeaseGrant", "unary"),
    ("etcdserverpb.Lease", "LeaseRevoke", "unary"),
    ("etcdserverpb.Lease", "LeaseKeepAlive", "bidi_stream"),
    ("etcdserverpb.Lease", "LeaseTimeToLive", "unary"),
    ("etcdserverpb.Lease", "LeaseLeases", "unary"),
    ("etcdserverpb.Cluster", "MemberAdd", "unary"),
    ("etcdserverpb.Cluster", "MemberRemove", "unary"),
    ("etcdserverpb.Cluster", "MemberUpdate", "unary"),
    ("etcdserverpb.Cluster", "MemberList", "unary"),
    ("etcdserverpb.Cluster", "MemberPromote", "unary"),
    ("etcdserverpb.Maintenance", "Alarm", "unary"),
    ("etcdserverpb.Maintenance", "Status", "unary"),
    ("etcdserverpb.Maintenance", "Defragment", "unary"),
    ("etcdserverpb.Maintenance", "Hash", "unary"),
    ("etcdserverpb.Maintenance", "HashKV", "unary"),
    ("etcdserverpb.Maintenance", "Snapshot", "server_stream"),
    ("etcdserverpb.Maintenance", "MoveLeader", "unary"),
    ("etcdserverpb.Maintenance", "Downgrade", "unary"),
    ("etcdserverpb.Auth", "AuthEnable", "unary"),
    ("etcdserverpb.Auth", "AuthDisable", "unary"),
    ("etcdserverpb.Auth", "AuthStatus", "unary"),
    ("etcdserverpb.Auth", "Authenticate", "unary"),
    ("etcdserverpb.Auth", "UserAdd", "unary"),
    ("etcdserverpb.Auth", "UserGet", "unary"),
    ("etcdserverpb.Auth", "UserList", "unary"),
    ("etcdserverpb.Auth", "UserDelete", "unary"),
    ("etcdserverpb.Auth", "UserChangePassword", "unary"),
    ("etcdserverpb.Auth", "UserGrantRole", "unary"),
    ("etcdserverpb.Auth", "UserRevokeRole", "unary"),
    ("etcdserverpb.Auth", "RoleAdd", "unary"),
    ("etcdserverpb.Auth", "RoleGet", "unary"),
    ("etcdserverpb.Auth", "RoleList", "unary"),
    ("etcdserverpb.Auth", "RoleDelete", "unary"),
    ("etcdserverpb.Auth", "RoleGrantPermission", "unary"),
    ("etcdserverpb.Auth", "RoleRevokePermission", "unary"),
];

const ALL_CODES: [Code; 17] = [
    Code::Ok,
    Code::Cancelled,
    Code::Unknown,
    Code::InvalidArgument,
    Code::DeadlineExceeded,
    Code::NotFound,
    Code::AlreadyExists,
    Code::PermissionDenied,
    Code::ResourceExhausted,
    Code::FailedPrecondition,
    Code::Aborted,
    Code::OutOfRange,
    Code::Unimplemented,
    Code::Internal,
    Code::Unavailable,
    Code::DataLoss,
    Code::Unauthenticated,
];

/// Describes the four counters and creates every method's series at zero.
pub fn register() {
    metrics::describe_counter!(
        "grpc_server_started_total",
        "Total number of RPCs started on the server."
    );
    metrics::describe_counter!(
        "grpc_server_handled_total",
        "Total number of RPCs completed on the server, regardless of success or failure."
    );
    metrics::describe_counter!(
        "grpc_server_msg_received_total",
        "Total number of RPC stream messages received on the server."
    );
    metrics::describe_counter!(
        "grpc_server_msg_sent_total",
        "Total number of gRPC stream messages sent by the server."
    );
    for &(service, method, kind) in METHODS {
        let labels = [
            ("grpc_type", kind),
            ("grpc_service", service),
            ("grpc_method", method),
        ];
        for name in [
            "grpc_server_started_total",
            "grpc_server_msg_received_total",
            "grpc_server_msg_sent_total",
        ] {
            metrics::counter!(name, &labels).increment(0);
        }
        for code in ALL_CODES {
            metrics::counter!("grpc_server_handled_total",
                "grpc_type" => kind, "grpc_service" => service,
                "grpc_method" => method, "grpc_code" => code_name(code))
            .increment(0);
        }
    }
}

/// One RPC being served; counted as handled when it finishes.
pub struct Call {
    service: &'static str,
    method: &'static str,
    kind: &'static str,
}

/// A unary call: its one request message has been received.
pub fn unary(service: &'static str, method: &'static str) -> Call {
    let call = Call::start(service, method, "unary");
    call.received();
    call
}

pub fn server_stream(service: &'static str, method: &'static str) -> Call {
    let call = Call::start(service, method, "server_stream");
    call.received();
    call
}

pub fn bidi_stream(service: &'static str, method: &'static str) -> Call {
    Call::start(service, method, "bidi_stream")
}

impl Call {
    fn start(service: &'static str, method: &'static str, kind: &'static str) -> Call {
        metrics::counter!("grpc_server_started_total",
            "grpc_type" => kind, "grpc_service" => service, "grpc_method" => method)
        .increment(1);
        Call {
            service,
            method,
            kind,
        }
    }

    /// One request message arrived (a unary call's one, or one of a stream's).
    pub fn received(&self) {
        metrics::counter!("grpc_server_msg_received_total",
            "grpc_type" => self.kind, "grpc_service" => self.service, "grpc_method" => self.method)
        .increment(1);
    }

    /// `n` response messages went out.
    pub fn sent(&self, n: u64) {
        self.sent_counter().increment(n);
    }

    /// The sent-messages counter, for a stream that counts each message
    /// without looking the series up again.
    pub fn sent_counter(&self) -> metrics::Counter {
        metrics::counter!("grpc_server_msg_sent_total",
            "grpc_type" => self.kind, "grpc_service" => self.service, "grpc_method" => self.method)
    }

    pub fn handled(&self, code: Code) {
        metrics::counter!("grpc_server_handled_total",
            "grpc_type" => self.kind, "grpc_service" => self.service,
            "grpc_method" => self.method, "grpc_code" => code_name(code))
        .increment(1);
    }

    /// Counts a unary call's outcome (and its response message) and passes
    /// it through.
    pub fn finish<T>(self, result: Result<T, Status>) -> Result<T, Status> {
        match &result {
            Ok(_) => {
                self.sent(1);
                self.handled(Code::Ok);
            }
            Err(s) => self.handled(s.code()),
        }
        result
    }
}

/// The code a bidirectional stream ends with when its client went away:
/// etcd's watch server reports `Canceled` (its context is cancelled), and
/// tonic sees the client's reset or closed connection as `Unknown`.
pub fn client_gone(code: Code) -> Code {
    match code {
        Code::Unknown => Code::Cancelled,
        other => other,
    }
}

/// grpc-go's names for status codes (the `grpc_code` label values).
fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "Canceled",
        Code::Unknown => "Unknown",
        Code::InvalidArgument => "InvalidArgument",
        Code::DeadlineExceeded => "DeadlineExceeded",
        Code::NotFound => "NotFound",
        Code::AlreadyExists => "AlreadyExists",
        Code::PermissionDenied => "PermissionDenied",
        Code::ResourceExhausted => "ResourceExhausted",
        Code::FailedPrecondition => "FailedPrecondition",
        Code::Aborted => "Aborted",
        Code::OutOfRange => "OutOfRange",
        Code::Unimplemented => "Unimplemented",
        Code::Internal => "Internal",
        Code::Unavailable => "Unavailable",
        Code::DataLoss => "DataLoss",
        Code::Unauthenticated => "Unauthenticated",
    }
}
