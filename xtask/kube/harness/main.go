// kube-harness runs Kubernetes' control plane on a storage cluster of three
// Hark or etcd members and drives it: `cargo xtask kube` builds it with
// kube-apiserver, kube-controller-manager and kubectl at the pinned
// Kubernetes release, and runs it once per server.
//
//	kube-harness -server BIN -server-name hark|etcd -kube-bin DIR -work DIR [-mode workload|faults|bench] [-results FILE]
//
// It lays out kubeadm's certificates, starts the members with kubeadm's
// etcd arguments, kube-apiserver on all three with client certificates and
// a short compaction interval, and kube-controller-manager; then runs the
// workload (workload.go), printing one line per checked step, the fault
// run (faults.go) or the benchmark (bench.go). It exits 1 if a step or a check failed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	server := flag.String("server", "", "the storage member binary (Hark's or etcd's)")
	serverName := flag.String("server-name", "hark", "what -server is, for the report")
	kubeBin := flag.String("kube-bin", "", "the directory holding kube-apiserver, kube-controller-manager and kubectl")
	work := flag.String("work", "", "a fresh directory for certificates, data and logs")
	mode := flag.String("mode", "workload", "workload: the checked steps; faults: kills, a pause and a compaction under load; bench: the measurements")
	memberFlags := flag.String("member-flags", "", "more flags for every member, space-separated (say, to measure a setting)")
	resultsPath := flag.String("results", "", "bench: write the figures here, one \"name value\" per line")
	compaction := flag.Duration("compaction-interval", 30*time.Second, "kube-apiserver's --etcd-compaction-interval")
	flag.Parse()
	if *server == "" || *kubeBin == "" || *work == "" {
		flag.Usage()
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	if *mode != "workload" && *mode != "faults" && *mode != "bench" {
		fmt.Fprintf(os.Stderr, "kube-harness: -mode is workload, faults or bench, not %q\n", *mode)
		os.Exit(2)
	}
	extraMemberFlags = strings.Fields(*memberFlags)
	failures, err := run(ctx, *mode, *resultsPath, *server, *serverName, *kubeBin, *work, *compaction)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kube-harness: %v\n", err)
		os.Exit(1)
	}
	if len(failures) > 0 {
		fmt.Printf("\n%s: %d checks failed (logs in %s)\n", *serverName, len(failures), *work)
		os.Exit(1)
	}
	fmt.Printf("\n%s: every check passed\n", *serverName)
}

func run(ctx context.Context, mode, resultsPath, server, serverName, kubeBin, work string, compaction time.Duration) ([]string, error) {
	if err := os.MkdirAll(work, 0o700); err != nil {
		return nil, err
	}
	p, err := newPKI(filepath.Join(work, "pki"))
	if err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	start := time.Now()
	m, err := startMembers(server, work, p)
	if err != nil {
		return nil, err
	}
	defer m.stop()
	fmt.Printf("== %s ×3 serving (%s) after %.1fs\n", serverName, m.endpoints, time.Since(start).Seconds())
	start = time.Now()
	cp, err := startControlPlane(kubeBin, work, p, m, compaction)
	if err != nil {
		return nil, err
	}
	defer cp.stop()
	fmt.Printf("== kube-apiserver ready at %s after %.1fs\n", cp.url, time.Since(start).Seconds())
	w, err := newWorkload(ctx, filepath.Join(kubeBin, "kubectl"), cp.admin, work)
	if err != nil {
		return nil, err
	}
	switch mode {
	case "faults":
		return w.faults(m, p), nil
	case "bench":
		return w.bench(m, cp, resultsPath), nil
	}
	return w.all(), nil
}

// checkFailures collects the checks that failed, printing each as found.
type checkFailures []string

func (f *checkFailures) add(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	fmt.Printf("FAIL  %s\n", msg)
	*f = append(*f, msg)
}
