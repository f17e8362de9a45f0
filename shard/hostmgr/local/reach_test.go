package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reachable lets the users tasks run as search every directory from the
// temporary root down to dir, as t.TempDir makes them 0700: a test that
// puts a plugin's Dir there, or files a task reads, calls it.
func reachable(t *testing.T, dir string) string {
	t.Helper()
	root := filepath.Clean(os.TempDir())
	for d := filepath.Clean(dir); d != root && strings.HasPrefix(d, root+"/"); d = filepath.Dir(d) {
		info, err := os.Stat(d)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, info.Mode().Perm()|0o011); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
