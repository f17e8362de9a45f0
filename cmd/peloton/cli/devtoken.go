package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// A `peloton dev` cluster makes a token at start and refuses calls
// without it. It keeps the token in two files, each 0600: <data-dir>/token,
// and one per address it listens on, <config dir>/peloton/dev/<host>_<port>.token,
// where clients on this machine find it (the CLI, and the Python and Java
// clients, look there when they are given no token and call a loopback
// address). Other users cannot read either file.

// DevTokenFile is where the token of a dev cluster listening on addr
// ("host:port") is kept for clients to find.
func DevTokenFile(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	host = strings.Trim(host, "[]")
	return filepath.Join(dir, "peloton", "dev", host+"_"+port+".token"), nil
}

// WriteDevToken keeps token for clients calling addr; the directory is
// made 0700 and the file 0600.
func WriteDevToken(addr, token string) (string, error) {
	path, err := DevTokenFile(addr)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	return path, WritePrivate(path, token+"\n")
}

// RemoveDevToken removes the file kept for addr if it still holds token
// (another dev cluster on the same address may have replaced it).
func RemoveDevToken(addr, token string) error {
	path, err := DevTokenFile(addr)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(path)
	if err != nil || strings.TrimSpace(string(raw)) != token {
		return nil
	}
	return os.Remove(path)
}

// WritePrivate writes a file only its owner may read (0600), through a
// temporary file renamed over it.
func WritePrivate(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// FindDevToken returns the token a dev cluster on the loopback address
// target ("host:port") keeps for its user's clients, or "" when there is
// none or target is not loopback. "localhost" also finds a cluster on
// 127.0.0.1 or ::1.
func FindDevToken(target string) (string, error) {
	host, port, err := net.SplitHostPort(target)
	if err != nil || !loopbackTarget(target) {
		return "", nil
	}
	hosts := []string{host}
	if host == "localhost" {
		hosts = append(hosts, "127.0.0.1", "::1")
	}
	for _, h := range hosts {
		path, err := DevTokenFile(net.JoinHostPort(h, port))
		if err != nil {
			return "", nil
		}
		raw, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("the dev cluster's token: %w", err)
		}
		return strings.TrimSpace(string(raw)), nil
	}
	return "", nil
}
