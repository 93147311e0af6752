package main

// etcd.go runs the cluster's storage: one embedded etcd member on two loopback ports, data in
// <data-dir>/etcd. Its ports are remembered in <data-dir>/ports.json so a restart finds the member
// where it left it.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// ports are the loopback ports of one data dir's etcd, chosen on first start and kept.
type ports struct {
	EtcdClient int `json:"etcdClient"`
	EtcdPeer   int `json:"etcdPeer"`
}

func loadOrPickPorts(dataDir string) (ports, error) {
	path := filepath.Join(dataDir, "ports.json")
	var p ports
	if data, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(data, &p); err != nil {
			return p, fmt.Errorf("%s: %w", path, err)
		}
		for _, port := range []int{p.EtcdClient, p.EtcdPeer} {
			if !waitPortFree(port, 10*time.Second) {
				return p, fmt.Errorf("etcd port %d (from %s) is in use: is another realcluster running on this data dir, or an orphan of one? (`fuser -k %d/tcp` stops it)", port, path, port)
			}
		}
		return p, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return p, err
	}
	var err error
	if p.EtcdClient, err = freePort(); err != nil {
		return p, err
	}
	if p.EtcdPeer, err = freePort(); err != nil {
		return p, err
	}
	data, _ := json.Marshal(p)
	return p, writeFileAtomic(path, data, 0o644)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitPortFree: after a kill -9 the old children may take a moment to die and release their ports.
func waitPortFree(port int, patience time.Duration) bool {
	deadline := time.Now().Add(patience)
	for !portFree(port) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

func portFree(port int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// startEtcd starts the member and waits until it serves. UnsafeNoFsync as envtest and the apiserver's
// own test server do: a killed process loses nothing (the page cache keeps every write), only a power
// loss could.
func startEtcd(dataDir string, p ports, logPath string) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Name = "realcluster"
	cfg.Dir = filepath.Join(dataDir, "etcd")
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", p.EtcdClient)}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", p.EtcdPeer)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "warn"
	cfg.LogOutputs = []string{logPath}
	cfg.QuotaBackendBytes = 8 << 30
	server, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd: %w (log: %s)", err, logPath)
	}
	select {
	case <-server.Server.ReadyNotify():
		return server, nil
	case err := <-server.Err():
		server.Close()
		return nil, fmt.Errorf("etcd: %w (log: %s)", err, logPath)
	case <-time.After(60 * time.Second):
		server.Close()
		return nil, fmt.Errorf("etcd was not ready within 60s (log: %s)", logPath)
	}
}
