package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	namespace = "hark-workload"
	// The label every object the workload lists carries.
	workloadLabel = "app=hark-workload"
	configMaps    = 60
)

var widgets = schema.GroupVersionResource{Group: "hark.test", Version: "v1", Resource: "widgets"}

// workload is item 1's scripted run: every step through kubectl or
// client-go, every result checked.
type workload struct {
	ctx        context.Context
	kubectl    string
	kubeconfig string
	dir        string
	client     *kubernetes.Clientset
	dynamic    *dynamic.DynamicClient
	config     *rest.Config
	failures   []string
}

func newWorkload(ctx context.Context, kubectl, kubeconfig, dir string) (*workload, error) {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	// No client-side limiter (client-go's default is 5 requests/s): the
	// benchmark measures the servers, not the limiter.
	config.QPS = -1
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	return &workload{ctx: ctx, kubectl: kubectl, kubeconfig: kubeconfig, dir: dir, client: client, dynamic: dyn, config: config}, nil
}

// step runs one checked step and reports it.
func (w *workload) step(name string, body func() error) {
	start := time.Now()
	if err := body(); err != nil {
		fmt.Printf("FAIL  %-58s %6.1fs  %v\n", name, time.Since(start).Seconds(), err)
		w.failures = append(w.failures, name)
		return
	}
	fmt.Printf("ok    %-58s %6.1fs\n", name, time.Since(start).Seconds())
}

// run runs kubectl with the admin kubeconfig; its combined output.
func (w *workload) run(stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(w.ctx, w.kubectl, append([]string{"--kubeconfig=" + w.kubeconfig}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

func expectOutput(out, want string) error {
	if strings.TrimSpace(out) != want {
		return fmt.Errorf("got %q, want %q", strings.TrimSpace(out), want)
	}
	return nil
}

// eventually retries check until it passes or within elapses.
func eventually(within time.Duration, check func() error) error {
	deadline := time.Now().Add(within)
	for {
		err := check()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (w *workload) all() []string {
	w.step("namespace created by kubectl, Active", w.namespace)
	w.step(fmt.Sprintf("%d ConfigMaps created, read back", configMaps), w.configMaps)
	w.step("Secret created by kubectl, read back decoded", w.secret)
	w.step("Deployment: ReplicaSet and 3 Pods appear", w.deployment)
	w.step("CRD established; 10 custom resources round-trip", w.customResources)
	w.step("server-side apply: update, conflict, forced takeover", w.serverSideApply)
	w.step("list with limit/continue: 9 pages, one revision", w.paging)
	w.step("watch from a resourceVersion: ADDED, MODIFIED, DELETED", w.watchFromRV)
	w.step("watch-list (sendInitialEvents): every object, then the bookmark", w.watchList)
	w.step("consistent list served from the watch cache", w.consistentListFromCache)
	w.step("delete with preconditions: stale refused, current accepted", w.preconditionedDelete)
	return w.failures
}

func (w *workload) namespace() error {
	out, err := w.run("", "create", "namespace", namespace)
	if err != nil {
		return err
	}
	if err := expectOutput(out, "namespace/"+namespace+" created"); err != nil {
		return err
	}
	ns, err := w.client.CoreV1().Namespaces().Get(w.ctx, namespace, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if ns.Status.Phase != corev1.NamespaceActive {
		return fmt.Errorf("phase %q", ns.Status.Phase)
	}
	// Pods need the namespace's default ServiceAccount (the controller-manager makes it).
	return eventually(60*time.Second, func() error {
		_, err := w.client.CoreV1().ServiceAccounts(namespace).Get(w.ctx, "default", metav1.GetOptions{})
		return err
	})
}

func configMapName(i int) string { return fmt.Sprintf("cm-%03d", i) }

func (w *workload) configMaps() error {
	for i := range configMaps {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: configMapName(i), Labels: map[string]string{"app": "hark-workload"}},
			Data:       map[string]string{"index": strconv.Itoa(i)},
		}
		if _, err := w.client.CoreV1().ConfigMaps(namespace).Create(w.ctx, cm, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	out, err := w.run("", "get", "configmaps", "-n", namespace, "-l", workloadLabel,
		"-o", `jsonpath={range .items[*]}{.metadata.name}={.data.index}{"\n"}{end}`)
	if err != nil {
		return err
	}
	lines := strings.Fields(out)
	if len(lines) != configMaps {
		return fmt.Errorf("kubectl listed %d ConfigMaps, want %d", len(lines), configMaps)
	}
	for i, line := range lines {
		if want := fmt.Sprintf("%s=%d", configMapName(i), i); line != want {
			return fmt.Errorf("item %d is %q, want %q", i, line, want)
		}
	}
	return nil
}

func (w *workload) secret() error {
	if _, err := w.run("", "create", "secret", "generic", "login", "-n", namespace, "--from-literal=password=hunter2"); err != nil {
		return err
	}
	s, err := w.client.CoreV1().Secrets(namespace).Get(w.ctx, "login", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if string(s.Data["password"]) != "hunter2" || s.Type != corev1.SecretTypeOpaque {
		return fmt.Errorf("secret read back as type %q, data %q", s.Type, s.Data)
	}
	return nil
}

func (w *workload) deployment() error {
	if _, err := w.run("", "create", "deployment", "web", "-n", namespace, "--image=registry.k8s.io/pause:3.10", "--replicas=3"); err != nil {
		return err
	}
	d, err := w.client.AppsV1().Deployments(namespace).Get(w.ctx, "web", metav1.GetOptions{})
	if err != nil {
		return err
	}
	return eventually(90*time.Second, func() error {
		sets, err := w.client.AppsV1().ReplicaSets(namespace).List(w.ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		var owned *appsv1.ReplicaSet
		for i := range sets.Items {
			if ownedBy(sets.Items[i].OwnerReferences, d.UID) {
				owned = &sets.Items[i]
			}
		}
		if owned == nil {
			return fmt.Errorf("no ReplicaSet owned by the Deployment yet")
		}
		pods, err := w.client.CoreV1().Pods(namespace).List(w.ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		n := 0
		for _, p := range pods.Items {
			if ownedBy(p.OwnerReferences, owned.UID) {
				n++
			}
		}
		// No scheduler or kubelet runs: the Pods exist and stay Pending.
		if n != 3 || owned.Status.Replicas != 3 {
			return fmt.Errorf("ReplicaSet %s: status.replicas %d, %d Pods owned, want 3 and 3", owned.Name, owned.Status.Replicas, n)
		}
		return nil
	})
}

func ownedBy(refs []metav1.OwnerReference, uid types.UID) bool {
	for _, r := range refs {
		if r.UID == uid {
			return true
		}
	}
	return false
}

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.hark.test
spec:
  group: hark.test
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
`

func (w *workload) customResources() error {
	if _, err := w.run(widgetCRD, "apply", "-f", "-"); err != nil {
		return err
	}
	if _, err := w.run("", "wait", "--for=condition=Established", "crd/widgets.hark.test", "--timeout=60s"); err != nil {
		return err
	}
	for i := range 10 {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "hark.test/v1",
			"kind":       "Widget",
			"metadata":   map[string]any{"name": fmt.Sprintf("w-%d", i)},
			"spec":       map[string]any{"size": int64(i * 10)},
		}}
		// The new resource's discovery and storage can take a moment.
		err := eventually(30*time.Second, func() error {
			_, err := w.dynamic.Resource(widgets).Namespace(namespace).Create(w.ctx, obj, metav1.CreateOptions{})
			return err
		})
		if err != nil {
			return err
		}
	}
	out, err := w.run("", "get", "widgets", "-n", namespace, "-o", `jsonpath={range .items[*]}{.metadata.name}={.spec.size}{" "}{end}`)
	if err != nil {
		return err
	}
	got := strings.Fields(out)
	sort.Strings(got)
	var want []string
	for i := range 10 {
		want = append(want, fmt.Sprintf("w-%d=%d", i, i*10))
	}
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		return fmt.Errorf("widgets %v, want %v", got, want)
	}
	return nil
}

func applied(value string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: %s\ndata:\n  a: %q\n", namespace, value)
}

func (w *workload) appliedValue() (string, []string, error) {
	cm, err := w.client.CoreV1().ConfigMaps(namespace).Get(w.ctx, "applied", metav1.GetOptions{})
	if err != nil {
		return "", nil, err
	}
	var managers []string
	for _, f := range cm.ManagedFields {
		managers = append(managers, fmt.Sprintf("%s/%s", f.Manager, f.Operation))
	}
	sort.Strings(managers)
	return cm.Data["a"], managers, nil
}

func (w *workload) serverSideApply() error {
	for _, v := range []string{"1", "2"} {
		if _, err := w.run(applied(v), "apply", "--server-side", "--field-manager=alice", "-f", "-"); err != nil {
			return err
		}
	}
	value, managers, err := w.appliedValue()
	if err != nil {
		return err
	}
	if value != "2" || strings.Join(managers, ",") != "alice/Apply" {
		return fmt.Errorf("after alice's applies: a=%q, managers %v", value, managers)
	}
	out, err := w.run(applied("3"), "apply", "--server-side", "--field-manager=bob", "-f", "-")
	if err == nil || !strings.Contains(out, "conflict") {
		return fmt.Errorf("bob's apply over alice's field was not refused as a conflict: %v %q", err, out)
	}
	if _, err := w.run(applied("3"), "apply", "--server-side", "--field-manager=bob", "--force-conflicts", "-f", "-"); err != nil {
		return err
	}
	value, managers, err = w.appliedValue()
	if err != nil {
		return err
	}
	if value != "3" || strings.Join(managers, ",") != "bob/Apply" {
		return fmt.Errorf("after bob's forced apply: a=%q, managers %v", value, managers)
	}
	return nil
}

func (w *workload) paging() error {
	opts := metav1.ListOptions{LabelSelector: workloadLabel, Limit: 7}
	seen := map[string]bool{}
	pages, revision := 0, ""
	for {
		list, err := w.client.CoreV1().ConfigMaps(namespace).List(w.ctx, opts)
		if err != nil {
			return err
		}
		pages++
		if revision == "" {
			revision = list.ResourceVersion
		} else if list.ResourceVersion != revision {
			return fmt.Errorf("page %d at resourceVersion %s, the first at %s", pages, list.ResourceVersion, revision)
		}
		for _, cm := range list.Items {
			if seen[cm.Name] {
				return fmt.Errorf("%s listed twice", cm.Name)
			}
			seen[cm.Name] = true
		}
		// Written between pages: a paginated list is one snapshot.
		if pages == 1 {
			extra := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "zz-between-pages", Labels: map[string]string{"app": "hark-workload"}}}
			if _, err := w.client.CoreV1().ConfigMaps(namespace).Create(w.ctx, extra, metav1.CreateOptions{}); err != nil {
				return err
			}
		}
		if list.Continue == "" {
			break
		}
		opts.Continue = list.Continue
	}
	if err := w.client.CoreV1().ConfigMaps(namespace).Delete(w.ctx, "zz-between-pages", metav1.DeleteOptions{}); err != nil {
		return err
	}
	if len(seen) != configMaps || pages != (configMaps+6)/7 {
		return fmt.Errorf("%d ConfigMaps in %d pages, want %d in %d", len(seen), pages, configMaps, (configMaps+6)/7)
	}
	return nil
}

func (w *workload) watchFromRV() error {
	cms := w.client.CoreV1().ConfigMaps(namespace)
	list, err := cms.List(w.ctx, metav1.ListOptions{LabelSelector: workloadLabel, Limit: 1})
	if err != nil {
		return err
	}
	from := list.ResourceVersion
	created, err := cms.Create(w.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "watched"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	created.Data["v"] = "2"
	updated, err := cms.Update(w.ctx, created, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	if err := cms.Delete(w.ctx, "watched", metav1.DeleteOptions{}); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(w.ctx, 30*time.Second)
	defer cancel()
	watcher, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: from, FieldSelector: fields.OneTermEqualSelector("metadata.name", "watched").String()})
	if err != nil {
		return err
	}
	defer watcher.Stop()
	want := []struct {
		kind  watch.EventType
		value string
		rv    string
	}{{watch.Added, "1", created.ResourceVersion}, {watch.Modified, "2", updated.ResourceVersion}, {watch.Deleted, "2", ""}}
	for i, expect := range want {
		select {
		case e, ok := <-watcher.ResultChan():
			if !ok {
				return fmt.Errorf("the watch ended after %d events", i)
			}
			cm, isCM := e.Object.(*corev1.ConfigMap)
			if e.Type != expect.kind || !isCM || cm.Data["v"] != expect.value || (expect.rv != "" && cm.ResourceVersion != expect.rv) {
				return fmt.Errorf("event %d: %s %#v, want %s v=%s rv=%s", i, e.Type, e.Object, expect.kind, expect.value, expect.rv)
			}
		case <-ctx.Done():
			return fmt.Errorf("event %d did not come within 30 s", i)
		}
	}
	return nil
}

func (w *workload) watchList() error {
	send := true
	ctx, cancel := context.WithTimeout(w.ctx, 60*time.Second)
	defer cancel()
	watcher, err := w.client.CoreV1().ConfigMaps(namespace).Watch(ctx, metav1.ListOptions{
		LabelSelector:        workloadLabel,
		SendInitialEvents:    &send,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
	})
	if err != nil {
		return err
	}
	defer watcher.Stop()
	added := map[string]bool{}
	for {
		select {
		case e, ok := <-watcher.ResultChan():
			if !ok {
				return fmt.Errorf("the watch ended after %d initial events", len(added))
			}
			switch e.Type {
			case watch.Added:
				name := e.Object.(*corev1.ConfigMap).Name
				if added[name] {
					return fmt.Errorf("%s came twice among the initial events", name)
				}
				added[name] = true
			case watch.Bookmark:
				cm := e.Object.(*corev1.ConfigMap)
				if cm.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
					continue // a plain bookmark before the end of the initial events
				}
				if len(added) != configMaps {
					return fmt.Errorf("initial events ended after %d objects, want %d", len(added), configMaps)
				}
				return nil
			default:
				return fmt.Errorf("unexpected %s event among the initial ones: %#v", e.Type, e.Object)
			}
		case <-ctx.Done():
			return fmt.Errorf("no end-of-initial-events bookmark within 60 s (%d objects)", len(added))
		}
	}
}

// consistentReads reads the apiserver's count of consistent ConfigMap
// lists it served from its watch cache without falling back to etcd.
func (w *workload) consistentReads() (float64, error) {
	body, err := w.client.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(w.ctx)
	if err != nil {
		return 0, err
	}
	total := 0.0
	scanner := bufio.NewScanner(strings.NewReader(string(body)))
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if strings.HasPrefix(line, "apiserver_watch_cache_consistent_read_total{") &&
			strings.Contains(line, `resource="configmaps"`) && strings.Contains(line, `success="true"`) &&
			strings.Contains(line, `fallback="false"`) {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				return 0, err
			}
			total += v
		}
	}
	return total, scanner.Err()
}

func (w *workload) consistentListFromCache() error {
	before, err := w.consistentReads()
	if err != nil {
		return err
	}
	// resourceVersion unset: a consistent (quorum) list, which 1.34+ serves
	// from the watch cache once a progress notification proves it current.
	list, err := w.client.CoreV1().ConfigMaps(namespace).List(w.ctx, metav1.ListOptions{LabelSelector: workloadLabel})
	if err != nil {
		return err
	}
	if len(list.Items) != configMaps {
		return fmt.Errorf("%d items, want %d", len(list.Items), configMaps)
	}
	after, err := w.consistentReads()
	if err != nil {
		return err
	}
	if after <= before {
		return fmt.Errorf("apiserver_watch_cache_consistent_read_total{resource=configmaps,success=true,fallback=false} stayed at %v", after)
	}
	return nil
}

func (w *workload) preconditionedDelete() error {
	cms := w.client.CoreV1().ConfigMaps(namespace)
	cm, err := cms.Get(w.ctx, configMapName(0), metav1.GetOptions{})
	if err != nil {
		return err
	}
	stale := cm.ResourceVersion
	cm.Data["index"] = "changed"
	cm, err = cms.Update(w.ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	err = cms.Delete(w.ctx, cm.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}})
	if !apierrors.IsConflict(err) {
		return fmt.Errorf("delete at the stale resourceVersion %s: %v, want a conflict", stale, err)
	}
	uid, current := cm.UID, cm.ResourceVersion
	if err := cms.Delete(w.ctx, cm.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &current}}); err != nil {
		return err
	}
	if _, err := cms.Get(w.ctx, cm.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		return fmt.Errorf("after the delete: %v, want NotFound", err)
	}
	return nil
}
