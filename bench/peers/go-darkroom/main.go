// Command go-darkroom is the Go peer of bench/reconcile.py: the seed's Darkroom operator (a kubebuilder /
// controller-runtime program) written the way a controller-runtime user would write it today. It is a benchmark
// peer, not product code: started only by bench/reconcile.py (never by the product or the tests), built by
// scripts/build_go_peer.sh into bin/go-darkroom.
//
//	bin/go-darkroom --kubeconfig K --namespace bench --workers 4 --metrics-bind-address 127.0.0.1:P \
//	    --health-probe-bind-address 127.0.0.1:Q
//
// It does the same work as darkroom_operator for a Darkroom (deployments.example.com/v1, read into a small
// hand-written type), so the benchmark compares runtimes, not features:
//
//   - For Darkrooms, Owns ConfigMaps, Deployments, Services and Ingresses (an event on a child enqueues its
//     controller owner); controller-runtime's cache, restricted to --namespace; --workers reconcile workers
//     (MaxConcurrentReconciles, default 1: controller-runtime's default); leader election off; client-side rate
//     limiting off (controller-runtime's default).
//   - Reconcile: server-side apply (field manager "go-peer", force) of the same four child bodies as the
//     reconciler builds (children.go ports operator/darkroom_operator/darkroomchildren.py: labels, controller
//     ownerReferences, config hash), then a JSON merge patch of the status subresource with status.domains,
//     observedGeneration, readyReplicas and the Ready condition (True when the Deployment is available and up to
//     date: the reconciler's rule), only when one of them changed, and a Normal "Ready" Event when Ready turns
//     True (the reconciler records the same one).
//
// How it differs from ours (operator/darkroom_operator): the seed applied all four children on every reconcile;
// this peer applies them only when status.observedGeneration is behind the Darkroom's generation or a child is
// missing from the cache (--always-apply restores the seed's behaviour). So a child someone edited is not
// repaired until the Darkroom changes, where ours compares every child with its desired body on every reconcile
// and periodic resync. It has no periodic resync (controller-runtime's SyncPeriod default, ~10 h, is far beyond
// a run), no host-conflict rule between Darkrooms, no S3 credentials checks, no Task or Postgresql controllers.
// On a restart the initial list reconciles every Darkroom once (its equivalent of kopf's on.resume), and a
// converged Darkroom costs no write.
//
// Reconciles are counted by controller-runtime's own metric, controller_runtime_reconcile_total{controller=
// "darkroom"}, served on --metrics-bind-address (off by default, "0"); /healthz and /readyz on
// --health-probe-bind-address. Every request carries the User-Agent "go-peer/1 ..." (the benchmark finds this
// peer's writes in the audit log by it).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

const (
	fieldManager = "go-peer"
	managedBy    = "go-peer"
	userAgent    = "go-peer/1"
)

func main() {
	// --kubeconfig is controller-runtime's own flag (registered on flag.CommandLine; ctrl.GetConfig reads it).
	namespace := flag.String("namespace", "", "watch and cache this namespace only (empty: all namespaces)")
	workers := flag.Int("workers", 1, "reconcile workers (MaxConcurrentReconciles)")
	metricsAddr := flag.String("metrics-bind-address", "0", `address of /metrics ("0": off)`)
	probeAddr := flag.String("health-probe-bind-address", ":8081", `address of /healthz and /readyz ("0": off)`)
	alwaysApply := flag.Bool("always-apply", false, "apply the four children on every reconcile (the seed's behaviour)")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	setup := ctrl.Log.WithName("setup")

	if err := run(*namespace, *workers, *metricsAddr, *probeAddr, *alwaysApply); err != nil {
		setup.Error(err, "go-darkroom stopped")
		os.Exit(1)
	}
}

func run(namespace string, workers int, metricsAddr, probeAddr string, alwaysApply bool) error {
	if workers < 1 {
		return fmt.Errorf("--workers must be >= 1, not %d", workers)
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.UserAgent = fmt.Sprintf("%s controller-runtime/%s", userAgent, moduleVersion("sigs.k8s.io/controller-runtime"))

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := addToScheme(scheme); err != nil {
		return err
	}
	cacheOpts := cache.Options{}
	if namespace != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Cache:                  cacheOpts,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         false,
	})
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	reconciler := &DarkroomReconciler{
		Client: mgr.GetClient(),
		// core/v1 Events (the older recorder): devcluster serves no events.k8s.io/v1, and ours posts core/v1 too.
		Recorder:    mgr.GetEventRecorderFor(fieldManager), //nolint:staticcheck
		AlwaysApply: alwaysApply,
	}
	if err := reconciler.SetupWithManager(mgr, workers); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

// moduleVersion is the version of a module compiled into this binary ("?" if unknown).
func moduleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == path {
				return dep.Version
			}
		}
	}
	return "?"
}
