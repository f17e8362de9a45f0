// Command etcd is the etcd server Kubernetes v1.34 is built against, so the
// API server can use etcd's watch progress requests (which Debian's older
// etcd lacks) and serve watch-list streams to clients such as kwok.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
