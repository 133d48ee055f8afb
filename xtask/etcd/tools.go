//go:build tools

// Package etcdtools pins the etcd programs `cargo xtask etcd` and
// `cargo xtask etcd-e2e` build: the server, etcdctl, etcdutl, etcd's
// benchmark tool and etcd's end-to-end tests, all from Go modules. The
// imports only hold the versions in go.mod; nothing here is compiled.
package etcdtools

import (
	_ "go.etcd.io/etcd/etcdctl/v3"
	_ "go.etcd.io/etcd/etcdutl/v3"
	_ "go.etcd.io/etcd/server/v3"
	_ "go.etcd.io/etcd/tests/v3/e2e"
	_ "go.etcd.io/etcd/v3/tools/benchmark"
)
