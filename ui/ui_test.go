package ui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("GET "+Prefix, Handler())
	mux.HandleFunc("GET /{$}", Redirect)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	for _, tc := range []struct {
		path, wantType, wantBody string
		wantCode                 int
	}{
		{"/ui/", "text/html", `<div id="app">`, 200},
		{"/ui/jobs/abc", "text/html", `<div id="app">`, 200},
		{"/ui/jobs/abc/tasks/3", "text/html", `/ui/assets/app.js`, 200},
		{"/ui/assets/app.js", "text/javascript", "", 200},
		{"/ui/assets/index.css", "text/css", "", 200},
		{"/ui/assets/missing.js", "", "", 404},
	} {
		resp, err := noRedirect.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.wantCode {
			t.Errorf("%s: status %d, want %d", tc.path, resp.StatusCode, tc.wantCode)
			continue
		}
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.wantType) {
			t.Errorf("%s: content type %q, want %q", tc.path, resp.Header.Get("Content-Type"), tc.wantType)
		}
		if !strings.Contains(string(body), tc.wantBody) {
			t.Errorf("%s: body lacks %q:\n%.300s", tc.path, tc.wantBody, body)
		}
	}

	resp, err := noRedirect.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != Prefix {
		t.Fatalf("/: %d to %q, want 302 to %s", resp.StatusCode, resp.Header.Get("Location"), Prefix)
	}
}
