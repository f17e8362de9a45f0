// Package testkit is the one harness of the end-to-end test packages
// under tests/: what drives the real peloton binary, so that no suite
// keeps a copy of it.
//
// It owns, one concern a file:
//
//   - build.go: building the binary once per test process (Main, Run,
//     Binary);
//   - process.go: a started process: its log, readiness (WaitUntil,
//     WaitHealthy), how it is stopped at the test's end (Stopping), kill
//     and signals;
//   - server.go: a peloton serving a region's API, `peloton dev` or
//     `peloton server` (Server: its process, HTTP API and CLI), and a
//     `peloton server` process whose calls are the caller's;
//   - ports.go: free loopback ports, reserved outside the kernel's
//     ephemeral range and across the machine's test processes, single or
//     as a consecutive run;
//   - api.go, records.go, sample.go: the HTTP/JSON API as tests call it,
//     the jobs and tasks it returns, a job's tasks sampled on a ticker;
//   - cli.go: running the CLI (CLI, Result);
//   - devtoken.go: the dev cluster's token for HTTP and gRPC clients;
//   - lab.go: a secured federation's CA, certificates, tokens, policy and
//     gossip key;
//   - dirs.go: the repository's files, temporary directories open to
//     local tasks, and killing what still runs under one;
//   - wait.go, logs.go: polling with a deadline, a process's log;
//   - kube.go, mesos.go: a Kubernetes test control plane and an emulated
//     Mesos master;
//   - slascenario.go: the service-under-SLA scenario every host manager
//     passes.
//
// Every process it starts is stopped when its test ends, and every
// goroutine it starts stops with the test (or its context) and is waited
// for. It is imported by tests only: nothing under cmd/, shard/,
// federation/ or gateway/ may import it, and it imports the product only
// for the CLI's and the gateway's client-side helpers and the test
// emulators.
package testkit
