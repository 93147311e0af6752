// Command realcluster runs a real Kubernetes control plane on loopback for the product's tests:
// embedded etcd, kube-apiserver, kube-controller-manager and kube-scheduler built from the Kubernetes
// Go modules, and a simulated node that makes scheduled pods Running and Ready (kwok's job).
//
// It is one multi-call binary. `realcluster up` (the default) owns the data dir, the certificates,
// etcd and the node simulator, and re-executes itself as `realcluster kube-apiserver ...`,
// `realcluster kube-controller-manager ...` and `realcluster kube-scheduler ...` children, so each
// component keeps its process-wide globals (flags, feature gates, klog, metrics, signal handler) to
// itself and stops on SIGTERM as it does in a real cluster.
//
// Test infrastructure only: the product (Python) never imports or needs it.
package main

import (
	"fmt"
	"os"
	_ "time/tzdata" // CronJob time zones, as the upstream binaries do

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

// components maps a child's argv[1] to the upstream cobra command that runs it.
var components = map[string]func() *cobra.Command{
	"kube-apiserver":          apiserver.NewAPIServerCommand,
	"kube-controller-manager": controllermanager.NewControllerManagerCommand,
	"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
}

func main() {
	if len(os.Args) > 1 {
		if newCommand, ok := components[os.Args[1]]; ok {
			command := newCommand()
			command.SetArgs(os.Args[2:])
			os.Exit(cli.Run(command))
		}
	}
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "up" {
		args = args[1:]
	}
	if len(args) > 0 && (args[0] == "version" || args[0] == "--version") {
		fmt.Println(kubernetesVersion())
		return
	}
	os.Exit(runUp(args))
}
