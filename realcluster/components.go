package main

// components.go starts and stops the upstream components as children of `realcluster up`: each is
// this same binary re-executed with the component's name as argv[1] and the flags below, its output
// in <data-dir>/logs/<name>.log. Children are in their own process group (a terminal's Ctrl-C reaches
// only `up`, which stops them in order) and get SIGKILL if `up` dies (PR_SET_PDEATHSIG), so a
// `kill -9` of `up` leaves no orphan holding the ports.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

type child struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed when the process has exited
}

// startChild runs one component; when it exits, it is also sent to died (buffered by the caller).
func startChild(name, logDir string, args []string, died chan<- *child) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logFile, "\n===== %s %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(append([]string{name}, args...), " "))
	cmd := exec.Command(self, append([]string{name}, args...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(c.done)
		died <- c
	}()
	return c, nil
}

// stop sends SIGTERM and waits up to timeout, then SIGKILL.
func (c *child) stop(timeout time.Duration) {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(timeout):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// tail is the end of the child's log, for a failure message.
func (c *child) tail(lines int) string {
	data, err := os.ReadFile(c.logPath)
	if err != nil {
		return ""
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// apiserverArgs are kube-apiserver's flags. Loopback only: the endpoint reconciler is off because
// Endpoints/EndpointSlices reject 127.0.0.0/8 addresses; aggregation routes to endpoints directly
// since there is no kube-proxy.
func apiserverArgs(o options, p pki, pt ports) []string {
	args := []string{
		"--etcd-servers=" + fmt.Sprintf("http://127.0.0.1:%d", pt.EtcdClient),
		"--etcd-compaction-interval=" + o.compactionInterval.String(),
		fmt.Sprintf("--secure-port=%d", o.port),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none",
		"--tls-cert-file=" + p.path("apiserver.crt"),
		"--tls-private-key-file=" + p.path("apiserver.key"),
		"--client-ca-file=" + p.path("ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p.path("sa.pub"),
		"--service-account-signing-key-file=" + p.path("sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
		"--authorization-mode=RBAC",
		"--token-auth-file=" + p.path("tokens.csv"),
		"--allow-privileged=true",
		"--requestheader-client-ca-file=" + p.path("front-proxy-ca.crt"),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-username-headers=X-Remote-User",
		"--proxy-client-cert-file=" + p.path("front-proxy-client.crt"),
		"--proxy-client-key-file=" + p.path("front-proxy-client.key"),
		"--enable-aggregator-routing=true",
		// pods/log: kube-apiserver calls the simulated node's kubelet endpoint on the Node's InternalIP
		// (127.0.0.1; its Hostname address does not resolve) with this client certificate, verifying the
		// kubelet's serving certificate against the cluster CA.
		"--kubelet-client-certificate=" + p.path("apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + p.path("apiserver-kubelet-client.key"),
		"--kubelet-certificate-authority=" + p.path("ca.crt"),
		"--kubelet-preferred-address-types=InternalIP",
		// Stricter than the default set, as OpenShift and many hardened clusters run: setting
		// blockOwnerDeletion needs update on the owner's finalizers subresource.
		"--enable-admission-plugins=OwnerReferencesPermissionEnforcement",
		"--cert-dir=" + p.dir,
		// On SIGTERM, close open watches within 2s (rate-limited, as k0s and OpenShift configure it), so
		// clients relist from the next server at once. Without it kube-apiserver does not end its watches
		// and a stop with a client watching waits out the stop timeout below (30s) before SIGKILL.
		"--shutdown-watch-termination-grace-period=2s",
		"--profiling=false",
		"--v=" + o.verbosity,
	}
	if o.authnConfig != "" {
		// JWT authenticators (OIDC) beside the static tokens: the two combine; only the --oidc-* flags may not be
		// given with it. kube-apiserver fetches each issuer's discovery document and keys in the background
		// (retrying every 10 s), so it starts and gets ready even while an issuer is unreachable.
		args = append(args, "--authentication-config="+o.authnConfig)
	}
	return args
}

// controllerManagerArgs: every default controller ("*"), each with its own service-account
// credentials as in a kubeadm cluster. The client rate limits are raised from 20/30 so benchmarks of
// thousands of objects measure the product rather than the controller manager's client throttle.
func controllerManagerArgs(o options, p pki, kubeconfig string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
		"--controllers=*",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + p.path("sa.key"),
		"--root-ca-file=" + p.path("ca.crt"),
		"--cluster-signing-cert-file=" + p.path("ca.crt"),
		"--cluster-signing-key-file=" + p.path("ca.key"),
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--profiling=false",
		"--v=" + o.verbosity,
	}
}

func schedulerArgs(o options, kubeconfig string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--profiling=false",
		"--v=" + o.verbosity,
	}
}
