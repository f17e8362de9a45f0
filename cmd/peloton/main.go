package main
import (
 _ "google.golang.org/protobuf/proto"
 _ "google.golang.org/grpc"
 _ "github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
 _ "go.etcd.io/bbolt"
 _ "github.com/spf13/cobra"
 _ "github.com/prometheus/client_golang/prometheus"
 _ "sigs.k8s.io/yaml"
)
func main(){}
