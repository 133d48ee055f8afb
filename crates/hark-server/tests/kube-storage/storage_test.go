// The Kubernetes API server's storage conformance tests, run against any
// etcd v3 server: the generic tests of k8s.io/apiserver/pkg/storage/testing,
// each on the apiserver's own etcd3 storage layer over a clientv3.
//
// Every store gets a fresh cluster of three members of $KUBE_STORAGE_SERVER
// (Hark's or etcd's binary: both take etcd's flags), as the apiserver's own
// tests give each store a fresh embedded etcd: several tests compare
// revisions, compaction and error texts that only a fresh server makes
// predictable. `cargo xtask kube-storage` runs the package with etcd, then
// with Hark. The test names follow the apiserver's own
// (k8s.io/apiserver/pkg/storage/etcd3's TestX), so the tables read side by
// side.
package kubestorage

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/kubernetes"
	"k8s.io/apimachinery/pkg/api/apitesting"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/apis/example"
	examplev1 "k8s.io/apiserver/pkg/apis/example/v1"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	etcdfeature "k8s.io/apiserver/pkg/storage/feature"
	storagetesting "k8s.io/apiserver/pkg/storage/testing"
	"k8s.io/apiserver/pkg/storage/value"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/utils/clock"
)

// The bytes the test transformer puts in front of every stored object.
const transformerPrefix = "test!"

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
)

func init() {
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	utilruntime.Must(example.AddToScheme(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))
}

// swappable is the transformer the store holds: the tests that corrupt or
// re-key stored data swap what it delegates to, as the apiserver's own tests
// do by reaching into the store's private fields.
type swappable struct {
	current atomic.Pointer[value.Transformer]
}

func newSwappable(t value.Transformer) *swappable {
	s := &swappable{}
	s.current.Store(&t)
	return s
}

func (s *swappable) get() value.Transformer { return *s.current.Load() }

func (s *swappable) set(t value.Transformer) { s.current.Store(&t) }

func (s *swappable) TransformFromStorage(ctx context.Context, data []byte, dataCtx value.Context) ([]byte, bool, error) {
	return s.get().TransformFromStorage(ctx, data, dataCtx)
}

func (s *swappable) TransformToStorage(ctx context.Context, data []byte, dataCtx value.Context) ([]byte, error) {
	return s.get().TransformToStorage(ctx, data, dataCtx)
}

// failingCodec fails every decode while its switch is on.
type failingCodec struct {
	runtime.Codec
	fail atomic.Bool
}

func (c *failingCodec) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if c.fail.Load() {
		return nil, nil, errors.New("decode switched off by the test")
	}
	return c.Codec.Decode(data, defaults, into)
}

// failingTransformer fails every read while its switch is on.
type failingTransformer struct {
	value.Transformer
	fail atomic.Bool
}

func (f *failingTransformer) TransformFromStorage(ctx context.Context, data []byte, dataCtx value.Context) ([]byte, bool, error) {
	if f.fail.Load() {
		return nil, false, errors.New("transform switched off by the test")
	}
	return f.Transformer.TransformFromStorage(ctx, data, dataCtx)
}

// The store under test with what the tests reach for beside it.
type setup struct {
	ctx         context.Context
	client      *kubernetes.Client
	recorder    *storagetesting.KVRecorder
	lists       *storagetesting.KubernetesRecorder
	store       storage.Interface
	codec       runtime.Codec
	transformer *swappable
	// The transformer the store starts with; it counts reads.
	prefixTransformer *storagetesting.PrefixTransformer
}

type option func(*options)

type options struct {
	codec       runtime.Codec
	transformer value.Transformer
	serverFlags []string
}

func withCodec(c runtime.Codec) option { return func(o *options) { o.codec = c } }

func withTransformer(t value.Transformer) option { return func(o *options) { o.transformer = t } }

// withProgressEverySecond gives the cluster a 1 s progress-notify interval,
// as the apiserver's own progress and bookmark tests give their etcd.
func withProgressEverySecond() option {
	return func(o *options) {
		o.serverFlags = append(o.serverFlags, "--watch-progress-notify-interval=1s")
	}
}

// startCluster starts three members of $KUBE_STORAGE_SERVER on fresh data
// dirs and free loopback ports, waits until each one knows its leader, and
// returns their client URLs. The members are killed when the test ends; a
// failed test logs the end of each member's log.
func startCluster(t *testing.T, extra ...string) []string {
	t.Helper()
	binary := os.Getenv("KUBE_STORAGE_SERVER")
	if binary == "" {
		t.Fatal("KUBE_STORAGE_SERVER names no server binary (Hark's or etcd's)")
	}
	ports := freePorts(t, 6)
	var initial, endpoints []string
	for i := range 3 {
		initial = append(initial, fmt.Sprintf("m%d=http://127.0.0.1:%d", i, ports[2*i+1]))
	}
	dir := t.TempDir()
	for i := range 3 {
		client := fmt.Sprintf("http://127.0.0.1:%d", ports[2*i])
		peer := fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1])
		args := append([]string{
			fmt.Sprintf("--name=m%d", i),
			"--data-dir=" + filepath.Join(dir, fmt.Sprintf("m%d.data", i)),
			"--listen-client-urls=" + client,
			"--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer,
			"--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=" + strings.Join(initial, ","),
			"--initial-cluster-state=new",
			"--log-level=warn",
		}, extra...)
		logPath := filepath.Join(dir, fmt.Sprintf("m%d.log", i))
		log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(binary, args...)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting %s: %v", binary, err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			_ = log.Close()
			if t.Failed() {
				logTail(t, logPath)
			}
		})
		endpoints = append(endpoints, client)
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, endpoint := range endpoints {
		for !knowsLeader(endpoint) {
			if time.Now().After(deadline) {
				t.Fatalf("%s did not serve within 60 s", endpoint)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return endpoints
}

// freePorts finds n free loopback ports, holding all of them open until
// the last is found so none is picked twice.
func freePorts(t *testing.T, n int) []int {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

func knowsLeader(endpoint string) bool {
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: time.Second})
	if err != nil {
		return false
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	status, err := c.Status(ctx, endpoint)
	return err == nil && status.Leader != 0
}

func logTail(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	t.Logf("the last lines of %s:\n%s", filepath.Base(path), strings.Join(lines[max(0, len(lines)-20):], "\n"))
}

func newSetup(t *testing.T, opts ...option) *setup {
	t.Helper()
	o := options{codec: apitesting.TestCodec(codecs, examplev1.SchemeGroupVersion)}
	prefixTransformer := storagetesting.NewPrefixTransformer([]byte(transformerPrefix), false)
	o.transformer = prefixTransformer
	for _, opt := range opts {
		opt(&o)
	}
	client, err := kubernetes.New(clientv3.Config{Endpoints: startCluster(t, o.serverFlags...), DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	lists := storagetesting.NewKubernetesRecorder(client.Kubernetes)
	recorder := storagetesting.NewKVRecorder(client.KV, lists)
	client.KV = recorder
	client.Kubernetes = lists

	versioner := storage.APIObjectVersioner{}
	compactor := etcd3.NewCompactor(client.Client, 0, clock.RealClock{}, nil)
	t.Cleanup(compactor.Stop)
	lease := etcd3.NewDefaultLeaseManagerConfig()
	// The apiserver's tests shorten lease reuse to 1 s: TTL tests wait it out.
	lease.ReuseDurationSeconds = 1
	transformer := newSwappable(o.transformer)
	s, err := etcd3.New(client, compactor, o.codec,
		func() runtime.Object { return &example.Pod{} },
		func() runtime.Object { return &example.PodList{} },
		"", "/pods/", schema.GroupResource{Resource: "pods"}, transformer, lease,
		etcd3.NewDefaultDecoder(o.codec, versioner), versioner)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return &setup{
		ctx:               context.Background(),
		client:            client,
		recorder:          recorder,
		lists:             lists,
		store:             s,
		codec:             o.codec,
		transformer:       transformer,
		prefixTransformer: prefixTransformer,
	}
}

// withPrefixTransformer lets a test re-key the store's prefix transformer.
type withPrefixTransformer struct {
	storage.Interface
	s *setup
}

func (w withPrefixTransformer) UpdatePrefixTransformer(modify storagetesting.PrefixTransformerModifier) func() {
	original := w.s.transformer.get()
	current, ok := original.(*storagetesting.PrefixTransformer)
	if !ok {
		panic("the store's transformer is not the test's prefix transformer")
	}
	copied := *current
	w.s.transformer.set(modify(&copied))
	return func() { w.s.transformer.set(original) }
}

// withTransformerOverride lets a test wrap the store's transformer.
type withTransformerOverride struct {
	storage.Interface
	s *setup
}

func (w withTransformerOverride) UpdateTransformer(modify storagetesting.TransformerModifier) func() {
	original := w.s.transformer.get()
	w.s.transformer.set(modify(original))
	return func() { w.s.transformer.set(original) }
}

// storedObjectIsClean is the create/update check: the object stored under
// key decodes, and carries neither a resourceVersion nor a selfLink.
func (s *setup) storedObjectIsClean() storagetesting.KeyValidation {
	return func(ctx context.Context, t *testing.T, key string) {
		// The store's path prefix is "/": its keys are the etcd keys.
		etcdKey := key
		resp, err := s.client.Client.KV.Get(ctx, etcdKey)
		if err != nil {
			t.Fatalf("get %s: %v", etcdKey, err)
		}
		if len(resp.Kvs) != 1 {
			t.Fatalf("get %s: %d keys, want 1", etcdKey, len(resp.Kvs))
		}
		stored := resp.Kvs[0].Value
		if !strings.HasPrefix(string(stored), transformerPrefix) {
			t.Fatalf("%s is stored without the transformer's prefix: %q", etcdKey, stored)
		}
		obj, err := runtime.Decode(s.codec, stored[len(transformerPrefix):])
		if err != nil {
			t.Fatalf("decode %s: %v", etcdKey, err)
		}
		pod := obj.(*example.Pod)
		if pod.ResourceVersion != "" {
			t.Errorf("%s is stored with resourceVersion %q", etcdKey, pod.ResourceVersion)
		}
		if pod.SelfLink != "" {
			t.Errorf("%s is stored with selfLink %q", etcdKey, pod.SelfLink)
		}
	}
}

// compact compacts the cluster to resourceVersion the way the apiserver's
// compactor does (through compact_rev_key), then, when lists are served
// from the cache snapshot, waits until the store has seen it.
func (s *setup) compact() storagetesting.Compaction {
	return func(ctx context.Context, t *testing.T, resourceVersion string) {
		rv, err := storage.APIObjectVersioner{}.ParseResourceVersion(resourceVersion)
		if err != nil {
			t.Fatal(err)
		}
		// A fresh cluster: compact_rev_key is at version 0 before the first
		// compaction. A retry (after an error) takes the version learnt.
		current, _, _, err := etcd3.Compact(ctx, s.client.Client, 0, int64(rv))
		if err != nil {
			_, _, _, err = etcd3.Compact(ctx, s.client.Client, current, int64(rv))
		}
		if err != nil {
			t.Fatal(err)
		}
		if !utilfeature.DefaultFeatureGate.Enabled(features.ListFromCacheSnapshot) {
			return
		}
		seen := s.store.(interface{ CompactRevision() int64 })
		deadline := time.Now().Add(30 * time.Second)
		for seen.CompactRevision() != int64(rv) {
			if time.Now().After(deadline) {
				t.Fatalf("the store did not see the compaction to %d within 30 s", rv)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// increaseRV writes an unrelated key and returns the revision it made.
func (s *setup) increaseRV() storagetesting.IncreaseRVFunc {
	return func(ctx context.Context, t *testing.T) int64 {
		resp, err := s.client.Client.KV.Put(ctx, "increaseRV", "ok")
		if err != nil {
			t.Fatalf("put increaseRV: %v", err)
		}
		return resp.Header.Revision
	}
}

// readsAsEstimated is the pagination check: the transformer read exactly the
// objects the test expects, through the number of range calls its page-size
// doubling (up to the apiserver's maximum page of 10,000) needs.
func (s *setup) readsAsEstimated() storagetesting.CallsValidation {
	const maxPage = 10000
	return func(t *testing.T, pageSize, estimatedProcessedObjects uint64) {
		if reads := s.prefixTransformer.GetReadsAndReset(); reads != estimatedProcessedObjects {
			t.Errorf("transformer reads: %d, want %d", reads, estimatedProcessedObjects)
		}
		calls := uint64(1)
		if pageSize != 0 {
			page := pageSize
			for read := uint64(1); read < estimatedProcessedObjects; calls++ {
				page = min(page*2, maxPage)
				read += page
			}
		}
		if got := s.recorder.GetReadsAndReset() + s.recorder.GetStreamReadsAndReset(); got != calls {
			t.Fatalf("range calls: %d, want %d", got, calls)
		}
	}
}

// keys lists the etcd keys of the store's objects, for the size estimator.
func (s *setup) keys(ctx context.Context) ([]string, error) {
	resp, err := s.client.Client.KV.Get(ctx, "/pods/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		keys = append(keys, string(kv.Key))
	}
	return keys, nil
}

// corruptObjectError is the error the apiserver's corrupt-object handling
// wraps an unreadable object in; its type is private to etcd3, so it is
// taken from the wrapping transformer itself.
func corruptObjectError(t *testing.T) error {
	broken := &failingTransformer{Transformer: storagetesting.NewPrefixTransformer([]byte(transformerPrefix), false)}
	broken.fail.Store(true)
	_, _, err := etcd3.WithCorruptObjErrorHandlingTransformer(broken).TransformFromStorage(context.Background(), []byte("x"), value.DefaultContext(nil))
	if err == nil {
		t.Fatal("the corrupt-object transformer passed a failing read")
	}
	return err
}

// resetFeatureSupport gives the test a fresh record of what the server
// supports (progress requests, RangeStream), as a new apiserver would.
func resetFeatureSupport(t *testing.T) {
	saved := etcdfeature.DefaultFeatureSupportChecker
	etcdfeature.DefaultFeatureSupportChecker = etcdfeature.NewDefaultFeatureSupportChecker()
	t.Cleanup(func() { etcdfeature.DefaultFeatureSupportChecker = saved })
}

// withRangeStream runs body once with lists over Range pages and once over
// RangeStream, checking that the streamed run did stream.
func withRangeStream(t *testing.T, body func(t *testing.T, s *setup)) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("rangeStream=%v", stream), func(t *testing.T) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.EtcdRangeStream, stream)
			resetFeatureSupport(t)
			s := newSetup(t)
			body(t, s)
			streamed := s.recorder.GetStreamReadsAndReset()
			if stream && streamed == 0 {
				t.Error("no list was served by RangeStream")
			}
			if !stream && streamed > 0 {
				t.Errorf("%d lists used RangeStream with it switched off", streamed)
			}
		})
	}
}

func TestCreate(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestCreate(s.ctx, t, s.store, s.storedObjectIsClean())
}

func TestCreateWithTTL(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestCreateWithTTL(s.ctx, t, s.store)
}

func TestCreateWithKeyExist(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestCreateWithKeyExist(s.ctx, t, s.store)
}

func TestGet(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestGet(s.ctx, t, s.store)
}

func TestUnconditionalDelete(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestUnconditionalDelete(s.ctx, t, s.store)
}

func TestConditionalDelete(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestConditionalDelete(s.ctx, t, s.store)
}

func TestDeleteWithSuggestion(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestDeleteWithSuggestion(s.ctx, t, s.store)
}

func TestDeleteWithSuggestionAndConflict(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestDeleteWithSuggestionAndConflict(s.ctx, t, s.store)
}

func TestDeleteWithSuggestionOfDeletedObject(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestDeleteWithSuggestionOfDeletedObject(s.ctx, t, s.store)
}

func TestValidateDeletionWithSuggestion(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestValidateDeletionWithSuggestion(s.ctx, t, s.store)
}

func TestValidateDeletionWithOnlySuggestionValid(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestValidateDeletionWithOnlySuggestionValid(s.ctx, t, s.store)
}

func TestDeleteWithConflict(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestDeleteWithConflict(s.ctx, t, s.store)
}

func TestDeleteWithConflictAndMissingExpectedTransformOrDecodeError(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.AllowUnsafeMalformedObjectDeletion, true)
	codec := &failingCodec{Codec: apitesting.TestCodec(codecs, examplev1.SchemeGroupVersion)}
	s := newSetup(t, withCodec(codec))
	storagetesting.RunTestDeleteWithConflictAndMissingExpectedTransformOrDecodeError(s.ctx, t, s.store, codec.fail.Store)
}

func TestDeleteWithConflictAndExpectedTransformError(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.AllowUnsafeMalformedObjectDeletion, true)
	transformer := &failingTransformer{Transformer: storagetesting.NewPrefixTransformer([]byte(transformerPrefix), false)}
	s := newSetup(t, withTransformer(transformer))
	storagetesting.RunTestDeleteExpectedTransformOrDecodeError(s.ctx, t, s.store, transformer.fail.Store)
}

func TestDeleteWithConflictAndExpectedDecodeError(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.AllowUnsafeMalformedObjectDeletion, true)
	codec := &failingCodec{Codec: apitesting.TestCodec(codecs, examplev1.SchemeGroupVersion)}
	s := newSetup(t, withCodec(codec))
	storagetesting.RunTestDeleteExpectedTransformOrDecodeError(s.ctx, t, s.store, codec.fail.Store)
}

func TestDeleteWithSuggestionAndMissingExpectedTransformOrDecodeFailure(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.AllowUnsafeMalformedObjectDeletion, true)
	s := newSetup(t)
	storagetesting.RunTestDeleteWithSuggestionAndMissingExpectedTransformOrDecodeError(s.ctx, t, s.store)
}

func TestPreconditionalDeleteWithSuggestion(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestPreconditionalDeleteWithSuggestion(s.ctx, t, s.store)
}

func TestPreconditionalDeleteWithSuggestionPass(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestPreconditionalDeleteWithOnlySuggestionPass(s.ctx, t, s.store)
}

func TestListPaging(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestListPaging(s.ctx, t, s.store)
}

func TestGetListNonRecursive(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestGetListNonRecursive(s.ctx, t, s.increaseRV(), s.store)
}

func TestGetListRecursivePrefix(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestGetListRecursivePrefix(s.ctx, t, s.store)
}

func TestKeySchema(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestKeySchema(s.ctx, t, s.store)
}

func TestGetListWithErrorAggregation(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.AllowUnsafeMalformedObjectDeletion, true)
	s := newSetup(t)
	deleter := etcd3.NewStoreWithUnsafeCorruptObjectDeletion(s.store, schema.GroupResource{Resource: "pods"})
	storagetesting.RunTestGetListWithErrorAggregation(s.ctx, t, withTransformerOverride{Interface: deleter, s: s}, corruptObjectError(t))
}

func TestGetListWithoutErrorAggregation(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.AllowUnsafeMalformedObjectDeletion, false)
	s := newSetup(t)
	storagetesting.RunTestGetListWithoutErrorAggregation(s.ctx, t, withTransformerOverride{Interface: s.store, s: s}, corruptObjectError(t))
}

func TestGuaranteedUpdate(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestGuaranteedUpdate(s.ctx, t, withPrefixTransformer{Interface: s.store, s: s}, s.storedObjectIsClean())
}

func TestGuaranteedUpdateWithTTL(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestGuaranteedUpdateWithTTL(s.ctx, t, s.store)
}

func TestGuaranteedUpdateChecksStoredData(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestGuaranteedUpdateChecksStoredData(s.ctx, t, withPrefixTransformer{Interface: s.store, s: s})
}

func TestGuaranteedUpdateWithConflict(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestGuaranteedUpdateWithConflict(s.ctx, t, s.store)
}

func TestGuaranteedUpdateWithSuggestionAndConflict(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestGuaranteedUpdateWithSuggestionAndConflict(s.ctx, t, s.store)
}

func TestTransformationFailure(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestTransformationFailure(s.ctx, t, withPrefixTransformer{Interface: s.store, s: s})
}

func TestList(t *testing.T) {
	withRangeStream(t, func(t *testing.T, s *setup) {
		storagetesting.RunTestList(s.ctx, t, s.store, s.compact(), false, s.lists)
	})
}

func TestConsistentList(t *testing.T) {
	withRangeStream(t, func(t *testing.T, s *setup) {
		storagetesting.RunTestConsistentList(s.ctx, t, s.store, s.increaseRV(), false, true, false)
	})
}

func TestCompactRevision(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.ListFromCacheSnapshot, true)
	s := newSetup(t)
	storagetesting.RunTestCompactRevision(s.ctx, t, s.store, s.increaseRV(), s.compact())
}

func TestListContinuation(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestListContinuation(s.ctx, t, s.store, s.readsAsEstimated())
}

func TestListPaginationRareObject(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.ListFromCacheSnapshot, false)
	s := newSetup(t)
	storagetesting.RunTestListPaginationRareObject(s.ctx, t, s.store, s.readsAsEstimated())
}

func TestListContinuationWithFilter(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestListContinuationWithFilter(s.ctx, t, s.store, s.readsAsEstimated())
}

func TestNamespaceScopedList(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestNamespaceScopedList(s.ctx, t, s.store)
}

func TestListInconsistentContinuation(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestListInconsistentContinuation(s.ctx, t, s.store, s.compact())
}

func TestListResourceVersionMatch(t *testing.T) {
	s := newSetup(t)
	storagetesting.RunTestListResourceVersionMatch(s.ctx, t, withPrefixTransformer{Interface: s.store, s: s})
}

func TestStats(t *testing.T) {
	for _, sizeEstimate := range []bool{true, false} {
		t.Run(fmt.Sprintf("SizeBasedListCostEstimate=%v", sizeEstimate), func(t *testing.T) {
			s := newSetup(t)
			if sizeEstimate {
				estimating := s.store.(interface {
					EnableResourceSizeEstimation(storage.KeysFunc) error
				})
				if err := estimating.EnableResourceSizeEstimation(s.keys); err != nil {
					t.Fatal(err)
				}
			}
			storagetesting.RunTestStats(s.ctx, t, s.store, s.codec, s.transformer, sizeEstimate)
		})
	}
}

func TestWatch(t *testing.T) {
	plain := []struct {
		name string
		run  func(context.Context, *testing.T, storage.Interface)
	}{
		{"Watch", storagetesting.RunTestWatch},
		{"ClusterScopedWatch", storagetesting.RunTestClusterScopedWatch},
		{"NamespaceScopedWatch", storagetesting.RunTestNamespaceScopedWatch},
		{"DeleteTriggerWatch", storagetesting.RunTestDeleteTriggerWatch},
		{"WatchFromNonZero", storagetesting.RunTestWatchFromNonZero},
		{"DelayedWatchDelivery", storagetesting.RunTestDelayedWatchDelivery},
		{"WatchContextCancel", storagetesting.RunTestWatchContextCancel},
		{"WatcherTimeout", storagetesting.RunTestWatcherTimeout},
		{"WatchDeleteEventObjectHaveLatestRV", storagetesting.RunTestWatchDeleteEventObjectHaveLatestRV},
		{"WatchInitializationSignal", storagetesting.RunTestWatchInitializationSignal},
		{"SendInitialEventsBackwardCompatibility", storagetesting.RunSendInitialEventsBackwardCompatibility},
	}
	for _, test := range plain {
		t.Run(test.name, func(t *testing.T) {
			s := newSetup(t)
			test.run(s.ctx, t, s.store)
		})
	}
	t.Run("WatchFromZero", func(t *testing.T) {
		s := newSetup(t)
		storagetesting.RunTestWatchFromZero(s.ctx, t, s.store, s.compact())
	})
	t.Run("WatchError", func(t *testing.T) {
		s := newSetup(t)
		storagetesting.RunTestWatchError(s.ctx, t, withPrefixTransformer{Interface: s.store, s: s})
	})
	t.Run("ProgressNotify", func(t *testing.T) {
		s := newSetup(t, withProgressEverySecond())
		storagetesting.RunOptionalTestProgressNotify(s.ctx, t, s.store, s.increaseRV())
	})
	t.Run("WatchDispatchBookmarkEvents", func(t *testing.T) {
		s := newSetup(t, withProgressEverySecond())
		storagetesting.RunTestWatchDispatchBookmarkEvents(s.ctx, t, s.store, false)
	})
	t.Run("WatchWithUnsafeDelete", func(t *testing.T) {
		featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.AllowUnsafeMalformedObjectDeletion, true)
		s := newSetup(t)
		storagetesting.RunTestWatchWithUnsafeDelete(s.ctx, t, withTransformerOverride{Interface: s.store, s: s}, corruptObjectError(t))
	})
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("RangeStream=%v", stream), func(t *testing.T) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.EtcdRangeStream, stream)
			resetFeatureSupport(t)
			t.Run("WatchSemantics", func(t *testing.T) {
				s := newSetup(t)
				storagetesting.RunWatchSemantics(s.ctx, t, s.store)
			})
			t.Run("WatchSemanticsWithConcurrentDecode", func(t *testing.T) {
				featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.ConcurrentWatchObjectDecode, true)
				s := newSetup(t)
				storagetesting.RunWatchSemantics(s.ctx, t, s.store)
			})
			t.Run("WatchSemanticInitialEventsExtended", func(t *testing.T) {
				s := newSetup(t)
				storagetesting.RunWatchSemanticInitialEventsExtended(s.ctx, t, s.store)
			})
			t.Run("WatchListMatchSingle", func(t *testing.T) {
				s := newSetup(t)
				storagetesting.RunWatchListMatchSingle(s.ctx, t, s.store)
			})
		})
	}
	t.Run("WatchErrorEventIsBlockingFurtherEvent", func(t *testing.T) {
		s := newSetup(t)
		storagetesting.RunWatchErrorIsBlockingFurtherEvents(s.ctx, t, withPrefixTransformer{Interface: s.store, s: s})
	})
}
