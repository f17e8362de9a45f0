package periodic

import (
	"fmt"
	"time"

	"github.com/peloton-federated/peloton/shard/model"
)

// LoadZone loads a schedule's time zone; the empty name is UTC.
func LoadZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q", name)
	}
	return loc, nil
}

// Parse parses a schedule's expression and loads its time zone: what the
// API checks before it accepts a periodic job.
func Parse(s *model.Schedule) (*Cron, *time.Location, error) {
	c, err := ParseCron(s.Cron)
	if err != nil {
		return nil, nil, err
	}
	loc, err := LoadZone(s.TimeZone)
	if err != nil {
		return nil, nil, err
	}
	return c, loc, nil
}

// Schedules caches parsed expressions and loaded time zones, for a caller
// that reads the same schedules again and again (the job manager's shell,
// once a second). It is not safe for concurrent use.
type Schedules struct {
	crons map[string]*Cron
	zones map[string]*time.Location
}

// Parse is Parse, from the cache when it can.
func (s *Schedules) Parse(sc *model.Schedule) (*Cron, *time.Location, error) {
	if s.crons == nil {
		s.crons, s.zones = map[string]*Cron{}, map[string]*time.Location{}
	}
	c, ok := s.crons[sc.Cron]
	if !ok {
		var err error
		if c, err = ParseCron(sc.Cron); err != nil {
			return nil, nil, err
		}
		s.crons[sc.Cron] = c
	}
	loc, ok := s.zones[sc.TimeZone]
	if !ok {
		var err error
		if loc, err = LoadZone(sc.TimeZone); err != nil {
			return nil, nil, err
		}
		s.zones[sc.TimeZone] = loc
	}
	return c, loc, nil
}
