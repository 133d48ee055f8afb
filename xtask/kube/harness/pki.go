package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the certificate set kubeadm lays out for a control plane with
// external etcd, in one directory: one CA signs the etcd members' serving
// and peer certificates, the apiserver's etcd client certificate, the
// apiserver's serving certificate and the admin and controller-manager
// client certificates; plus the service-account signing key pair.
type pki struct {
	dir    string
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	serial int64
}

func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

func newPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &pki{dir: dir, serial: 1}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(p.serial),
		Subject:               pkix.Name{CommonName: "hark-kube-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	p.caCert, err = x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	p.caKey = key
	if err := writePEM(p.path("ca.crt"), "CERTIFICATE", der); err != nil {
		return nil, err
	}
	if err := writeKey(p.path("ca.key"), key); err != nil {
		return nil, err
	}
	loopback := []net.IP{net.ParseIP("127.0.0.1")}
	for _, c := range []struct {
		name  string
		cn    string
		org   []string
		usage []x509.ExtKeyUsage
		dns   []string
		ips   []net.IP
	}{
		// etcd's server and peer certificates serve both ways, as kubeadm's do.
		{"etcd-server", "hark-member", nil, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, []string{"localhost"}, loopback},
		{"etcd-peer", "hark-member", nil, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, []string{"localhost"}, loopback},
		{"apiserver-etcd-client", "kube-apiserver-etcd-client", nil, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, nil, nil},
		{"apiserver", "kube-apiserver", nil, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
			[]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")}},
		{"admin", "kubernetes-admin", []string{"system:masters"}, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, nil, nil},
		{"controller-manager", "system:kube-controller-manager", nil, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, nil, nil},
	} {
		if err := p.issue(c.name, c.cn, c.org, c.usage, c.dns, c.ips); err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
	}
	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if err := writeKey(p.path("sa.key"), sa); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return nil, err
	}
	return p, writePEM(p.path("sa.pub"), "PUBLIC KEY", pub)
}

func (p *pki) issue(name, cn string, org []string, usage []x509.ExtKeyUsage, dns []string, ips []net.IP) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	p.serial++
	template := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial),
		Subject:      pkix.Name{CommonName: cn, Organization: org},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  usage,
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		return err
	}
	if err := writePEM(p.path(name+".crt"), "CERTIFICATE", der); err != nil {
		return err
	}
	return writeKey(p.path(name+".key"), key)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "PRIVATE KEY", der)
}

func writePEM(path, kind string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600)
}

// kubeconfig writes a kubeconfig for the apiserver at server that
// authenticates with the client certificate name.crt.
func (p *pki) kubeconfig(name, server string) (string, error) {
	path := p.path(name + ".conf")
	body := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: hark
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: %s
  user:
    client-certificate: %s
    client-key: %s
contexts:
- name: %s@hark
  context:
    cluster: hark
    user: %s
current-context: %s@hark
`, server, p.path("ca.crt"), name, p.path(name+".crt"), p.path(name+".key"), name, name, name)
	return path, os.WriteFile(path, []byte(body), 0o600)
}
