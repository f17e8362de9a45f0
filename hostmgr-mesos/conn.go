package mesos

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	mesoslib "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/client"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/apierrors"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// maxRedirects bounds how many 307s one SUBSCRIBE follows.
const maxRedirects = 5

// conn is one subscription: the leading master's endpoint, the stream id
// every call must carry, and the event stream.
type conn struct {
	endpoint    string
	streamID    string
	frameworkID string
	calls       *httpcli.Client
	events      mesoslib.Response
}

func (p *Plugin) codec() encoding.Codec {
	if p.cfg.JSON {
		return codecs.ByMediaType[codecs.MediaTypeJSON]
	}
	return codecs.ByMediaType[codecs.MediaTypeProtobuf]
}

// subscribe sends SUBSCRIBE to endpoint, following 307s to the leader,
// and returns the open stream.
func (p *Plugin) subscribe(ctx context.Context, endpoint string, call *scheduler.Call) (*conn, error) {
	for hop := 0; ; hop++ {
		streamClient := httpcli.New(httpcli.Endpoint(endpoint), httpcli.Codec(p.codec()),
			httpcli.Do(httpcli.With(httpcli.Transport(func(t *http.Transport) {
				t.ResponseHeaderTimeout = p.cfg.CallTimeout
			}))))
		resp, err := streamClient.Send(client.RequestSingleton(call), client.ResponseClassStreaming,
			httpcli.Close(true), httpcli.Context(ctx))
		if err != nil {
			if apierrors.CodeNotLeader.Matches(err) && hop < maxRedirects {
				next, ok := leaderEndpoint(resp, endpoint)
				if resp != nil {
					resp.Close()
				}
				if !ok {
					return nil, fmt.Errorf("%w: 307 from %s without a usable Location", ErrSubscribe, endpoint)
				}
				p.log.Info("following the leading master", "from", endpoint, "to", next)
				endpoint = next
				continue
			}
			if resp != nil {
				resp.Close()
			}
			return nil, fmt.Errorf("%w: %s: %v", ErrSubscribe, endpoint, err)
		}
		hr, ok := resp.(*httpcli.Response)
		if !ok || hr.Header.Get("Mesos-Stream-Id") == "" {
			resp.Close()
			return nil, fmt.Errorf("%w: %s: no Mesos-Stream-Id header", ErrSubscribe, endpoint)
		}
		// Every call carries its own deadline (call); a client timeout on
		// top would add a timer and a goroutine to each of them.
		calls := httpcli.New(httpcli.Endpoint(endpoint), httpcli.Codec(p.codec()),
			httpcli.Do(httpcli.With(httpcli.Transport(func(t *http.Transport) {
				t.MaxIdleConnsPerHost = 2 * p.cfg.CallWorkers
				t.ResponseHeaderTimeout = p.cfg.CallTimeout
			}))))
		return &conn{endpoint: endpoint, streamID: hr.Header.Get("Mesos-Stream-Id"), calls: calls, events: resp}, nil
	}
}

// leaderEndpoint resolves a 307's Location against the current endpoint:
// the leader's host with the current scheme and path, as masters send
// "//host:port" (sometimes with a path).
func leaderEndpoint(resp mesoslib.Response, current string) (string, bool) {
	hr, ok := resp.(*httpcli.Response)
	if !ok {
		return "", false
	}
	loc := hr.Header.Get("Location")
	if loc == "" {
		return "", false
	}
	lu, err := url.Parse(loc)
	if err != nil {
		return "", false
	}
	if lu.Host == "" {
		// "host:port" without "//" parses as a scheme or path.
		if lu2, err := url.Parse("//" + loc); err == nil && lu2.Host != "" {
			lu = lu2
		} else {
			return "", false
		}
	}
	cu, err := url.Parse(current)
	if err != nil {
		return "", false
	}
	cu.Host = lu.Host
	return cu.String(), true
}

// call sends a non-SUBSCRIBE call on c and waits for 202.
func (p *Plugin) call(ctx context.Context, c *conn, call *scheduler.Call) error {
	if c == nil {
		return ErrNotConnected
	}
	id := mesoslib.FrameworkID{Value: c.frameworkID}
	call.FrameworkID = &id
	ctx, cancel := context.WithTimeout(ctx, p.cfg.CallTimeout)
	defer cancel()
	resp, err := c.calls.Send(client.RequestSingleton(call), client.ResponseClassAuto,
		httpcli.Header("Mesos-Stream-Id", c.streamID), httpcli.Context(ctx))
	if resp != nil {
		resp.Close()
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCall, call.Type, err)
	}
	return nil
}

// backoff doubles d up to max.
func backoff(d, lo, hi time.Duration) time.Duration {
	if d < lo {
		return lo
	}
	d *= 2
	if d > hi {
		return hi
	}
	return d
}
