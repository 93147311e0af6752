package main

// pki.go owns the control plane's key material, generated once per data dir and reused on restart:
// the cluster CA and the API server's serving certificate, the simulated kubelet's serving certificate and
// the API server's kubelet client certificate, the front-proxy CA and client certificate
// of the aggregation layer, the service-account signing key pair, and the static token file that
// authenticates the admin, the components and a few test users.

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// tokenUser is one line of kube-apiserver's --token-auth-file: token,user,uid,"group1,group2".
type tokenUser struct {
	name   string
	groups []string
}

// tokenUsers are the identities realcluster authenticates with static tokens. The admin is in
// system:masters; the components use the users the bootstrap RBAC policy binds; alice and bob have
// no permissions beyond system:authenticated, for authorization tests.
var tokenUsers = []tokenUser{
	{name: "admin", groups: []string{"system:masters"}},
	{name: "system:kube-controller-manager"},
	{name: "system:kube-scheduler"},
	{name: "realcluster-node", groups: []string{"system:masters"}},
	{name: "alice", groups: []string{"developers"}},
	{name: "bob"},
}

// pki lists the files of a data dir's pki/ folder.
type pki struct {
	dir string
}

func (p pki) path(name string) string { return filepath.Join(p.dir, name) }

// ensure creates whatever is missing; files that exist are kept, so a restart keeps its identity.
func (p pki) ensure() error {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return err
	}
	ca, caKey, err := p.ensureCA("ca", "realcluster-ca")
	if err != nil {
		return err
	}
	if err := p.ensureLeaf("apiserver", ca, caKey, "kube-apiserver", nil, x509.ExtKeyUsageServerAuth,
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		[]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")}); err != nil {
		return err
	}
	// The simulated node's kubelet endpoint (containerLogs): its serving certificate, and the client
	// certificate kube-apiserver presents to it (the only identity it lets in).
	if err := p.ensureLeaf("kubelet", ca, caKey, "system:node:"+nodeName, []string{"system:nodes"}, x509.ExtKeyUsageServerAuth,
		[]string{nodeName, "localhost"}, []net.IP{net.ParseIP("127.0.0.1")}); err != nil {
		return err
	}
	if err := p.ensureLeaf("apiserver-kubelet-client", ca, caKey, kubeletClientName, nil, x509.ExtKeyUsageClientAuth, nil, nil); err != nil {
		return err
	}
	frontProxyCA, frontProxyKey, err := p.ensureCA("front-proxy-ca", "realcluster-front-proxy-ca")
	if err != nil {
		return err
	}
	if err := p.ensureLeaf("front-proxy-client", frontProxyCA, frontProxyKey, "front-proxy-client", nil, x509.ExtKeyUsageClientAuth, nil, nil); err != nil {
		return err
	}
	if _, err := os.Stat(p.path("sa.key")); errors.Is(err, os.ErrNotExist) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		if err := writeKey(p.path("sa.key"), key); err != nil {
			return err
		}
		der, err := x509.MarshalPKIXPublicKey(key.Public())
		if err != nil {
			return err
		}
		if err := writePEM(p.path("sa.pub"), "PUBLIC KEY", der, 0o644); err != nil {
			return err
		}
	}
	return p.ensureTokens()
}

// token returns the static token of one user in tokens.csv.
func (p pki) token(user string) (string, error) {
	data, err := os.ReadFile(p.path("tokens.csv"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.SplitN(line, ",", 4)
		if len(fields) >= 2 && fields[1] == user {
			return fields[0], nil
		}
	}
	return "", fmt.Errorf("no token for %q in %s", user, p.path("tokens.csv"))
}

func (p pki) ensureTokens() error {
	if _, err := os.Stat(p.path("tokens.csv")); err == nil {
		return nil
	}
	var lines []string
	for _, u := range tokenUsers {
		raw := make([]byte, 24)
		if _, err := rand.Read(raw); err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("%s,%s,%s,%q", hex.EncodeToString(raw), u.name, u.name, strings.Join(u.groups, ",")))
	}
	return os.WriteFile(p.path("tokens.csv"), []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}

func (p pki) ensureCA(name, commonName string) (*x509.Certificate, crypto.Signer, error) {
	if cert, key, err := p.load(name); err == nil {
		return cert, key, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		return nil, nil, err
	}
	if err := p.store(name, der, key); err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func (p pki) ensureLeaf(name string, ca *x509.Certificate, caKey crypto.Signer, commonName string, orgs []string,
	usage x509.ExtKeyUsage, dnsNames []string, ips []net.IP) error {
	if _, _, err := p.load(name); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: commonName, Organization: orgs},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		DNSNames:     dnsNames,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, key.Public(), caKey)
	if err != nil {
		return err
	}
	return p.store(name, der, key)
}

func (p pki) load(name string) (*x509.Certificate, crypto.Signer, error) {
	certPEM, err := os.ReadFile(p.path(name + ".crt"))
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(p.path(name + ".key"))
	if err != nil {
		return nil, nil, err
	}
	certBlock, _ := pem.Decode(certPEM)
	keyBlock, _ := pem.Decode(keyPEM)
	if certBlock == nil || keyBlock == nil {
		return nil, nil, fmt.Errorf("%s: not PEM; delete the data dir's pki/ to regenerate", p.path(name))
	}
	cert, err := x509.ParseCertificate(certBlock.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(keyBlock.Bytes)
	if err != nil {
		return nil, nil, err
	}
	return cert, key, nil
}

func (p pki) store(name string, der []byte, key *ecdsa.PrivateKey) error {
	if err := writeKey(p.path(name+".key"), key); err != nil {
		return err
	}
	return writePEM(p.path(name+".crt"), "CERTIFICATE", der, 0o644)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "EC PRIVATE KEY", der, 0o600)
}

// writePEM writes atomically (temp file + rename) so a crash never leaves half a key behind.
func writePEM(path, blockType string, der []byte, mode os.FileMode) error {
	return writeFileAtomic(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), mode)
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err)
	}
	return n
}
