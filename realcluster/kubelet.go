package main

// kubelet.go is the one kubelet endpoint the simulated node serves: GET /containerLogs/<ns>/<pod>/<container>,
// which kube-apiserver calls for `pods/log` (kubectl logs). HTTPS on 127.0.0.1 (a port picked at start and
// published in the Node's status.daemonEndpoints.kubeletEndpoint), with a serving certificate of the cluster
// CA that kube-apiserver verifies (--kubelet-certificate-authority); only kube-apiserver's kubelet client
// certificate (CN kube-apiserver-kubelet-client) is allowed in.
//
// No container runs, so a container's log is simulated: a few lines stating what a real container would have
// been started with (image, command, args, the NAMES of its env variables, never their values nor anything
// read from a Secret), stamped with the container's start, then while following one line every
// followInterval. The query parameters behave as the kubelet's: follow, tailLines (and the legacy tail),
// sinceSeconds, sinceTime, timestamps, limitBytes, stream, previous (there never is a previous container: 400).
// devcluster's pods/log (devcluster/src/devcluster/podlogs.py) writes the same text.

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
)

const (
	// kubeletClientName is the common name of kube-apiserver's kubelet client certificate (as kubeadm names it).
	kubeletClientName = "kube-apiserver-kubelet-client"
	followInterval    = 3 * time.Second
	logTimeFormat     = "2006-01-02T15:04:05.000000000Z07:00" // the kubelet's (fixed nine digits)
)

// logLine is one line of a simulated container log.
type logLine struct {
	at   time.Time
	text string
}

// simulatedLog is what a container of a pod on node would have written when it started.
func simulatedLog(pod *corev1.Pod, container *corev1.Container, node string, started time.Time) []logLine {
	jsonList := func(values []string) string {
		if len(values) == 0 {
			return "(none)"
		}
		var b bytes.Buffer
		encoder := json.NewEncoder(&b)
		encoder.SetEscapeHTML(false)
		_ = encoder.Encode(values)
		return strings.TrimSpace(b.String())
	}
	command := jsonList(container.Command)
	if len(container.Command) == 0 {
		command = "(the image's entrypoint)"
	}
	var names []string
	for _, e := range container.Env {
		names = append(names, e.Name)
	}
	env := "(none)"
	if len(names) > 0 {
		env = strings.Join(names, ", ") + " (names only, values are not shown)"
	}
	lines := []string{
		fmt.Sprintf("simulated: no container runs on %s; container %q of pod %q would have been started with", node, container.Name, pod.Name),
		"image: " + container.Image,
		"command: " + command,
		"args: " + jsonList(container.Args),
		"env: " + env,
	}
	if len(container.EnvFrom) > 0 {
		var sources []string
		for _, source := range container.EnvFrom {
			switch {
			case source.ConfigMapRef != nil:
				sources = append(sources, "configMap "+source.ConfigMapRef.Name)
			case source.SecretRef != nil:
				sources = append(sources, "secret "+source.SecretRef.Name)
			default:
				continue
			}
			if source.Prefix != "" {
				sources[len(sources)-1] += " (prefix " + source.Prefix + ")"
			}
		}
		lines = append(lines, "envFrom: "+strings.Join(sources, ", ")+" (variables not shown)")
	}
	out := make([]logLine, len(lines))
	for i, text := range lines {
		out[i] = logLine{at: started, text: text}
	}
	return out
}

// followLine is written every followInterval while following.
func followLine(node string) string { return "simulated: no container runs on " + node }

// kubelet serves containerLogs from the node's pods.
type kubelet struct {
	listener net.Listener
	pods     corelisters.PodLister // set by the node simulator once its informer synced
	caPool   *x509.CertPool
	cert     tls.Certificate
}

// listenKubelet opens the kubelet port on loopback (the Node's status publishes it); serve starts answering.
func listenKubelet(p pki) (*kubelet, error) {
	cert, err := tls.LoadX509KeyPair(p.path("kubelet.crt"), p.path("kubelet.key"))
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(p.path("ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return &kubelet{listener: listener, caPool: pool, cert: cert}, nil
}

func (k *kubelet) port() int32 { return int32(k.listener.Addr().(*net.TCPAddr).Port) }

// serve answers until ctx ends.
func (k *kubelet) serve(ctx context.Context, pods corelisters.PodLister) {
	k.pods = pods
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", k.containerLogs)
	server := &http.Server{
		Handler:           k.authorized(mux),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{k.cert}, ClientCAs: k.caPool,
			ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12,
		},
	}
	go func() {
		<-ctx.Done()
		_ = server.Close()
	}()
	if err := server.ServeTLS(k.listener, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		klog.Warningf("realcluster node: kubelet endpoint: %v", err)
	}
}

// authorized lets in kube-apiserver's kubelet client certificate only: no certificate 401, another one 403.
func (k *kubelet) authorized(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			kubeletError(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		if user := r.TLS.VerifiedChains[0][0].Subject.CommonName; user != kubeletClientName {
			kubeletError(w, fmt.Sprintf("Forbidden (user=%s, verb=get, resource=nodes, subresource=proxy)", user), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// logOptions are the query parameters of containerLogs.
type logOptions struct {
	follow, previous, timestamps bool
	tailLines, limitBytes        int64 // -1: unset
	since                        time.Time
	stream                       string
}

func parseLogOptions(r *http.Request) (logOptions, error) {
	q := r.URL.Query()
	o := logOptions{tailLines: -1, limitBytes: -1, stream: q.Get("stream")}
	flag := func(name string) (bool, error) {
		if v := q.Get(name); v != "" {
			return strconv.ParseBool(v)
		}
		return false, nil
	}
	number := func(name string) (int64, error) {
		if v := q.Get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("%s", name)
			}
			return n, nil
		}
		return -1, nil
	}
	var errs []error
	var err error
	o.follow, err = flag("follow")
	errs = append(errs, err)
	o.previous, err = flag("previous")
	errs = append(errs, err)
	o.timestamps, err = flag("timestamps")
	errs = append(errs, err)
	if tail := q.Get("tail"); tail != "" && tail != "all" && q.Get("tailLines") == "" {
		q.Set("tailLines", tail)
	}
	o.tailLines, err = number("tailLines")
	errs = append(errs, err)
	o.limitBytes, err = number("limitBytes")
	errs = append(errs, err)
	sinceSeconds, err := number("sinceSeconds")
	errs = append(errs, err)
	if sinceSeconds >= 0 {
		o.since = time.Now().Add(-time.Duration(sinceSeconds) * time.Second)
	}
	if v := q.Get("sinceTime"); v != "" {
		o.since, err = time.Parse(time.RFC3339, v)
		errs = append(errs, err)
	}
	return o, errors.Join(errs...)
}

func (k *kubelet) containerLogs(w http.ResponseWriter, r *http.Request) {
	namespace, podName, containerName := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	options, err := parseLogOptions(r)
	if err != nil {
		kubeletError(w, `{"message": "Unable to decode query."}`, http.StatusBadRequest)
		return
	}
	if options.stream != "" && options.stream != string(corev1.LogStreamAll) && options.stream != string(corev1.LogStreamStdout) &&
		options.stream != string(corev1.LogStreamStderr) {
		kubeletError(w, fmt.Sprintf("invalid stream type %q", options.stream), http.StatusBadRequest)
		return
	}
	pod, err := k.pods.Pods(namespace).Get(podName)
	if apierrors.IsNotFound(err) {
		kubeletError(w, fmt.Sprintf("pod %q does not exist", podName), http.StatusNotFound)
		return
	} else if err != nil {
		kubeletError(w, err.Error(), http.StatusInternalServerError)
		return
	}
	container := findContainer(pod, containerName)
	if container == nil {
		kubeletError(w, fmt.Sprintf("container %q not found in pod %q", containerName, podName), http.StatusNotFound)
		return
	}
	started, err := containerStarted(pod, containerName, options.previous)
	if err != nil {
		kubeletError(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	if options.stream == string(corev1.LogStreamStderr) {
		return // the simulated lines are all on stdout
	}
	lines := simulatedLog(pod, container, nodeName, started)
	out := &limitedWriter{w: w, left: options.limitBytes}
	writeLines(out, lines, options)
	if !options.follow || out.full() {
		return
	}
	ticker := time.NewTicker(followInterval)
	defer ticker.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case now := <-ticker.C:
			if current, err := k.pods.Pods(namespace).Get(podName); err != nil || current.UID != pod.UID {
				return // the pod is gone: its containers' streams end
			}
			writeLines(out, []logLine{{at: now, text: followLine(nodeName)}}, logOptions{timestamps: options.timestamps, tailLines: -1})
			if out.full() {
				return
			}
		}
	}
}

// writeLines writes the lines selected by since and tailLines, and flushes.
func writeLines(out *limitedWriter, lines []logLine, o logOptions) {
	var selected []logLine
	for _, line := range lines {
		if !line.at.Before(o.since) {
			selected = append(selected, line)
		}
	}
	if o.tailLines >= 0 && int64(len(selected)) > o.tailLines {
		selected = selected[int64(len(selected))-o.tailLines:]
	}
	for _, line := range selected {
		text := line.text + "\n"
		if o.timestamps {
			text = line.at.UTC().Format(logTimeFormat) + " " + text
		}
		if !out.write(text) {
			break
		}
	}
	if flusher, ok := out.w.(http.Flusher); ok {
		flusher.Flush()
	}
}

// limitedWriter stops after limitBytes (cutting a line, as the kubelet does); left < 0 means no limit.
type limitedWriter struct {
	w    http.ResponseWriter
	left int64
}

func (l *limitedWriter) full() bool { return l.left == 0 }

func (l *limitedWriter) write(text string) bool {
	if l.left >= 0 && int64(len(text)) > l.left {
		text = text[:l.left]
	}
	_, err := l.w.Write([]byte(text))
	if l.left >= 0 {
		l.left -= int64(len(text))
	}
	return err == nil && !l.full()
}

func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// containerStarted is when the container's (simulated) process started, or the kubelet's error for a
// container that has no log to show.
func containerStarted(pod *corev1.Pod, name string, previous bool) (time.Time, error) {
	var status *corev1.ContainerStatus
	for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				status = &list[i]
			}
		}
	}
	switch {
	case status == nil:
		return time.Time{}, fmt.Errorf("container %q in pod %q is waiting to start: ContainerCreating", name, pod.Name)
	case previous:
		return time.Time{}, fmt.Errorf("previous terminated container %q in pod %q not found", name, pod.Name)
	case status.State.Running != nil:
		return status.State.Running.StartedAt.Time, nil
	case status.State.Terminated != nil:
		return status.State.Terminated.StartedAt.Time, nil
	case status.State.Waiting != nil:
		return time.Time{}, fmt.Errorf("container %q in pod %q is waiting to start: %v", name, pod.Name, status.State.Waiting.Reason)
	}
	return time.Time{}, fmt.Errorf("container %q in pod %q is waiting to start - no logs yet", name, pod.Name)
}

// kubeletError answers as go-restful's WriteError does for the kubelet: the text alone, no newline
// (kube-apiserver passes it on as the message of its own error: 400 BadRequest, 404 NotFound, ...).
func kubeletError(w http.ResponseWriter, text string, code int) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(text))
}
