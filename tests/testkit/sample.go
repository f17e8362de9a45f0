package testkit

import (
	"context"
	"time"
)

// Sample reads the job's tasks through api now and every interval until
// stop is called, and hands each read to observe, called in the sampling
// goroutine only. stop ends the sampling, waits for it, and returns how
// many reads succeeded and how many failed; what observe gathered may be
// read once it has returned.
func Sample(api *API, job string, every time.Duration, observe func([]Task)) (stop func() (samples, failed int)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var samples, failed int
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			var out struct{ Tasks []Task }
			if err := api.Get("/v1/jobs/"+job+"/tasks", &out); err != nil {
				failed++
			} else {
				samples++
				observe(out.Tasks)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() (int, int) {
		cancel()
		<-done
		return samples, failed
	}
}
