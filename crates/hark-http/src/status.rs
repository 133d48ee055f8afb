//! gRPC statuses as etcd 3.5's gateway (grpc-gateway v1.16) writes them.

use axum::body::Body;
use axum::response::Response;
use http::{StatusCode, header};
use tonic::Code;

/// grpc-gateway's `HTTPStatusFromCode`.
pub(crate) fn http_status(code: Code) -> StatusCode {
    match code {
        Code::Ok => StatusCode::OK,
        Code::Cancelled => StatusCode::REQUEST_TIMEOUT,
        Code::InvalidArgument | Code::FailedPrecondition | Code::OutOfRange => {
            StatusCode::BAD_REQUEST
        }
        Code::DeadlineExceeded => StatusCode::GATEWAY_TIMEOUT,
        Code::NotFound => StatusCode::NOT_FOUND,
        Code::AlreadyExists | Code::Aborted => StatusCode::CONFLICT,
        Code::PermissionDenied => StatusCode::FORBIDDEN,
        Code::Unauthenticated => StatusCode::UNAUTHORIZED,
        Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
        Code::Unimplemented => StatusCode::NOT_IMPLEMENTED,
        Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        Code::Unknown | Code::Internal | Code::DataLoss => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// A unary call's error: `{"error":msg,"code":N,"message":msg}` (etcd 3.4
/// and 3.5; 3.6 dropped `error`, which clients of 3.5 still read).
pub(crate) fn error_response(code: Code, message: &str) -> Response {
    let message = quoted(message);
    let code_number = code as i32;
    let body = format!(r#"{{"error":{message},"code":{code_number},"message":{message}}}"#);
    Response::builder()
        .status(http_status(code))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body))
        .expect("a valid response")
}

/// An error in the middle of a stream, as one chunk:
/// `{"error":{"grpc_code":N,"http_code":N,"message":msg,"http_status":text}}`.
pub(crate) fn stream_error_chunk(code: Code, message: &str) -> bytes::Bytes {
    let status = http_status(code);
    let chunk = format!(
        r#"{{"error":{{"grpc_code":{},"http_code":{},"message":{},"http_status":{}}}}}"#,
        code as i32,
        status.as_u16(),
        quoted(message),
        quoted(status.canonical_reason().unwrap_or("")),
    );
    bytes::Bytes::from(chunk + "\n")
}

/// `s` as a JSON string literal. (Hand-placed keys: Go writes these fields
/// in declaration order, which a JSON map would not keep.)
fn quoted(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// Go's `http.Error`: plain text with a trailing newline.
pub(crate) fn plain_error(status: StatusCode) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header("x-content-type-options", "nosniff")
        .body(Body::from(format!(
            "{}\n",
            status.canonical_reason().unwrap_or("")
        )))
        .expect("a valid response")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_codes_map_to_grpc_gateways_http_statuses() {
        assert_eq!(http_status(Code::InvalidArgument), 400);
        assert_eq!(http_status(Code::OutOfRange), 400);
        assert_eq!(http_status(Code::Unauthenticated), 401);
        assert_eq!(http_status(Code::PermissionDenied), 403);
        assert_eq!(http_status(Code::NotFound), 404);
        assert_eq!(http_status(Code::ResourceExhausted), 429);
        assert_eq!(http_status(Code::Unimplemented), 501);
        assert_eq!(http_status(Code::Unavailable), 503);
        assert_eq!(http_status(Code::DeadlineExceeded), 504);
        assert_eq!(http_status(Code::Internal), 500);
    }

    #[test]
    fn a_unary_error_has_etcd_3_5s_three_fields_in_its_order() {
        let response = error_response(Code::NotFound, "etcdserver: requested lease not found");
        assert_eq!(response.status(), 404);
        let body = futures_util::FutureExt::now_or_never(axum::body::to_bytes(
            response.into_body(),
            usize::MAX,
        ))
        .unwrap()
        .unwrap();
        assert_eq!(
            &body[..],
            br#"{"error":"etcdserver: requested lease not found","code":5,"message":"etcdserver: requested lease not found"}"#
        );
    }

    #[test]
    fn a_stream_error_is_one_line_in_grpc_gateway_v1s_shape() {
        let chunk = stream_error_chunk(Code::Unavailable, "etcdserver: no leader");
        assert_eq!(
            std::str::from_utf8(&chunk).unwrap(),
            "{\"error\":{\"grpc_code\":14,\"http_code\":503,\"message\":\"etcdserver: no leader\",\"http_status\":\"Service Unavailable\"}}\n"
        );
    }
}
