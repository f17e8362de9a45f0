package core

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// sourceFiles parses the package's own files, tests left out.
func sourceFiles(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) < 10 {
		t.Fatalf("found %d files of the core; the glob missed them", len(files))
	}
	return fset, files
}

// The core imports no lock, no store, no clock and nothing that does I/O
// or runs goroutines of its own: the Engine (shard/jobmgr) holds those.
func TestCoreImportsNoLockStoreOrClock(t *testing.T) {
	forbidden := []string{"sync", "sync/atomic", "context", "os", "net", "net/http", "io", "time/tzdata",
		"github.com/peloton-federated/peloton/shard/store", "github.com/peloton-federated/peloton/shard/clock",
		"github.com/peloton-federated/peloton/shard/jobmgr"}
	fset, files := sourceFiles(t)
	for _, f := range files {
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %s", fset.Position(imp.Pos()).Filename, path)
				}
			}
		}
	}
}

// The core's state holds no channel, lock or atomic: none of its fields is
// one, or holds one by value or through this package's types.
func TestStateHoldsNoChannelOrLock(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(path string, ty reflect.Type)
	walk = func(path string, ty reflect.Type) {
		switch {
		case ty.Kind() == reflect.Chan:
			t.Errorf("%s is a channel (%s)", path, ty)
			return
		case ty.PkgPath() == "sync" || ty.PkgPath() == "sync/atomic":
			t.Errorf("%s is a lock or atomic (%s)", path, ty)
			return
		case seen[ty]:
			return
		}
		seen[ty] = true
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(path, ty.Elem())
		case reflect.Map:
			walk(path, ty.Key())
			walk(path, ty.Elem())
		case reflect.Struct:
			if ty.PkgPath() != reflect.TypeFor[State]().PkgPath() && ty.PkgPath() != "" {
				return // another package's value: a pure core of its own, or the host cache (docs/core.md)
			}
			for i := range ty.NumField() {
				f := ty.Field(i)
				walk(path+"."+f.Name, f.Type)
			}
		}
	}
	walk("State", reflect.TypeFor[State]())
}

// Nothing in the core reads the wall clock or waits: the time is handed in.
func TestCoreReadsNoClock(t *testing.T) {
	fset, files := sourceFiles(t)
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "time" {
				switch sel.Sel.Name {
				case "Now", "Since", "Until", "After", "AfterFunc", "Sleep", "NewTimer", "NewTicker", "Tick":
					t.Errorf("%s: time.%s", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
}
