//! go-grpc-prometheus' server counters, which etcd exports and dashboards use:
//! `grpc_server_started_total` and `grpc_server_handled_total`.

use tonic::{Code, Status};

/// One RPC being served; counted as handled when it finishes.
pub struct Call {
    service: &'static str,
    method: &'static str,
    kind: &'static str,
}

pub fn unary(service: &'static str, method: &'static str) -> Call {
    Call::start(service, method, "unary")
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

    pub fn handled(&self, code: Code) {
        metrics::counter!("grpc_server_handled_total",
            "grpc_type" => self.kind, "grpc_service" => self.service,
            "grpc_method" => self.method, "grpc_code" => code_name(code))
        .increment(1);
    }

    /// Counts a unary call's outcome and passes it through.
    pub fn finish<T>(self, result: Result<T, Status>) -> Result<T, Status> {
        self.handled(match &result {
            Ok(_) => Code::Ok,
            Err(s) => s.code(),
        });
        result
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
