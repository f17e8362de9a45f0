package ui

import (
	"bytes"
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed all:dist
var dist embed.FS

// Prefix is where the UI is served; the app's links assume it.
const Prefix = "/ui/"

// AuthConfigPath answers, without credentials, how one signs in (the
// gateway serves it); OIDCRedirectPath is the page an OIDC issuer sends
// the browser back to with the code (the redirect URI to register with
// the issuer is the server's origin followed by it). The app knows both.
const (
	AuthConfigPath   = "/ui/auth-config"
	OIDCRedirectPath = "/ui/signin/oidc"
)

// Handler serves the built app under Prefix. A path that names no file (a
// page of the app, such as /ui/jobs/<id>) gets index.html, so that links to
// pages work; the app reads the page from the address.
func Handler() http.Handler {
	files, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // the embed pattern above guarantees dist exists
	}
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		index = []byte("the web UI was not built: run make ui\n")
	}
	return http.StripPrefix(strings.TrimSuffix(Prefix, "/"), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		// File names are fixed (no content hash), so browsers check back.
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if name != "" && name != "index.html" {
			if data, err := fs.ReadFile(files, name); err == nil {
				http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
				return
			}
			if path.Ext(name) != "" {
				http.NotFound(w, r)
				return
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(index))
	}))
}

// Redirect sends / to the UI.
func Redirect(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, Prefix, http.StatusFound)
}
