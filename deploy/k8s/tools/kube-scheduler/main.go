// Command kube-scheduler is the upstream Kubernetes scheduler, built from
// the k8s.io/kubernetes module as the baseline for the side-by-side benchmark.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}
