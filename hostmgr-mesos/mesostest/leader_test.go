package mesostest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// A master that is not the leader answers every call 307 with the
// leader's address in Location; one that knows no leader answers 503
// (endpoints/master/api/v1/scheduler.md); the leader answers again once
// it leads.
func TestNonLeadingMasterRedirectsOrIsUnavailable(t *testing.T) {
	m := New(Config{})
	srv := httptest.NewServer(m)
	defer srv.Close()
	body := []byte(`{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"test"}}}`)

	m.SetRedirect("10.0.0.2:5050")
	resp := post(t, srv.URL, typeJSON, body, nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != "//10.0.0.2:5050"+Path {
		t.Errorf("standby: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	m.SetNoLeader()
	resp = post(t, srv.URL, typeJSON, []byte(`{"type":"REVIVE","framework_id":{"value":"x"}}`), nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("no leader: %d, want 503", resp.StatusCode)
	}
	if s := m.Stats(); s.Redirects != 1 || s.Unavailable != 1 {
		t.Errorf("stats: %d redirects, %d unavailable", s.Redirects, s.Unavailable)
	}
	m.SetRedirect("")
	resp, _, _ = subscribeJSON(t, srv.URL)
	resp.Body.Close()
}
