package local

import (
	"path/filepath"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// reportRunning reports a run RUNNING with what its probes say now, read
// from the health file its executor keeps. With onChange it reports only
// when the verdicts differ from those last reported, at the time of the
// verdict.
func (p *Plugin) reportRunning(t *trackedRun, at time.Time, onChange bool) {
	st := p.status(t.id, model.TaskRunning, "", "", 0, at)
	p.mu.Lock()
	probed := t.probed
	p.mu.Unlock()
	if probed {
		var rec healthRecord
		ok, err := readJSON(filepath.Join(t.dir, healthFile), &rec)
		if err != nil {
			p.log.Warn("reading health", "run", t.id, "err", err)
		}
		if ok {
			st.Health, st.Ready = rec.states()
			st.Message = rec.Message
			if onChange && !rec.Time.IsZero() {
				st.Time = rec.Time
			}
		}
	}
	p.mu.Lock()
	if onChange && st.Health == t.health && st.Ready == t.ready {
		p.mu.Unlock()
		return
	}
	if st.Health != t.health || st.Ready != t.ready {
		p.log.Info("run health", "run", t.id, "health", st.Health, "ready", st.Ready, "message", st.Message)
	}
	t.health, t.ready = st.Health, st.Ready
	p.queued = append(p.queued, st)
	p.mu.Unlock()
	p.wake()
}

// pollHealth reports the runs whose probes changed their verdict.
func (p *Plugin) pollHealth() {
	p.mu.Lock()
	var probed []*trackedRun
	for _, t := range p.runs {
		if t.probed && t.started {
			probed = append(probed, t)
		}
	}
	p.mu.Unlock()
	for _, t := range probed {
		p.reportRunning(t, p.clock.Now(), true)
	}
}
