package gateway

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
)

// The front door of the HTTP side: checks that reveal nothing and need no
// credentials, made before anything else reads the request. Browsers and
// other local users reach even a loopback port, so a page of another site
// must not be able to drive the API:
//
//   - Host (DNS rebinding): a page of evil.example whose name is made to
//     resolve to this server's address sends Host: evil.example. The
//     request's Host must be one of the server's names (serverNames):
//     421 Misdirected Request otherwise.
//   - Origin (cross-site requests): a request that may change something
//     (any method but GET, HEAD and OPTIONS) sent by a page of another
//     origin carries that Origin, or Sec-Fetch-Site: cross-site. Only the
//     server's own origin passes: 403 otherwise, audited as a refusal.
//     A request without either (the CLI, curl, the clients) passes, and
//     still needs credentials.
//   - Content-Type: the API reads JSON only. A request of the API with a
//     body, or a Content-Type, that is not application/json gets 415. A
//     form or text/plain body is what a browser sends across sites without
//     asking first (a "simple" request), so refusing it closes that door
//     even where Origin is missing.
//
// gRPC (HTTP/2 with Content-Type application/grpc) is not checked here:
// gRPC clients send their dial target as :authority, which is whatever
// address they were given (a region dialled at an address gossip gave
// it, a load balancer's name), and no browser can send a gRPC request (it
// cannot set application/grpc across origins without a preflight, which
// the server does not answer). Calls between regions are authenticated by
// their certificates instead.

// serverNames are the host names a server answers to.
type serverNames struct {
	exact map[string]bool
	// wildcards are the domains of wildcard DNS names ("*.example.com"
	// holds "example.com"): one more label in front matches.
	wildcards []string
}

// loopbackNames are the names of a server that listens on loopback.
var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

// newServerNames collects a server's names: the host of its listen
// address (as configured, and as bound), localhost and the loopback
// addresses when it listens on loopback; when it listens on every
// interface, those and the machine's addresses and host name; the names
// of its TLS certificates (DNS names and IP addresses); and names, the
// configured ones.
func newServerNames(configured string, bound net.Addr, tlsCfg *tls.Config, names []string) *serverNames {
	s := &serverNames{exact: map[string]bool{}}
	add := func(n string) {
		n = normalHost(n)
		switch {
		case n == "":
		case strings.HasPrefix(n, "*."):
			s.wildcards = append(s.wildcards, n[2:])
		default:
			s.exact[n] = true
		}
	}
	if h, _, err := net.SplitHostPort(configured); err == nil {
		add(h)
	}
	if tcp, ok := bound.(*net.TCPAddr); ok {
		switch {
		case tcp.IP.IsUnspecified():
			for _, n := range loopbackNames {
				add(n)
			}
			if addrs, err := net.InterfaceAddrs(); err == nil {
				for _, a := range addrs {
					if ipn, ok := a.(*net.IPNet); ok {
						add(ipn.IP.String())
					}
				}
			}
			if h, err := os.Hostname(); err == nil {
				add(h)
			}
		case tcp.IP.IsLoopback():
			for _, n := range loopbackNames {
				add(n)
			}
			add(tcp.IP.String())
		default:
			add(tcp.IP.String())
		}
	}
	for _, c := range certificates(tlsCfg) {
		for _, n := range c.DNSNames {
			add(n)
		}
		for _, ip := range c.IPAddresses {
			add(ip.String())
		}
	}
	for _, n := range names {
		add(n)
	}
	return s
}

// certificates are the leaf certificates a TLS configuration serves.
func certificates(cfg *tls.Config) []*x509.Certificate {
	if cfg == nil {
		return nil
	}
	var out []*x509.Certificate
	for _, c := range cfg.Certificates {
		leaf := c.Leaf
		if leaf == nil && len(c.Certificate) > 0 {
			leaf, _ = x509.ParseCertificate(c.Certificate[0])
		}
		if leaf != nil {
			out = append(out, leaf)
		}
	}
	return out
}

// normalHost is a host name as names compare: lower case, no brackets
// around an IPv6 address, no trailing dot.
func normalHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(h, ".")
}

// splitHost splits a Host header or an origin's host into name and port
// ("" when none is given).
func splitHost(hostport string) (host, port string) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		return normalHost(h), p
	}
	return normalHost(hostport), ""
}

// has tells whether host (no port) is one of the names.
func (s *serverNames) has(host string) bool {
	host = normalHost(host)
	if s.exact[host] {
		return true
	}
	if ip := net.ParseIP(host); ip != nil {
		return s.exact[ip.String()]
	}
	for _, d := range s.wildcards {
		if rest, ok := strings.CutSuffix(host, "."+d); ok && rest != "" && !strings.Contains(rest, ".") {
			return true
		}
	}
	return false
}

func (s *serverNames) String() string {
	out := make([]string, 0, len(s.exact)+len(s.wildcards))
	for n := range s.exact {
		out = append(out, n)
	}
	for _, d := range s.wildcards {
		out = append(out, "*."+d)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// front checks an HTTP request before anything else reads it (see the top
// of this file), and adds the headers every answer carries.
type front struct {
	names *serverNames
	// refused is told of each request refused here that may mutate, for
	// the audit log.
	refused func(r *http.Request, code codes.Code, msg string)
	// connect are more origins the UI's pages may call (the OIDC
	// issuer's, for signing in); nil: none.
	connect func() []string
}

// safeMethod: a method that changes nothing (the API's reads, the UI).
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

func (f *front) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		if isUI(r.URL.Path) {
			for k, v := range uiHeaders {
				h.Set(k, v)
			}
			if f.connect != nil {
				if origins := f.connect(); len(origins) > 0 {
					h.Set("Content-Security-Policy", uiCSPConnecting(origins))
				}
			}
		}
		if msg := f.hostProblem(r); msg != "" {
			f.refuse(w, r, http.StatusMisdirectedRequest, codes.PermissionDenied, msg)
			return
		}
		if msg := f.originProblem(r); msg != "" {
			f.refuse(w, r, http.StatusForbidden, codes.PermissionDenied, msg)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/v1/") && !safeMethod(r.Method) {
			if msg := bodyTypeProblem(r); msg != "" {
				writeHTTPError(w, http.StatusUnsupportedMediaType, codes.InvalidArgument, msg)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (f *front) refuse(w http.ResponseWriter, r *http.Request, httpStatus int, code codes.Code, msg string) {
	if !safeMethod(r.Method) && f.refused != nil {
		f.refused(r, code, msg)
	}
	writeHTTPError(w, httpStatus, code, msg)
}

// hostProblem says why the request's Host is not one of the server's
// names, or "". A request without a Host (HTTP/1.0) is no browser's.
func (f *front) hostProblem(r *http.Request) string {
	if r.Host == "" {
		return ""
	}
	host, _ := splitHost(r.Host)
	if f.names.has(host) {
		return ""
	}
	return fmt.Sprintf("Host %q is not a name of this server (%s): a name it should answer to goes in its config's names", r.Host, f.names)
}

// originProblem says why a request that may mutate comes from a page of
// another origin, or "".
func (f *front) originProblem(r *http.Request) string {
	if safeMethod(r.Method) {
		return ""
	}
	// same-site is another port or subdomain of this host: another
	// origin all the same.
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		return fmt.Sprintf("a %s request (Sec-Fetch-Site: %s): only this server's own pages may change anything", r.Method, site)
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	refused := fmt.Sprintf("Origin %q is not this server's own: a page of another site may not change anything here", origin)
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.Path != "" && u.Path != "/" {
		return refused
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	oHost, oPort := splitHost(u.Host)
	rHost, rPort := splitHost(r.Host)
	if u.Scheme != scheme || !f.names.has(oHost) || oHost != rHost || withDefaultPort(oPort, scheme) != withDefaultPort(rPort, scheme) {
		return refused
	}
	return ""
}

func withDefaultPort(port, scheme string) string {
	if port != "" {
		return port
	}
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// bodyTypeProblem says why a request of the API that may mutate is not
// read: it has a body, or a Content-Type, other than application/json
// (in UTF-8, the one charset JSON has). A missing Content-Type with a
// body is refused too: `curl -d` sends form-urlencoded, and a client that
// sends JSON says so.
func bodyTypeProblem(r *http.Request) string {
	ct := r.Header.Get("Content-Type")
	hasBody := r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
	if ct == "" && !hasBody {
		return ""
	}
	const want = "send JSON with the header Content-Type: application/json"
	if ct == "" {
		return "the request has a body and no Content-Type header: " + want
	}
	mt, params, err := mime.ParseMediaType(ct)
	switch {
	case err != nil:
		return fmt.Sprintf("Content-Type %q cannot be read: %s", ct, want)
	case mt != "application/json":
		return fmt.Sprintf("the body is %s (Content-Type header): %s", mt, want)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return fmt.Sprintf("the body is in charset %s (Content-Type header): %s in UTF-8", cs, want)
	}
	return ""
}

// isUI tells the paths that serve the web UI (and / that leads to it).
func isUI(path string) bool { return path == "/" || path == "/ui" || strings.HasPrefix(path, "/ui/") }

// uiCSP is the UI's content security policy: everything from this
// server, nothing inline (the built index.html has no inline script or
// style; the app sets styles through the DOM, which style-src does not
// govern), images also as data: URLs (the favicon is "data:,"), and no
// framing.
const uiCSP = "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
	"font-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'"

// uiCSPConnecting is the UI's content security policy letting its
// scripts also call origins (an OIDC issuer's token endpoint: signing in
// posts the code there from the page).
func uiCSPConnecting(origins []string) string {
	return strings.Replace(uiCSP, "connect-src 'self';", "connect-src 'self' "+strings.Join(origins, " ")+";", 1)
}

// uiHeaders go on every answer of the UI.
var uiHeaders = map[string]string{
	"Content-Security-Policy": uiCSP,
	"X-Frame-Options":         "DENY",
	"Referrer-Policy":         "no-referrer",
}
