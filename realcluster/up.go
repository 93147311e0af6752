package main

// up.go is `realcluster up`: one control plane per data dir, in the foreground. Order of start:
// lock the data dir, key material, etcd, kube-apiserver (wait for /readyz), controller manager and
// scheduler, the simulated node (wait until it is Ready and untainted and the `default` service
// account exists), then the admin kubeconfig and the "ready" line. SIGTERM/SIGINT stop it in the
// reverse order: node, scheduler and controller manager, API server, etcd.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/component-base/version"
)

type options struct {
	dataDir            string
	kubeconfig         string
	port               int
	podReadyDelay      time.Duration
	compactionInterval time.Duration
	readyTimeout       time.Duration
	verbosity          string
	auditLog           string
	auditPolicy        string
	authnConfig        string
}

// auditPolicy records every request once it completed, without bodies (Secrets stay out of the log).
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
`

func kubernetesVersion() string { return version.Get().GitVersion }

func parseOptions(args []string) (options, error) {
	o := options{}
	fs := flag.NewFlagSet("realcluster up", flag.ContinueOnError)
	defaultPort := 7443
	if env := os.Getenv("REALCLUSTER_PORT"); env != "" {
		p, err := strconv.Atoi(env)
		if err != nil {
			return o, fmt.Errorf("REALCLUSTER_PORT=%q is not a port number", env)
		}
		defaultPort = p
	}
	fs.StringVar(&o.dataDir, "data-dir", ".realcluster", "etcd data, certificates, kubeconfigs and component logs")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "where to write the admin kubeconfig (default <data-dir>/kubeconfig)")
	fs.IntVar(&o.port, "port", defaultPort, "kube-apiserver's secure port on 127.0.0.1 (env REALCLUSTER_PORT)")
	fs.DurationVar(&o.podReadyDelay, "pod-ready-delay", time.Second, "how long after a pod lands on the node it turns Running and Ready")
	fs.DurationVar(&o.compactionInterval, "etcd-compaction-interval", 5*time.Minute, "kube-apiserver's etcd compaction interval (watch history older than this may answer 410 Gone)")
	fs.DurationVar(&o.readyTimeout, "ready-timeout", 180*time.Second, "give up if the control plane is not ready within this")
	fs.StringVar(&o.verbosity, "v", "1", "component log verbosity")
	fs.StringVar(&o.auditLog, "audit-log", "", "kube-apiserver's audit log (JSON lines, level Metadata: who did what, the response code); off when empty")
	fs.StringVar(&o.auditPolicy, "audit-policy-file", "", "kube-apiserver's audit policy (audit.k8s.io/v1 Policy: which requests at which level, e.g. RequestResponse for some resources) instead of the built-in one (every request at level Metadata); needs --audit-log")
	fs.StringVar(&o.authnConfig, "authentication-config", "", "kube-apiserver's structured authentication configuration (AuthenticationConfiguration, apiserver.config.k8s.io/v1: JWT authenticators for OIDC issuers), beside the static tokens; off when empty")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.auditPolicy != "" {
		if o.auditLog == "" {
			fmt.Fprintln(os.Stderr, "realcluster: --audit-policy-file needs --audit-log (where the records go)")
			return o, errors.New("--audit-policy-file without --audit-log")
		}
		abs, err := filepath.Abs(o.auditPolicy)
		if err == nil {
			_, err = os.Stat(abs)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "realcluster: --audit-policy-file: %v\n", err)
			return o, err
		}
		o.auditPolicy = abs
	}
	if o.authnConfig != "" {
		// An absolute path: kube-apiserver watches the file (and reloads it when it changes) whatever its working directory.
		abs, err := filepath.Abs(o.authnConfig)
		if err == nil {
			_, err = os.Stat(abs)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "realcluster: --authentication-config: %v\n", err)
			return o, err
		}
		o.authnConfig = abs
	}
	if o.kubeconfig == "" {
		o.kubeconfig = filepath.Join(o.dataDir, "kubeconfig")
	}
	return o, nil
}

func runUp(args []string) int {
	// Children get SIGKILL when the thread that started them exits (PR_SET_PDEATHSIG): start them
	// all from the main thread, which lives as long as the process.
	runtime.LockOSThread()
	o, err := parseOptions(args)
	if err != nil {
		return 2
	}
	if err := up(o); err != nil {
		fmt.Fprintf(os.Stderr, "realcluster: %v\n", err)
		return 1
	}
	return 0
}

func say(format string, args ...any) {
	fmt.Printf("realcluster: "+format+"\n", args...)
}

func up(o options) error {
	started := time.Now()
	if err := os.MkdirAll(filepath.Join(o.dataDir, "logs"), 0o755); err != nil {
		return err
	}
	unlock, err := lockDataDir(o.dataDir)
	if err != nil {
		return err
	}
	defer unlock()
	if !waitPortFree(o.port, 10*time.Second) {
		return fmt.Errorf("port %d on 127.0.0.1 is in use (set REALCLUSTER_PORT or --port)", o.port)
	}
	// A kubeconfig left by an earlier run would tell waiting clients we are ready before we are.
	if err := os.Remove(o.kubeconfig); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	p := pki{dir: filepath.Join(o.dataDir, "pki")}
	if err := p.ensure(); err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	pt, err := loadOrPickPorts(o.dataDir)
	if err != nil {
		return err
	}
	logs := filepath.Join(o.dataDir, "logs")
	etcd, err := startEtcd(o.dataDir, pt, filepath.Join(logs, "etcd.log"))
	if err != nil {
		return err
	}
	closeEtcd := sync.OnceFunc(etcd.Close)
	defer closeEtcd()
	say("etcd on 127.0.0.1:%d (data %s)", pt.EtcdClient, filepath.Join(o.dataDir, "etcd"))

	stop := make(chan os.Signal, 2)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	died := make(chan *child, 3)

	args := apiserverArgs(o, p, pt)
	if o.auditLog != "" {
		policy := o.auditPolicy
		if policy == "" {
			policy = filepath.Join(o.dataDir, "audit-policy.yaml")
			if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
				return err
			}
		}
		// One file for the whole run: kube-apiserver rotates its audit log at 100 MB by default (renaming it), which
		// readers that follow the file by its offset cannot follow — and a benchmark of 10,000 objects writes more.
		args = append(args, "--audit-policy-file="+policy, "--audit-log-path="+o.auditLog, "--audit-log-format=json", "--audit-log-mode=blocking",
			"--audit-log-maxbackup=0", "--audit-log-maxsize=1000000")
	}
	apiserver, err := startChild("kube-apiserver", logs, args, died)
	if err != nil {
		return err
	}
	defer apiserver.stop(30 * time.Second)
	deadline := time.Now().Add(o.readyTimeout)
	if err := waitAPIServer(o, p, died, stop, deadline); err != nil {
		return err
	}
	say("kube-apiserver %s ready on https://127.0.0.1:%d", kubernetesVersion(), o.port)

	adminConfig, err := kubeconfigFor(o, p, "admin")
	if err != nil {
		return err
	}
	componentKubeconfig := func(user, file string) (string, error) {
		config, err := kubeconfigFor(o, p, user)
		if err != nil {
			return "", err
		}
		path := filepath.Join(o.dataDir, file)
		return path, writeKubeconfig(path, config)
	}
	kcmKubeconfig, err := componentKubeconfig("system:kube-controller-manager", "controller-manager.kubeconfig")
	if err != nil {
		return err
	}
	schedulerKubeconfig, err := componentKubeconfig("system:kube-scheduler", "scheduler.kubeconfig")
	if err != nil {
		return err
	}
	controllerManager, err := startChild("kube-controller-manager", logs, controllerManagerArgs(o, p, kcmKubeconfig), died)
	if err != nil {
		return err
	}
	defer controllerManager.stop(30 * time.Second)
	scheduler, err := startChild("kube-scheduler", logs, schedulerArgs(o, schedulerKubeconfig), died)
	if err != nil {
		return err
	}
	defer scheduler.stop(30 * time.Second)

	nodeConfig, err := kubeconfigFor(o, p, "realcluster-node")
	if err != nil {
		return err
	}
	restConfig, err := clientcmd.NewDefaultClientConfig(*nodeConfig, nil).ClientConfig()
	if err != nil {
		return err
	}
	restConfig.QPS, restConfig.Burst = 200, 400
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kubelet, err := listenKubelet(p)
	if err != nil {
		return fmt.Errorf("simulated node's kubelet endpoint: %w", err)
	}
	sim := newNodeSimulator(client, o.podReadyDelay, kubernetesVersion(), kubelet)
	if err := sim.register(ctx); err != nil {
		return fmt.Errorf("simulated node: %w", err)
	}
	simDone := make(chan struct{})
	go func() { sim.run(ctx); close(simDone) }()
	defer func() { cancel(); <-simDone }()
	if err := waitUntil(died, stop, deadline, "the node Ready and the default service account", func() (bool, error) {
		return clusterUsable(ctx, client)
	}); err != nil {
		return err
	}
	if err := writeKubeconfig(o.kubeconfig, adminConfig); err != nil {
		return err
	}
	say("ready in %.1fs: kubeconfig %s (admin); component logs in %s", time.Since(started).Seconds(), o.kubeconfig, logs)

	select {
	case sig := <-stop:
		say("%s: stopping", sig)
	case failed := <-died:
		return fmt.Errorf("%s exited unexpectedly (%v); last lines of %s:\n%s", failed.name, failed.cmd.ProcessState, failed.logPath, failed.tail(30))
	}
	// Reverse order: the node and the clients of the API server first, then the API server, then etcd.
	cancel()
	<-simDone
	scheduler.stop(20 * time.Second)
	controllerManager.stop(20 * time.Second)
	apiserver.stop(30 * time.Second)
	closeEtcd()
	say("stopped")
	return nil
}

// clusterUsable: the node is Ready with no taints left (the node-lifecycle controller lifts the
// not-ready taint the admission plugin put on it) and the service-account controller has made the
// `default` ServiceAccount, so pods can be created.
func clusterUsable(ctx context.Context, client kubernetes.Interface) (bool, error) {
	node, err := client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	if len(node.Spec.Taints) > 0 {
		return false, nil
	}
	if _, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); apierrors.IsNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return true, nil
}

func waitAPIServer(o options, p pki, died chan *child, stop chan os.Signal, deadline time.Time) error {
	caPEM, err := os.ReadFile(p.path("ca.crt"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	token, err := p.token("admin")
	if err != nil {
		return err
	}
	httpClient := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	url := fmt.Sprintf("https://127.0.0.1:%d/readyz", o.port)
	return waitUntil(died, stop, deadline, "kube-apiserver /readyz", func() (bool, error) {
		request, _ := http.NewRequest(http.MethodGet, url, nil)
		request.Header.Set("Authorization", "Bearer "+token)
		response, err := httpClient.Do(request)
		if err != nil {
			return false, nil
		}
		response.Body.Close()
		return response.StatusCode == http.StatusOK, nil
	})
}

// waitUntil polls check every 200 ms until it is true, a child dies, a signal arrives or the deadline.
func waitUntil(died chan *child, stop chan os.Signal, deadline time.Time, what string, check func() (bool, error)) error {
	var last error
	for {
		ok, err := check()
		if ok {
			return nil
		}
		last = err
		select {
		case failed := <-died:
			return fmt.Errorf("%s exited while waiting for %s (%v); last lines of %s:\n%s", failed.name, what, failed.cmd.ProcessState, failed.logPath, failed.tail(30))
		case sig := <-stop:
			return fmt.Errorf("%s while waiting for %s", sig, what)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out waiting for %s (last error: %v)", what, last)
		}
	}
}

func kubeconfigFor(o options, p pki, user string) (*clientcmdapi.Config, error) {
	caPEM, err := os.ReadFile(p.path("ca.crt"))
	if err != nil {
		return nil, err
	}
	token, err := p.token(user)
	if err != nil {
		return nil, err
	}
	config := clientcmdapi.NewConfig()
	config.Clusters["realcluster"] = &clientcmdapi.Cluster{Server: fmt.Sprintf("https://127.0.0.1:%d", o.port), CertificateAuthorityData: caPEM}
	config.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	config.Contexts["realcluster"] = &clientcmdapi.Context{Cluster: "realcluster", AuthInfo: user, Namespace: "default"}
	config.CurrentContext = "realcluster"
	return config, nil
}

func writeKubeconfig(path string, config *clientcmdapi.Config) error {
	data, err := clientcmd.Write(*config)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return writeFileAtomic(path, data, 0o600)
}

// lockDataDir takes an exclusive flock on <data-dir>/realcluster.lock (released by the kernel if we
// die) and records our pid beside it: one control plane per data dir.
func lockDataDir(dataDir string) (func(), error) {
	path := filepath.Join(dataDir, "realcluster.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid, _ := os.ReadFile(filepath.Join(dataDir, "realcluster.pid"))
			return nil, fmt.Errorf("%s is in use by another realcluster (pid %s)", dataDir, string(pid))
		}
		return nil, err
	}
	_ = os.WriteFile(filepath.Join(dataDir, "realcluster.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644)
	return func() {
		_ = os.Remove(filepath.Join(dataDir, "realcluster.pid"))
		f.Close()
	}, nil
}
