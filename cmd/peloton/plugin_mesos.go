package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	mesos "github.com/peloton-federated/peloton/hostmgr-mesos"
	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/store"
	"github.com/peloton-federated/peloton/shard/store/kinds"
)

// frameworkIDValue adapts the store's named values to the Mesos plugin's
// FrameworkIDStore under "mesos/<cluster>/framework-id".
type frameworkIDValue struct {
	values store.RecordStore
	key    string
}

func (f frameworkIDValue) LoadFrameworkID(ctx context.Context) (string, error) {
	b, err := kinds.GetValue(ctx, f.values, f.key)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return string(b), err
}

func (f frameworkIDValue) SaveFrameworkID(ctx context.Context, id string) error {
	return kinds.PutValue(ctx, f.values, f.key, []byte(id))
}

func init() {
	registerPluginKind("mesos", "an Apache Mesos cluster: master=URL[|URL2...],role=R,name=FRAMEWORK,failover=D,hold=D,launch-wait=D,reconcile=D,unreachable-wait=D,encoding=protobuf|json", func(s *pluginSpec, env pluginEnv) (hostmgr.Plugin, error) {
		masters := s.param("master", "")
		if masters == "" {
			return nil, fmt.Errorf("--hosts %s: master=URL is required (several as URL1|URL2)", s.Name)
		}
		cfg := mesos.Config{
			Cluster:       s.Name,
			Masters:       strings.Split(masters, "|"),
			Role:          s.param("role", mesos.DefaultRole),
			FrameworkName: s.param("name", mesos.DefaultFrameworkName),
			User:          s.param("user", mesos.DefaultUser),
			Principal:     s.param("principal", ""),
			Logger:        env.Logger,
		}
		var err error
		if cfg.FailoverTimeout, err = s.durationParam("failover", mesos.DefaultFailoverTimeout); err != nil {
			return nil, err
		}
		if cfg.OfferHold, err = s.durationParam("hold", mesos.DefaultOfferHold); err != nil {
			return nil, err
		}
		if cfg.LaunchWait, err = s.durationParam("launch-wait", mesos.DefaultLaunchWait); err != nil {
			return nil, err
		}
		if cfg.ReconcileInterval, err = s.durationParam("reconcile", mesos.DefaultReconcileInterval); err != nil {
			return nil, err
		}
		if cfg.UnreachableWait, err = s.durationParam("unreachable-wait", mesos.DefaultUnreachableWait); err != nil {
			return nil, err
		}
		// gpu-capability=false (test only, not advertised) subscribes
		// without GPU_RESOURCES.
		switch v := s.param("gpu-capability", "true"); v {
		case "true":
		case "false":
			cfg.WithoutGPUCapability = true
		default:
			return nil, fmt.Errorf("--hosts %s: gpu-capability=%q: must be true or false", s.Name, v)
		}
		switch enc := s.param("encoding", "protobuf"); enc {
		case "protobuf":
		case "json":
			cfg.JSON = true
		default:
			return nil, fmt.Errorf("--hosts %s: encoding=%q: must be protobuf or json", s.Name, enc)
		}
		if env.Store != nil {
			cfg.FrameworkIDs = frameworkIDValue{values: env.Store, key: "mesos/" + s.Name + "/framework-id"}
		}
		p, err := mesos.New(cfg)
		if err != nil {
			return nil, fmt.Errorf("--hosts %s: %w", s.Name, err)
		}
		return p, nil
	})
}
