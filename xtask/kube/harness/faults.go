package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

const (
	// How long after the paused leader resumes a write it held may still
	// time out: the request timeout (5 s plus two 1 s election timeouts,
	// etcd's and Hark's) and a second.
	pauseTimeoutWindow = 8 * time.Second
	faultNamespace     = "hark-faults"
	writers            = 4
	objectsEach        = 10
)

// ack is a write the apiserver acknowledged.
type ack struct {
	name, rv, value string
}

// failure is a request that failed, when and how.
type failure struct {
	at   time.Time
	code int32 // the HTTP status; 0 when the request got no answer
	what string
}

// faultRun is item 2: a steady write load, an informer and a watch open
// from the start, kubectl polling; meanwhile the leader is SIGKILLed and
// restarted, a member paused and resumed, the store compacted.
type faultRun struct {
	w       *workload
	m       *members
	p       *pki
	mu      sync.Mutex
	acks    []ack
	fails   []failure
	kubectl []failure
	watched []watch.Event
	faults  []string
	kills   []time.Time
	// [start, end) of each pause.
	pauses [][2]time.Time
}

func (r *faultRun) record(err error, what string) {
	code := int32(0)
	if status, ok := err.(apierrors.APIStatus); ok {
		code = status.Status().Code
	}
	r.mu.Lock()
	r.fails = append(r.fails, failure{at: time.Now(), code: code, what: fmt.Sprintf("%s: %v", what, err)})
	r.mu.Unlock()
}

func (r *faultRun) log(format string, args ...any) {
	line := fmt.Sprintf("%s  "+format, append([]any{time.Now().Format("15:04:05.000")}, args...)...)
	fmt.Println(line)
	r.mu.Lock()
	r.faults = append(r.faults, line)
	r.mu.Unlock()
}

// writer creates its objects, then updates them round-robin until stop.
func (r *faultRun) writer(ctx context.Context, id int, stop <-chan struct{}) {
	cms := r.w.client.CoreV1().ConfigMaps(faultNamespace)
	objects := make([]*corev1.ConfigMap, objectsEach)
	for k := range objectsEach {
		for {
			cm, err := cms.Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("f-%d-%d", id, k)},
				Data:       map[string]string{"n": "0"},
			}, metav1.CreateOptions{})
			if err == nil {
				objects[k] = cm
				r.acked(cm)
				break
			}
			r.record(err, "create")
			time.Sleep(100 * time.Millisecond)
		}
	}
	for n := 1; ; n++ {
		select {
		case <-stop:
			return
		case <-time.After(40 * time.Millisecond):
		}
		k := n % objectsEach
		next := objects[k].DeepCopy()
		next.Data["n"] = strconv.Itoa(n)
		updated, err := cms.Update(ctx, next, metav1.UpdateOptions{})
		if err != nil {
			r.record(err, "update "+next.Name)
			// A write that failed may still have been applied: start again
			// from what is stored.
			if current, err := cms.Get(ctx, next.Name, metav1.GetOptions{}); err == nil {
				objects[k] = current
			}
			continue
		}
		objects[k] = updated
		r.acked(updated)
	}
}

func (r *faultRun) acked(cm *corev1.ConfigMap) {
	r.mu.Lock()
	r.acks = append(r.acks, ack{name: cm.Name, rv: cm.ResourceVersion, value: cm.Data["n"]})
	r.mu.Unlock()
}

// kubectlProbe runs `kubectl get` every 2 s until stop.
func (r *faultRun) kubectlProbe(ctx context.Context, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(2 * time.Second):
		}
		cmd := exec.CommandContext(ctx, r.w.kubectl, "--kubeconfig="+r.w.kubeconfig, "get", "configmaps", "-n", faultNamespace, "-o", "name", "--request-timeout=10s")
		if out, err := cmd.CombinedOutput(); err != nil {
			r.mu.Lock()
			r.kubectl = append(r.kubectl, failure{at: time.Now(), what: fmt.Sprintf("%v: %s", err, out)})
			r.mu.Unlock()
		}
	}
}

// etcdClient is a clientv3 on every member with the apiserver's etcd
// client certificate, for finding the leader and compacting.
func (r *faultRun) etcdClient() (*clientv3.Client, error) {
	cert, err := tls.LoadX509KeyPair(r.p.path("apiserver-etcd-client.crt"), r.p.path("apiserver-etcd-client.key"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(r.p.caCert)
	return clientv3.New(clientv3.Config{
		Endpoints:   r.m.endpoints,
		DialTimeout: 5 * time.Second,
		TLS:         &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool},
	})
}

// leader is the index of the member that leads, asking each running one.
func (r *faultRun) leader(ctx context.Context, c *clientv3.Client) (int, error) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for i, endpoint := range r.m.endpoints {
			if !r.m.procs[i].alive() {
				continue
			}
			sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			status, err := c.Status(sctx, endpoint)
			cancel()
			if err == nil && status.Leader != 0 && status.Leader == status.Header.MemberId {
				return i, nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return 0, fmt.Errorf("no member said it leads within 30 s")
}

func (w *workload) faults(m *members, p *pki) checkFailures {
	r := &faultRun{w: w, m: m, p: p}
	var failures checkFailures
	fail := failures.add
	ctx := w.ctx
	if _, err := w.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: faultNamespace}}, metav1.CreateOptions{}); err != nil {
		return checkFailures{fmt.Sprintf("namespace: %v", err)}
	}
	etcd, err := r.etcdClient()
	if err != nil {
		return checkFailures{fmt.Sprintf("etcd client: %v", err)}
	}
	defer etcd.Close()

	// The observers start before any object exists.
	start, err := w.client.CoreV1().ConfigMaps(faultNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return checkFailures{fmt.Sprintf("initial list: %v", err)}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(w.client, 0, informers.WithNamespace(faultNamespace))
	informer := factory.Core().V1().ConfigMaps().Informer()
	informerCtx, stopInformer := context.WithCancel(ctx)
	defer stopInformer()
	factory.Start(informerCtx.Done())
	watcher, err := watchtools.NewRetryWatcherWithContext(ctx, start.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			return w.client.CoreV1().ConfigMaps(faultNamespace).Watch(ctx, options)
		},
	})
	if err != nil {
		return checkFailures{fmt.Sprintf("watch: %v", err)}
	}
	defer watcher.Stop()
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		for e := range watcher.ResultChan() {
			r.mu.Lock()
			r.watched = append(r.watched, e)
			r.mu.Unlock()
		}
	}()

	stop := make(chan struct{})
	var load sync.WaitGroup
	for id := range writers {
		load.Add(1)
		go func() { defer load.Done(); r.writer(ctx, id, stop) }()
	}
	load.Add(1)
	go func() { defer load.Done(); r.kubectlProbe(ctx, stop) }()

	time.Sleep(10 * time.Second)
	if leader, err := r.leader(ctx, etcd); err != nil {
		fail("before the kill: %v", err)
	} else {
		r.log("SIGKILL the leader, m%d", leader)
		r.kills = append(r.kills, time.Now())
		m.procs[leader].kill()
		time.Sleep(10 * time.Second)
		r.log("restart m%d", leader)
		if err := m.procs[leader].start(); err != nil {
			fail("restart: %v", err)
		} else if err := m.waitHealthy(leader, 60*time.Second); err != nil {
			fail("after the restart: %v", err)
		}
	}
	time.Sleep(10 * time.Second)
	if leader, err := r.leader(ctx, etcd); err != nil {
		fail("before the pause: %v", err)
	} else {
		r.log("SIGSTOP the leader, m%d, for 10 s", leader)
		paused := time.Now()
		m.procs[leader].pause(true)
		time.Sleep(10 * time.Second)
		m.procs[leader].pause(false)
		r.pauses = append(r.pauses, [2]time.Time{paused, time.Now()})
		r.log("SIGCONT m%d", leader)
	}
	time.Sleep(10 * time.Second)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	status, err := etcd.Get(cctx, "compact_rev_key")
	if err == nil {
		_, err = etcd.Compact(cctx, status.Header.Revision)
		r.log("compacted at revision %d, the newest", status.Header.Revision)
	}
	cancel()
	if err != nil {
		fail("compaction: %v", err)
	}
	time.Sleep(10 * time.Second)
	close(stop)
	load.Wait()
	r.log("load stopped")

	// What each observer ends with, against a final list.
	final, err := w.client.CoreV1().ConfigMaps(faultNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return append(failures, fmt.Sprintf("final list: %v", err))
	}
	stored := map[string]string{}
	for _, cm := range final.Items {
		stored[cm.Name] = cm.ResourceVersion + "/" + cm.Data["n"]
	}
	informerView := func() map[string]string {
		view := map[string]string{}
		for _, obj := range informer.GetStore().List() {
			cm := obj.(*corev1.ConfigMap)
			view[cm.Name] = cm.ResourceVersion + "/" + cm.Data["n"]
		}
		return view
	}
	if err := eventually(30*time.Second, func() error {
		if got := informerView(); fmt.Sprint(got) != fmt.Sprint(stored) {
			return fmt.Errorf("the informer holds %d objects, the final list %d; first difference: %s", len(got), len(stored), firstDifference(got, stored))
		}
		return nil
	}); err != nil {
		fail("informer: %v", err)
	}
	finalRV, _ := strconv.ParseUint(final.ResourceVersion, 10, 64)
	if err := eventually(30*time.Second, func() error {
		r.mu.Lock()
		seen := map[string]bool{}
		for _, e := range r.watched {
			if cm, ok := e.Object.(*corev1.ConfigMap); ok {
				seen[cm.Name+"@"+cm.ResourceVersion] = true
			}
		}
		r.mu.Unlock()
		for _, cm := range final.Items {
			if !seen[cm.Name+"@"+cm.ResourceVersion] {
				return fmt.Errorf("the watch has not delivered %s at %s (final list at %d)", cm.Name, cm.ResourceVersion, finalRV)
			}
		}
		return nil
	}); err != nil {
		fail("watch: %v", err)
	}
	watcher.Stop()
	<-watchDone
	r.checkWatch(fail)
	r.checkErrors(fail)
	fmt.Printf("      %d writes acknowledged, %d failed; %d watch events; kubectl failed %d times\n", len(r.acks), len(r.fails), len(r.watched), len(r.kubectl))
	// Hark proposes a write again to the next leader once it is certain
	// the one a dead or paused leader held never applies: how often.
	again, seen := 0.0, false
	for _, metrics := range m.metrics {
		if v, ok := scrape(metrics + "/metrics")["hark_raft_proposals_proposed_again_total"]; ok {
			again, seen = again+v, true
		}
	}
	if seen {
		fmt.Printf("      writes proposed again to a later leader (counted since each member's start): %.0f\n", again)
	}
	return failures
}

func firstDifference(a, b map[string]string) string {
	var names []string
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		if a[n] != b[n] {
			return fmt.Sprintf("%s: %q against %q", n, a[n], b[n])
		}
	}
	return "none"
}

// checkWatch: the watch opened before the first write delivered every
// acknowledged write exactly once, in resourceVersion order.
func (r *faultRun) checkWatch(fail func(string, ...any)) {
	delivered := map[string]int{}
	last := uint64(0)
	for i, e := range r.watched {
		if e.Type == watch.Error {
			fail("the watch got an error event: %#v", e.Object)
			continue
		}
		cm, ok := e.Object.(*corev1.ConfigMap)
		if !ok {
			fail("watch event %d is a %T", i, e.Object)
			continue
		}
		rv, _ := strconv.ParseUint(cm.ResourceVersion, 10, 64)
		if rv <= last {
			fail("watch event %d (%s %s at %d) is not after %d", i, e.Type, cm.Name, rv, last)
		}
		last = rv
		delivered[cm.Name+"@"+cm.ResourceVersion]++
	}
	lost := 0
	for _, a := range r.acks {
		switch n := delivered[a.name+"@"+a.rv]; {
		case n == 0:
			if lost < 5 {
				fail("acknowledged write %s at %s (n=%s) never came on the watch", a.name, a.rv, a.value)
			}
			lost++
		case n > 1:
			fail("acknowledged write %s at %s came %d times", a.name, a.rv, n)
		}
	}
	if lost > 0 {
		fail("%d acknowledged writes missing from the watch", lost)
	}
}

// checkErrors: no 5xx (nor unanswered request) later than a second after
// a kill, or outside the faults; kubectl never failed. A write caught by
// the pause may time out on etcd up to the request timeout (7 s) after the
// leader resumes: forwarded to the paused leader, or queued in its socket
// and proposed at its old term once it resumes (Hark proposes such a
// write again to the next leader). Those are counted and shown, not
// judged.
func (r *faultRun) checkErrors(fail func(string, ...any)) {
	within := func(at, from, to time.Time) bool { return !at.Before(from) && !at.After(to) }
	duringKill, duringPause := 0, 0
	for _, f := range r.fails {
		if f.code != 0 && f.code < 500 {
			continue // a 409 after an unacknowledged write: expected
		}
		inKill, inPause := false, false
		for _, k := range r.kills {
			inKill = inKill || within(f.at, k, k.Add(time.Second))
		}
		for _, p := range r.pauses {
			inPause = inPause || within(f.at, p[0], p[1].Add(pauseTimeoutWindow))
		}
		switch {
		case inKill:
			duringKill++
		case inPause:
			duringPause++
			fmt.Printf("      during the pause, %s: HTTP %d: %s\n", f.at.Format("15:04:05.000"), f.code, f.what)
		default:
			fail("%s: HTTP %d: %s", f.at.Format("15:04:05.000"), f.code, f.what)
		}
	}
	fmt.Printf("      5xx within a second of the kill: %d; during the pause: %d\n", duringKill, duringPause)
	for _, f := range r.kubectl {
		fail("%s: kubectl get failed: %s", f.at.Format("15:04:05.000"), f.what)
	}
}
