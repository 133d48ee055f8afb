package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

const (
	benchNamespace = "hark-bench"
	hotNamespace   = "hark-bench-hot"
	benchObjects   = 20000
	createWorkers  = 32
	informerCount  = 200
	hotObjects     = 1000
	updateRate     = 1000 // per second, offered
	updateFor      = 30 * time.Second
	updateWorkers  = 64
)

// benchResults is what the run measured, as "name value" lines.
type benchResults struct {
	names  []string
	values map[string]float64
}

func (b *benchResults) set(name string, v float64) {
	if b.values == nil {
		b.values = map[string]float64{}
	}
	if _, ok := b.values[name]; !ok {
		b.names = append(b.names, name)
	}
	b.values[name] = v
	fmt.Printf("      %-40s %12.2f\n", name, v)
}

func (b *benchResults) write(path string) error {
	var out strings.Builder
	for _, n := range b.names {
		fmt.Fprintf(&out, "%s %g\n", n, b.values[n])
	}
	return os.WriteFile(path, []byte(out.String()), 0o600)
}

func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p)
	return float64(sorted[i].Microseconds()) / 1000
}

// usage samples each process's resident memory (its peak) and CPU time.
// Only the sampling goroutine touches peak until finish has returned.
type usage struct {
	procs map[string]*process
	peak  map[string]uint64
	stop  chan struct{}
	done  chan struct{}
}

func sampleUsage(procs map[string]*process) *usage {
	u := &usage{procs: procs, peak: map[string]uint64{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(u.done)
		for {
			for name, p := range u.procs {
				if rss := rssBytes(p.pid()); rss > u.peak[name] {
					u.peak[name] = rss
				}
			}
			select {
			case <-u.stop:
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	return u
}

func (u *usage) finish() {
	close(u.stop)
	<-u.done
}

func rssBytes(pid int) uint64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			kb, _ := strconv.ParseUint(strings.Fields(line)[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// cpuSeconds is user+system CPU time of a process so far.
func cpuSeconds(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command's closing parenthesis; utime and stime are
	// the 14th and 15th fields of the whole line.
	rest := string(data)[strings.LastIndexByte(string(data), ')')+2:]
	f := strings.Fields(rest)
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // USER_HZ
}

func (w *workload) bench(m *members, cp *controlPlane, resultsPath string) checkFailures {
	ctx := w.ctx
	results := &benchResults{}
	var failures checkFailures
	fail := failures.add
	procs := map[string]*process{"apiserver": cp.apiserver}
	for i, p := range m.procs {
		procs[fmt.Sprintf("m%d", i)] = p
	}
	cpuBefore := map[string]float64{}
	for name, p := range procs {
		cpuBefore[name] = cpuSeconds(p.pid())
	}
	selfBefore, wallStart := cpuSeconds(os.Getpid()), time.Now()
	use := sampleUsage(procs)
	for _, ns := range []string{benchNamespace, hotNamespace} {
		if _, err := w.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return checkFailures{fmt.Sprintf("namespace %s: %v", ns, err)}
		}
	}

	// 1. Create 20,000 objects from 32 workers.
	fmt.Printf("== create %d ConfigMaps from %d workers\n", benchObjects, createWorkers)
	payload := strings.Repeat("x", 1024)
	jobs := make(chan int, benchObjects)
	for i := range benchObjects {
		jobs <- i
	}
	close(jobs)
	var mu sync.Mutex
	var latencies []time.Duration
	var createFailures atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range createWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for i := range jobs {
				cm := &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("b-%05d", i), Labels: map[string]string{"bench": "1"}},
					Data:       map[string]string{"payload": payload},
				}
				t := time.Now()
				_, err := w.client.CoreV1().ConfigMaps(benchNamespace).Create(ctx, cm, metav1.CreateOptions{})
				if err != nil {
					createFailures.Add(1)
					continue
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	results.set("create_objects_per_s", float64(len(latencies))/elapsed.Seconds())
	results.set("create_p50_ms", percentile(latencies, 0.50))
	results.set("create_p99_ms", percentile(latencies, 0.99))
	if n := createFailures.Load(); n > 0 {
		fail("%d creates failed", n)
	}

	// 2. List them all: at once, and in pages of 500; three times each,
	// the median kept.
	fmt.Printf("== list %d ConfigMaps\n", benchObjects)
	for _, limit := range []int64{0, 500} {
		var times []time.Duration
		for range 3 {
			t := time.Now()
			n, err := listAll(ctx, w.client, limit)
			if err != nil {
				fail("list (limit %d): %v", limit, err)
				break
			}
			if n != benchObjects {
				fail("list (limit %d): %d objects, want %d", limit, n, benchObjects)
			}
			times = append(times, time.Since(t))
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		if len(times) == 3 {
			results.set(fmt.Sprintf("list_limit_%d_s", limit), times[1].Seconds())
		}
	}

	// 3. 200 informers on one resource while updates flow.
	fmt.Printf("== %d informers on %d ConfigMaps, %d updates/s offered for %s\n", informerCount, hotObjects, updateRate, updateFor)
	for i := range hotObjects {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("h-%04d", i)}, Data: map[string]string{"t": "0"}}
		if _, err := w.client.CoreV1().ConfigMaps(hotNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			fail("hot object: %v", err)
			return failures
		}
	}
	var delaysMu sync.Mutex
	var delays []time.Duration
	var measuring atomic.Bool
	informerCtx, stopInformers := context.WithCancel(ctx)
	defer stopInformers()
	var synced []cache.InformerSynced
	for range informerCount {
		factory := informers.NewSharedInformerFactoryWithOptions(w.client, 0, informers.WithNamespace(hotNamespace))
		informer := factory.Core().V1().ConfigMaps().Informer()
		_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(_, obj any) {
				if !measuring.Load() {
					return
				}
				sent, err := strconv.ParseInt(obj.(*corev1.ConfigMap).Data["t"], 10, 64)
				if err != nil || sent == 0 {
					return
				}
				d := time.Since(time.Unix(0, sent))
				delaysMu.Lock()
				delays = append(delays, d)
				delaysMu.Unlock()
			},
		})
		factory.Start(informerCtx.Done())
		synced = append(synced, informer.HasSynced)
	}
	syncStart := time.Now()
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		fail("the informers did not sync")
		return failures
	}
	results.set("informers_sync_s", time.Since(syncStart).Seconds())
	measuring.Store(true)
	updates := make(chan int, updateRate)
	var sent, done, dropped, patchFailures atomic.Int64
	var updateWG sync.WaitGroup
	for range updateWorkers {
		updateWG.Add(1)
		go func() {
			defer updateWG.Done()
			for i := range updates {
				patch := fmt.Sprintf(`{"data":{"t":"%d"}}`, time.Now().UnixNano())
				_, err := w.client.CoreV1().ConfigMaps(hotNamespace).Patch(ctx, fmt.Sprintf("h-%04d", i%hotObjects), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
				if err != nil {
					patchFailures.Add(1)
					continue
				}
				done.Add(1)
			}
		}()
	}
	// Open loop: a tick every 10 ms offers its share; what the workers
	// cannot take is dropped and counted, not queued up.
	ticker := time.NewTicker(10 * time.Millisecond)
	updateStart := time.Now()
	for time.Since(updateStart) < updateFor {
		<-ticker.C
		for range updateRate / 100 {
			select {
			case updates <- int(sent.Add(1)):
			default:
				dropped.Add(1)
			}
		}
	}
	ticker.Stop()
	close(updates)
	updateWG.Wait()
	updateElapsed := time.Since(updateStart)
	time.Sleep(2 * time.Second) // the last events reach the informers
	measuring.Store(false)
	stopInformers()
	delaysMu.Lock()
	sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
	results.set("updates_per_s", float64(done.Load())/updateElapsed.Seconds())
	results.set("updates_dropped", float64(dropped.Load()))
	results.set("watch_delay_p50_ms", percentile(delays, 0.50))
	results.set("watch_delay_p99_ms", percentile(delays, 0.99))
	results.set("watch_deliveries", float64(len(delays)))
	delaysMu.Unlock()
	if n := patchFailures.Load(); n > 0 {
		fail("%d patches failed", n)
	}

	use.finish()
	names := make([]string, 0, len(procs))
	for name := range procs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		pid := procs[name].pid()
		results.set(name+"_peak_rss_mib", float64(use.peak[name])/(1<<20))
		anon, file := rssSplit(pid)
		results.set(name+"_end_rss_anon_mib", anon/(1<<20))
		results.set(name+"_end_rss_file_mib", file/(1<<20))
		results.set(name+"_cpu_s", cpuSeconds(pid)-cpuBefore[name])
	}
	// The machine's two cores are shared by the members, the apiserver
	// and this harness (its 200 informers decode every event): their CPU
	// over the run's wall time says how saturated it was.
	results.set("harness_cpu_s", cpuSeconds(os.Getpid())-selfBefore)
	results.set("bench_wall_s", time.Since(wallStart).Seconds())
	// Hark's watch engine keeps the newest revisions in memory for
	// catch-up (etcd has no such window): how much of each member it is.
	// RocksDB's own memory (outside the Rust heap), by database and kind.
	rocksdb := []struct{ db, kind string }{
		{"store", "memtables"}, {"store", "table_readers"},
		{"log", "memtables"}, {"log", "table_readers"},
		{"shared", "block_cache"},
	}
	for i, metrics := range m.metrics {
		samples := scrape(metrics + "/metrics")
		if v, ok := samples["hark_watch_window_bytes"]; ok {
			results.set(fmt.Sprintf("m%d_watch_window_mib", i), v/(1<<20))
		}
		for _, r := range rocksdb {
			series := fmt.Sprintf("hark_rocksdb_memory_bytes{db=%q,kind=%q}", r.db, r.kind)
			if v, ok := samples[series]; ok {
				results.set(fmt.Sprintf("m%d_rocksdb_%s_%s_mib", i, r.db, r.kind), v/(1<<20))
			}
		}
	}
	if resultsPath != "" {
		if err := results.write(resultsPath); err != nil {
			fail("writing %s: %v", resultsPath, err)
		}
	}
	return failures
}

// listAll lists every bench object (not the namespace's kube-root-ca.crt),
// in pages of limit (0: one list); the number of objects.
func listAll(ctx context.Context, client *kubernetes.Clientset, limit int64) (int, error) {
	opts := metav1.ListOptions{Limit: limit, LabelSelector: "bench=1"}
	n := 0
	for {
		list, err := client.CoreV1().ConfigMaps(benchNamespace).List(ctx, opts)
		if err != nil {
			return n, err
		}
		n += len(list.Items)
		if list.Continue == "" {
			return n, nil
		}
		opts.Continue = list.Continue
	}
}

// rssSplit is the resident memory of a process that is its own (anonymous:
// heap, stacks) and that maps files (etcd's bbolt database is mmap'ed), in
// bytes, from /proc/<pid>/smaps_rollup.
func rssSplit(pid int) (anon, file float64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "Anonymous:":
			anon = kb * 1024
		case "Rss:":
			file += kb * 1024
		}
	}
	return anon, file - anon
}

// scrape reads a Prometheus text page into its samples, by series as
// written (`name` or `name{labels}`); empty if the page cannot be read.
func scrape(url string) map[string]float64 {
	samples := map[string]float64{}
	resp, err := http.Get(url)
	if err != nil {
		return samples
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return samples
	}
	for _, line := range strings.Split(string(body), "\n") {
		cut := strings.LastIndexByte(line, ' ')
		if strings.HasPrefix(line, "#") || cut < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[cut+1:], 64); err == nil {
			samples[line[:cut]] = v
		}
	}
	return samples
}
