package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// A dev cluster's token is kept 0600 for its address; the CLI finds it
// for that address (and for localhost when the cluster is on 127.0.0.1),
// not for another; it is removed only by the cluster that wrote it.
func TestDevTokenFiles(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	path, err := WriteDevToken("127.0.0.1:5390", "pel_a")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v %v, want mode 0600", path, st.Mode(), err)
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("%s: %v %v, want mode 0700", filepath.Dir(path), st.Mode(), err)
	}
	for target, want := range map[string]string{"127.0.0.1:5390": "pel_a", "localhost:5390": "pel_a", "127.0.0.1:5391": "", "[::1]:5390": ""} {
		if got, err := FindDevToken(target); err != nil || got != want {
			t.Errorf("FindDevToken(%s) = %q, %v; want %q", target, got, err, want)
		}
	}
	if err := RemoveDevToken("127.0.0.1:5390", "pel_other"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal("a cluster removed another cluster's token file")
	}
	if err := RemoveDevToken("127.0.0.1:5390", "pel_a"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("token file still there after its cluster removed it: %v", err)
	}
}
