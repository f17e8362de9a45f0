package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/peloton-federated/peloton/shard/hostpool"
	"github.com/peloton-federated/peloton/shard/jobmgr"
)

// hostPoolFlags are the host pool policy's flags of `peloton dev`.
type hostPoolFlags struct {
	period        string
	floors        string
	drainDeadline time.Duration
	// reserveAfter and reservePerPool tune host reservations.
	reserveAfter   string
	reservePerPool int
}

func (h *hostPoolFlags) register(f *pflag.FlagSet) {
	f.StringVar(&h.period, "host-pool-period", "10s", `how often the host pool policy moves hosts toward pending demand ("off" turns it off)`)
	f.StringVar(&h.floors, "host-pool-floor", "", "fewest hosts in service per host pool, as batch=2,services=4")
	f.DurationVar(&h.drainDeadline, "host-pool-drain-deadline", jobmgr.DefaultHostPoolDrainDeadline, "how long batch tasks on a host drained for a host pool move may run on")
	f.StringVar(&h.reserveAfter, "reserve-hosts-after", "1m", `how long a task that fits no host for lack of room waits before a host is reserved for it ("off" turns reservations off)`)
	f.IntVar(&h.reservePerPool, "reserve-hosts-per-pool", 2, "most hosts held reserved for one pool's tasks")
}

// reservation is the host reservation config of dev's flags.
func (h *hostPoolFlags) reservation() (jobmgr.ReservationConfig, error) {
	after, err := reserveAfter(h.reserveAfter)
	if err != nil {
		return jobmgr.ReservationConfig{}, fmt.Errorf("--reserve-hosts-after: %w", err)
	}
	if h.reservePerPool < 1 || h.reservePerPool > maxReservePerPool {
		return jobmgr.ReservationConfig{}, fmt.Errorf("--reserve-hosts-per-pool: must be between 1 and %d", maxReservePerPool)
	}
	return jobmgr.ReservationConfig{After: after, PerPool: h.reservePerPool}, nil
}

// maxReservePerPool bounds the hosts one pool may hold reserved.
const maxReservePerPool = 1000

// reserveAfter reads how long a task waits before a host is reserved: a
// duration of at least 1s, "off" (negative) or "" (the default).
func reserveAfter(s string) (time.Duration, error) {
	return durationOrOff(s, time.Second, "1m")
}

// serverReservation is the host reservation config of a checked server
// config.
func serverReservation(c *serverConfig) jobmgr.ReservationConfig {
	after, _ := reserveAfter(c.Reservation.After)
	return jobmgr.ReservationConfig{After: after, PerPool: c.Reservation.PerPool}
}

func (h *hostPoolFlags) config() (jobmgr.HostPoolConfig, error) {
	period, err := hostPoolPeriod(h.period)
	if err != nil {
		return jobmgr.HostPoolConfig{}, fmt.Errorf("--host-pool-period: %w", err)
	}
	floors, err := hostpool.ParseFloors(h.floors)
	if err != nil {
		return jobmgr.HostPoolConfig{}, fmt.Errorf("--host-pool-floor: %w", err)
	}
	if h.drainDeadline <= 0 {
		return jobmgr.HostPoolConfig{}, fmt.Errorf("--host-pool-drain-deadline: must be > 0")
	}
	return jobmgr.HostPoolConfig{Period: period, Floors: floors, DrainDeadline: h.drainDeadline}, nil
}

// hostPoolPeriod reads a policy period: a duration of at least 100ms,
// "off" (a negative period, which turns the policy off) or "" (the
// default).
func hostPoolPeriod(s string) (time.Duration, error) {
	return durationOrOff(s, 100*time.Millisecond, "10s")
}

// durationOrOff reads a duration of at least least, "off" (negative) or
// "" (zero: the default); like names an example for the error.
func durationOrOff(s string, least time.Duration, like string) (time.Duration, error) {
	switch s {
	case "":
		return 0, nil
	case "off":
		return -1, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < least {
		return 0, fmt.Errorf("%q: want a duration of at least %s (like %s), or off", s, least, like)
	}
	return d, nil
}

// serverHostPools is the host pool policy config of a checked server config.
func serverHostPools(c *serverConfig) jobmgr.HostPoolConfig {
	period, _ := hostPoolPeriod(c.HostPools.Period)
	return jobmgr.HostPoolConfig{Period: period, Floors: c.HostPools.Floors, DrainDeadline: time.Duration(c.HostPools.DrainDeadline)}
}
