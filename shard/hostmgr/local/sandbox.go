package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/peloton-federated/peloton/shard/hostmgr"
	"github.com/peloton-federated/peloton/shard/model"
)

// DefaultPath is a task's PATH when neither the task, the plugin's Config
// nor the server's environment gives one.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Environment variables the local plugin sets besides the shard's.
const (
	EnvRunID   = "PELOTON_RUN_ID"
	EnvHostID  = "PELOTON_HOST_ID"
	EnvSandbox = "PELOTON_SANDBOX"
	// EnvVolumePrefix starts the variable holding a volume's directory:
	// PELOTON_VOLUME_<NAME>, see VolumeEnv.
	EnvVolumePrefix = "PELOTON_VOLUME_"
)

// VolumeEnv is the variable a task finds its volume's directory in: a
// process on the host cannot have the volume mounted at Volume.Path, so the
// local plugin hands it the directory instead. The name is upper-cased with
// '-' and '.' as '_', as for PORT_<NAME>.
func VolumeEnv(name string) string {
	return EnvVolumePrefix + strings.TrimPrefix(model.PortEnv(name), "PORT_")
}

// runEnv is a run's whole environment, sorted, in layers where a later one
// wins: the base (PATH, HOME=<sandbox>), the task spec's Env, the shard's
// Launch.Env, then the plugin's own variables (PELOTON_RUN_ID,
// PELOTON_HOST_ID, PELOTON_SANDBOX, PELOTON_VOLUME_<NAME>,
// PELOTON_GANG_FILE). Nothing comes from the server's environment but,
// unless configured, its PATH. The executor adds PWD=<sandbox> when it
// starts the command.
func runEnv(path string, l hostmgr.Launch, own map[string]string) []string {
	env := map[string]string{"PATH": path, "HOME": own[EnvSandbox]}
	maps.Copy(env, l.Task.Env)
	maps.Copy(env, l.Env)
	maps.Copy(env, own)
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// checkEnvNames returns why a variable name cannot be set, or "".
func checkEnvNames(what string, env map[string]string) string {
	for k := range env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Sprintf("%s name %q is not valid", what, k)
		}
	}
	return ""
}

// volumeDir is where a volume lives on this host.
func (p *Plugin) volumeDir(id string) string {
	return filepath.Join(p.cfg.Dir, "volumes", pathElement(id))
}

// prepareVolumes creates the run's volume directories (kept when they
// exist), gives them with all they hold to the run's user, 0700, and
// returns their variables.
func (p *Plugin) prepareVolumes(vols []hostmgr.VolumeMount, env map[string]string, user *runUser) error {
	if len(vols) == 0 {
		return nil
	}
	parent := filepath.Join(p.cfg.Dir, "volumes")
	if err := os.MkdirAll(parent, traverseDirMode); err != nil {
		return fmt.Errorf("creating volumes: %w", err)
	}
	if err := os.Chmod(parent, traverseDirMode); err != nil {
		return fmt.Errorf("creating volumes: %w", err)
	}
	for _, v := range vols {
		if v.ID == "" || v.Volume.Name == "" {
			return fmt.Errorf("volume %q of id %q: both a name and an id are needed", v.Volume.Name, v.ID)
		}
		dir := p.volumeDir(v.ID)
		if err := os.Mkdir(dir, privateDirMode); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("creating volume %s: %w", v.ID, err)
		}
		if err := os.Chmod(dir, privateDirMode); err != nil {
			return fmt.Errorf("creating volume %s: %w", v.ID, err)
		}
		if err := chownTree(dir, user); err != nil {
			return fmt.Errorf("giving volume %s to the run's user: %w", v.ID, err)
		}
		env[VolumeEnv(v.Volume.Name)] = dir
	}
	return nil
}

// RemoveVolumes deletes the directories of volumes on this host; volumes
// that do not exist are not an error. It implements hostmgr.VolumeRemover.
func (p *Plugin) RemoveVolumes(ctx context.Context, host model.HostID, ids []string) error {
	if host != p.host.ID {
		return fmt.Errorf("%w: %q", ErrUnknownHost, host)
	}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return err
		}
		if id == "" {
			return fmt.Errorf("removing volumes: empty volume id")
		}
		if err := os.RemoveAll(p.volumeDir(id)); err != nil {
			return fmt.Errorf("removing volume %s: %w", id, err)
		}
		p.log.Info("volume removed", "volume", id)
	}
	return nil
}

// writeGangFile writes the gang's members to hostmgr.GangFileName in the
// sandbox, the run's user's and 0600, and returns its path: a JSON list of
// hostmgr.GangMember, the same document the shard puts in PELOTON_GANG.
func writeGangFile(sandbox string, gang []hostmgr.GangMember, user *runUser) (string, error) {
	data, err := json.Marshal(gang)
	if err != nil {
		return "", err
	}
	path := filepath.Join(sandbox, hostmgr.GangFileName)
	if err := os.WriteFile(path, append(data, '\n'), privateFileMode); err != nil {
		return "", fmt.Errorf("writing gang file: %w", err)
	}
	if err := chownTo(path, user); err != nil {
		return "", fmt.Errorf("writing gang file: %w", err)
	}
	return path, nil
}
