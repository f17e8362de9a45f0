package main

import (
	"fmt"

	k8s "github.com/peloton-federated/peloton/hostmgr-k8s"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

func init() {
	registerPluginKind("k8s", "a Kubernetes cluster; pods bound by Peloton: kubeconfig=PATH,context=NAME,namespace=NS,qps=N (client-side limit; default none),burst=N,parallel=N (creates in flight; default 32),nodeGrace=D,image=IMG,keepFinished=D,ports=FROM-TO[+FROM-TO],volumeBase=DIR,storageClass=NAME",
		func(s *pluginSpec, env pluginEnv) (hostmgr.Plugin, error) {
			qps, err := s.floatParam("qps", 0)
			if err != nil {
				return nil, err
			}
			burst, err := s.intParam("burst", 0)
			if err != nil {
				return nil, err
			}
			parallel, err := s.intParam("parallel", 0)
			if err != nil {
				return nil, err
			}
			grace, err := s.durationParam("nodeGrace", k8s.DefaultNodeGrace)
			if err != nil {
				return nil, err
			}
			keep, err := s.durationParam("keepFinished", k8s.DefaultFinishedPodTTL)
			if err != nil {
				return nil, err
			}
			var ports []model.PortRange
			if v := s.param("ports", ""); v != "" {
				if ports, err = k8s.ParsePortRanges(v); err != nil {
					return nil, fmt.Errorf("--hosts %s: %w", s.Name, err)
				}
			}
			if qps < 0 || burst < 0 || parallel < 0 || grace <= 0 || keep <= 0 {
				return nil, fmt.Errorf("--hosts %s: qps, burst and parallel must be >= 0 (qps 0: no client-side limit), nodeGrace and keepFinished > 0", s.Name)
			}
			return k8s.New(k8s.Config{
				Cluster:           s.Name,
				Kubeconfig:        s.param("kubeconfig", ""),
				Context:           s.param("context", ""),
				Namespace:         s.param("namespace", ""),
				Image:             s.param("image", k8s.DefaultImage),
				SchedulerName:     s.param("schedulerName", k8s.DefaultSchedulerName),
				QPS:               float32(qps),
				Burst:             burst,
				LaunchParallelism: parallel,
				NodeGrace:         grace,
				FinishedPodTTL:    keep,
				Ports:             ports,
				VolumeBasePath:    s.param("volumeBase", k8s.DefaultVolumeBasePath),
				StorageClass:      s.param("storageClass", k8s.DefaultStorageClass),
				Logger:            env.Logger,
			})
		})
}
