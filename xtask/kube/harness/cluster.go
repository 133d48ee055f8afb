package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// process is one server the harness runs, logging to a file of its own.
type process struct {
	name string
	bin  string
	args []string
	log  string
	cmd  *exec.Cmd
	// Closed once the process has exited (and been reaped).
	done chan struct{}
}

func (p *process) start() error {
	log, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group: a signal to the harness does not reach it
	// first, and stop() ends it whole.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting %s: %w", p.name, err)
	}
	p.cmd = cmd
	done := make(chan struct{})
	p.done = done
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(done)
	}()
	return nil
}

// kill sends SIGKILL to the process group and waits until the process is gone.
func (p *process) kill() {
	if p.cmd == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
	p.cmd = nil
}

func (p *process) alive() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// pause stops (SIGSTOP) or resumes (SIGCONT) the process.
func (p *process) pause(stop bool) {
	if p.cmd == nil {
		return
	}
	sig := syscall.SIGCONT
	if stop {
		sig = syscall.SIGSTOP
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
}

func (p *process) pid() int {
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// extraMemberFlags go to every member after kubeadm's (-member-flags).
var extraMemberFlags []string

// members is the storage cluster: three members of Hark or etcd started
// with the arguments kubeadm writes into its etcd static pod manifest
// (etcd 3.6's form), mutual TLS for clients and peers.
type members struct {
	procs     []*process
	endpoints []string
	metrics   []string
}

func startMembers(server, dir string, p *pki) (*members, error) {
	ports, err := freePorts(9)
	if err != nil {
		return nil, err
	}
	var initial []string
	for i := range 3 {
		initial = append(initial, fmt.Sprintf("m%d=https://127.0.0.1:%d", i, ports[3*i+1]))
	}
	m := &members{}
	for i := range 3 {
		client, peer, metrics := ports[3*i], ports[3*i+1], ports[3*i+2]
		data := filepath.Join(dir, fmt.Sprintf("m%d", i))
		proc := &process{
			name: fmt.Sprintf("m%d", i),
			bin:  server,
			log:  filepath.Join(dir, fmt.Sprintf("m%d.log", i)),
			args: []string{
				fmt.Sprintf("--advertise-client-urls=https://127.0.0.1:%d", client),
				"--cert-file=" + p.path("etcd-server.crt"),
				"--client-cert-auth=true",
				"--data-dir=" + data,
				"--feature-gates=InitialCorruptCheck=true",
				"--watch-progress-notify-interval=5s",
				fmt.Sprintf("--initial-advertise-peer-urls=https://127.0.0.1:%d", peer),
				"--initial-cluster=" + strings.Join(initial, ","),
				"--initial-cluster-state=new",
				"--key-file=" + p.path("etcd-server.key"),
				fmt.Sprintf("--listen-client-urls=https://127.0.0.1:%d", client),
				fmt.Sprintf("--listen-metrics-urls=http://127.0.0.1:%d", metrics),
				fmt.Sprintf("--listen-peer-urls=https://127.0.0.1:%d", peer),
				fmt.Sprintf("--name=m%d", i),
				"--peer-cert-file=" + p.path("etcd-peer.crt"),
				"--peer-client-cert-auth=true",
				"--peer-key-file=" + p.path("etcd-peer.key"),
				"--peer-trusted-ca-file=" + p.path("ca.crt"),
				"--snapshot-count=10000",
				"--trusted-ca-file=" + p.path("ca.crt"),
				"--log-level=warn",
			},
		}
		proc.args = append(proc.args, extraMemberFlags...)
		if err := proc.start(); err != nil {
			return nil, err
		}
		m.procs = append(m.procs, proc)
		m.endpoints = append(m.endpoints, fmt.Sprintf("https://127.0.0.1:%d", client))
		m.metrics = append(m.metrics, fmt.Sprintf("http://127.0.0.1:%d", metrics))
	}
	for i := range m.procs {
		if err := m.waitHealthy(i, 60*time.Second); err != nil {
			m.stop()
			return nil, err
		}
	}
	return m, nil
}

// waitHealthy waits until member i answers /health on its metrics URL with
// a healthy verdict (it has a leader and serves reads).
func (m *members) waitHealthy(i int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		resp, err := http.Get(m.metrics[i] + "/health")
		if err == nil {
			body := make([]byte, 256)
			n, _ := resp.Body.Read(body)
			resp.Body.Close()
			if resp.StatusCode == 200 && strings.Contains(string(body[:n]), `"health":"true"`) {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("member m%d was not healthy within %s (log: %s)", i, within, m.procs[i].log)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (m *members) stop() {
	for _, p := range m.procs {
		p.kill()
	}
}

// controlPlane is kube-apiserver on the members, and kube-controller-manager.
type controlPlane struct {
	apiserver  *process
	controller *process
	url        string
	admin      string // the admin kubeconfig
}

func startControlPlane(binDir, dir string, p *pki, m *members, compaction time.Duration) (*controlPlane, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	url := fmt.Sprintf("https://127.0.0.1:%d", ports[0])
	cp := &controlPlane{url: url}
	cp.apiserver = &process{
		name: "kube-apiserver",
		bin:  filepath.Join(binDir, "kube-apiserver"),
		log:  filepath.Join(dir, "kube-apiserver.log"),
		args: []string{
			"--advertise-address=127.0.0.1",
			// The kubernetes Service's endpoints would be the advertised
			// address, which may not be loopback; no Service routes here.
			"--endpoint-reconciler-type=none",
			"--bind-address=127.0.0.1",
			fmt.Sprintf("--secure-port=%d", ports[0]),
			"--allow-privileged=true",
			"--authorization-mode=Node,RBAC",
			"--client-ca-file=" + p.path("ca.crt"),
			"--enable-admission-plugins=NodeRestriction",
			"--enable-bootstrap-token-auth=true",
			"--etcd-servers=" + strings.Join(m.endpoints, ","),
			"--etcd-cafile=" + p.path("ca.crt"),
			"--etcd-certfile=" + p.path("apiserver-etcd-client.crt"),
			"--etcd-keyfile=" + p.path("apiserver-etcd-client.key"),
			fmt.Sprintf("--etcd-compaction-interval=%s", compaction),
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + p.path("sa.pub"),
			"--service-account-signing-key-file=" + p.path("sa.key"),
			"--service-cluster-ip-range=10.96.0.0/12",
			"--tls-cert-file=" + p.path("apiserver.crt"),
			"--tls-private-key-file=" + p.path("apiserver.key"),
			"--cert-dir=" + filepath.Join(dir, "apiserver-certs"),
			"--v=1",
		},
	}
	if err := cp.apiserver.start(); err != nil {
		return nil, err
	}
	if err := waitReady(url, p, cp.apiserver, 120*time.Second); err != nil {
		cp.stop()
		return nil, fmt.Errorf("%w (log: %s)", err, cp.apiserver.log)
	}
	cp.admin, err = p.kubeconfig("admin", url)
	if err != nil {
		return nil, err
	}
	controllerConf, err := p.kubeconfig("controller-manager", url)
	if err != nil {
		return nil, err
	}
	cp.controller = &process{
		name: "kube-controller-manager",
		bin:  filepath.Join(binDir, "kube-controller-manager"),
		log:  filepath.Join(dir, "kube-controller-manager.log"),
		args: []string{
			"--authentication-kubeconfig=" + controllerConf,
			"--authorization-kubeconfig=" + controllerConf,
			"--kubeconfig=" + controllerConf,
			"--bind-address=127.0.0.1",
			fmt.Sprintf("--secure-port=%d", ports[1]),
			"--cert-dir=" + filepath.Join(dir, "controller-manager-certs"),
			"--client-ca-file=" + p.path("ca.crt"),
			"--cluster-signing-cert-file=" + p.path("ca.crt"),
			"--cluster-signing-key-file=" + p.path("ca.key"),
			"--controllers=*,bootstrapsigner,tokencleaner",
			"--leader-elect=true",
			"--root-ca-file=" + p.path("ca.crt"),
			"--service-account-private-key-file=" + p.path("sa.key"),
			"--use-service-account-credentials=true",
			"--v=1",
		},
	}
	if err := cp.controller.start(); err != nil {
		cp.stop()
		return nil, err
	}
	return cp, nil
}

func (cp *controlPlane) stop() {
	if cp.controller != nil {
		cp.controller.kill()
	}
	cp.apiserver.kill()
}

// adminHTTP is an HTTP client with the admin's certificate.
func adminHTTP(p *pki) (*http.Client, error) {
	cert, err := tls.LoadX509KeyPair(p.path("admin.crt"), p.path("admin.key"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(p.caCert)
	return &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool}},
	}, nil
}

// waitReady waits until the apiserver's /readyz says ok, or its process ends.
func waitReady(url string, p *pki, apiserver *process, within time.Duration) error {
	client, err := adminHTTP(p)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", url+"/readyz", nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		if !apiserver.alive() {
			return fmt.Errorf("kube-apiserver exited before it was ready")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver at %s was not ready within %s", url, within)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
