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
//
// A log rate (for tests and benchmarks of busy logs): a pod annotated rateAnnotation ("1000") has containers that,
// after those startup lines, write that many lines a second ("simulated: line <i> of a container writing <rate>
// lines/s on <node>"), and the log is a function of time: line i (from 1) is stamped the container's start plus
// i/rate seconds (cut to the microsecond) and is there once that time has come (a pod that ran 1 s at 1,000 lines/s
// has 1,000 of them). No line is held: rateLog computes which indexes a request selects (sinceSeconds/sinceTime by
// their stamps, tailLines across the startup lines and these) and writes them in chunks of at most rateChunkLines;
// while following it writes the lines whose time came since its last write, every rateTick at most (batched per
// write), instead of the every-3-s line. Only the last rateRetainedLines of them are kept (older ones are gone, as a
// kubelet's rotated log files are). The value must be decimal digits (a positive integer; no sign, no spaces):
// anything else, "0" included, is as if the annotation were absent; above rateMax it counts as rateMax.
// devcluster reads the same annotation the same way and writes the same text and stamps.

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

	rateAnnotation    = "simulation.example.com/log-lines-per-second" // on the pod (a pod template's annotations reach it)
	rateMax           = 10_000                                        // lines a second: a higher value counts as this
	rateRetainedLines = 100_000                                       // rate lines a log keeps (older ones rotated away)
	rateChunkLines    = 5_000                                         // rate lines a write carries at most
	rateTick          = 100 * time.Millisecond                        // while following at a rate: the shortest wait between writes
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
	if perSecond := logRate(pod); perSecond > 0 {
		k.rateLog(r.Context(), out, rateLog{perSecond: perSecond, started: started, node: nodeName}, lines, options, pod)
		return
	}
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

// logRate is the lines a second rateAnnotation asks of pod's containers, or 0 (absent, or not a positive integer in
// decimal digits); at most rateMax.
func logRate(pod *corev1.Pod) int64 {
	raw, ok := pod.Annotations[rateAnnotation]
	if !ok || raw == "" || strings.Trim(raw, "0123456789") != "" {
		return 0
	}
	n, err := strconv.ParseUint(raw, 10, 64)
	if errors.Is(err, strconv.ErrRange) || (err == nil && n > rateMax) {
		return rateMax
	} else if err != nil {
		return 0
	}
	return int64(n)
}

// rateLog is the rate lines of a container started at started writing perSecond lines a second on node: line i (from
// 1) is stamped started + i/perSecond s, cut to the microsecond (devcluster's podlogs.Rate).
type rateLog struct {
	perSecond int64
	started   time.Time
	node      string
}

func (l rateLog) stamp(i int64) time.Time {
	// i*1e6/perSecond without overflow: i is at most perSecond * the seconds since the start
	micros := i/l.perSecond*1_000_000 + i%l.perSecond*1_000_000/l.perSecond
	return l.started.Add(time.Duration(micros) * time.Microsecond)
}

func (l rateLog) text(i int64) string {
	return fmt.Sprintf("simulated: line %d of a container writing %d lines/s on %s", i, l.perSecond, l.node)
}

// written is how many lines were written by now (the index of the last one; 0: none yet).
func (l rateLog) written(now time.Time) int64 {
	if now.Before(l.started) {
		return 0
	}
	elapsed := int64(now.Sub(l.started) / time.Microsecond) // whole microseconds
	// ((elapsed+1)*perSecond - 1) / 1e6, floored, without overflow
	q, m := (elapsed+1)/1_000_000, (elapsed+1)%1_000_000
	if m == 0 {
		return q*l.perSecond - 1
	}
	return q*l.perSecond + (m*l.perSecond-1)/1_000_000
}

// firstSince is the first index stamped at or after since (may be past the lines written yet).
func (l rateLog) firstSince(since time.Time) int64 {
	if !since.After(l.started) {
		return 1
	}
	d := since.Sub(l.started)
	wait := int64(d / time.Microsecond)
	if d%time.Microsecond != 0 {
		wait++ // whole microseconds, rounded up
	}
	// ceil(wait*perSecond / 1e6) without overflow
	q, m := wait/1_000_000, wait%1_000_000
	return max(1, q*l.perSecond+(m*l.perSecond+999_999)/1_000_000)
}

// write writes the lines first to last (inclusive) in chunks of rateChunkLines at most, each flushed; false once the
// limit is reached or the client went.
func (l rateLog) write(out *limitedWriter, first, last int64, timestamps bool) bool {
	var b strings.Builder
	for start := first; start <= last; start += rateChunkLines {
		b.Reset()
		for i := start; i <= min(last, start+rateChunkLines-1); i++ {
			if timestamps {
				b.WriteString(l.stamp(i).UTC().Format(logTimeFormat))
				b.WriteByte(' ')
			}
			b.WriteString(l.text(i))
			b.WriteByte('\n')
		}
		ok := out.write(b.String())
		out.flush()
		if !ok {
			return false
		}
	}
	return true
}

// selectRate is what a request reads of a log at rate l: the startup lines it keeps and the first and last index of
// the rate lines it reads (first > last: none) — since by their stamps, tailLines across both, the retained ones only.
func selectRate(lines []logLine, l rateLog, o logOptions, now time.Time) ([]logLine, int64, int64) {
	last := l.written(now)
	first := max(1, last-rateRetainedLines+1)
	if !o.since.IsZero() {
		first = max(first, l.firstSince(o.since))
		var kept []logLine
		for _, line := range lines {
			if !line.at.Before(o.since) {
				kept = append(kept, line)
			}
		}
		lines = kept
	}
	if o.stream == string(corev1.LogStreamStderr) {
		return nil, last + 1, last
	}
	if o.tailLines >= 0 {
		count := max(0, last-first+1)
		if o.tailLines <= count {
			first, lines = last-o.tailLines+1, nil
		} else if keep := o.tailLines - count; keep < int64(len(lines)) {
			lines = lines[int64(len(lines))-keep:]
		}
	}
	return lines, first, last
}

// rateLog answers the log of a container writing at rate l: what the request selects, then while following the lines
// whose time came, batched per write, until the client goes or the pod does.
func (k *kubelet) rateLog(ctx context.Context, out *limitedWriter, l rateLog, lines []logLine, o logOptions, pod *corev1.Pod) {
	kept, first, last := selectRate(lines, l, o, time.Now())
	writeLines(out, kept, logOptions{timestamps: o.timestamps, tailLines: -1})
	if out.full() || !l.write(out, first, last, o.timestamps) || !o.follow || o.stream == string(corev1.LogStreamStderr) {
		return
	}
	following := max(first, last+1) // the next line to write
	for {
		if now := time.Now(); following > l.written(now) { // caught up: wait for the next line's time (a tick at least)
			wait := min(followInterval, max(rateTick, l.stamp(following).Sub(now)))
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		} else if ctx.Err() != nil {
			return
		}
		if current, err := k.pods.Pods(pod.Namespace).Get(pod.Name); err != nil || current.UID != pod.UID {
			return // the pod is gone: its containers' streams end
		}
		last = l.written(time.Now())
		following = max(following, last-rateRetainedLines+1) // a reader far behind: rotated away
		if upto := min(last, following+rateChunkLines-1); upto >= following {
			if !l.write(out, following, upto, o.timestamps) {
				return
			}
			following = upto + 1
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
	out.flush()
}

// limitedWriter stops after limitBytes (cutting a line, as the kubelet does); left < 0 means no limit.
type limitedWriter struct {
	w    http.ResponseWriter
	left int64
}

func (l *limitedWriter) full() bool { return l.left == 0 }

func (l *limitedWriter) flush() {
	if flusher, ok := l.w.(http.Flusher); ok {
		flusher.Flush()
	}
}

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
