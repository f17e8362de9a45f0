# Peloton, federated — build, run and test.
SHELL := /bin/bash
GO ?= go
BIN := bin
TOOLS := $(CURDIR)/.tools/bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/peloton-federated/peloton/cmd/peloton/cli.Version=$(VERSION)

PROTOC_GEN_GO_VERSION := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
GRPC_GATEWAY_VERSION := v2.31.0

.PHONY: all build run test test-all check test-env repo-check test-go test-race bench-migrate test-clients test-python test-java clients clients-check proto proto-check tools bench bench-curves bench-overload bench-cassandra bench-memory bench-federation chaos chaos-replicas chaos-replicas-ring cassandra-faults reliability clean ui ui-check ui-gallery

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/peloton ./cmd/peloton

## run: build and start a one-process dev cluster (gateway + shard + embedded store + local hosts)
run: build
	$(BIN)/peloton dev --data-dir .peloton-data

## test: the whole suite (unit, contract, end-to-end through the binary, the
## race detector over the packages, the clients) against the real parts:
## tests/env.sh installs or checks what it needs (cached under
## ~/.cache/peloton), starts a Cassandra node, and the suite runs strict: a
## test whose real dependency is missing fails, it is never skipped
test: build
	bash tests/env.sh run $(MAKE) --no-print-directory test-all

test-all: repo-check test-go test-race test-clients

## test-env: install or check what `make test` needs, without running it
test-env:
	bash tests/env.sh setup

## check: the quick inner loop: vet, then unit and in-process tests (no
## end-to-end suites, no race detector); tests whose real dependency is
## missing are skipped and listed at the end
CHECK_PKGS := ./api/... ./shard/... ./federation/... ./gateway/... ./hostmgr-k8s/... ./hostmgr-mesos/... ./cmd/... ./internal/... ./ui
check:
	$(GO) vet ./...
	@mkdir -p .cache && rm -f .cache/skips
	@PELOTON_SKIP_LOG=$(CURDIR)/.cache/skips $(GO) test -count=1 -timeout 20m $(CHECK_PKGS); status=$$?; \
	if [ -s .cache/skips ]; then \
	  echo "skipped for a missing dependency (make test runs them):"; sort -u .cache/skips | sed 's/^/  /'; \
	else echo "nothing skipped for a missing dependency"; fi; exit $$status

## repo-check: only source in git (no executable binary, nothing over 1 MB but allowed assets)
repo-check:
	@bash .ci/tracked-files

# Every test run, and every server a test starts, runs the job manager's
# lock check: a store call made while an engine lock is held panics.
test-go test-race check: export PELOTON_LOCK_CHECK := 1

# tests/lossy times the failure detector's probes in a few seconds, so it
# runs after the other packages, alone: beside a Cassandra ring of tests/ha
# or a browser of tests/ui, on two CPUs, its probes' acks came late.
test-go: build
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 20m $$($(GO) list ./... | grep -v '/tests/lossy$$')
	$(GO) test -count=1 -timeout 20m ./tests/lossy

# The race detector over every package but the end-to-end ones (whose
# processes are the binary, built without it).
RACE_PKGS := ./api/... ./shard/... ./federation/... ./gateway/... ./hostmgr-k8s/... ./hostmgr-mesos/... ./cmd/... ./internal/... ./ui

## test-race: go test -race over the packages
test-race:
	$(GO) test -race -count=1 -timeout 20m $(RACE_PKGS)

test-clients: test-python test-java

PYTHON ?= python3
MVN ?= mvn
MVN_FLAGS ?= -B -ntp

## test-python: the Python client's tests against a `peloton dev` they start (make test runs them in its virtualenv)
test-python: build
	cd clients/python && PELOTON_BIN=$(CURDIR)/$(BIN)/peloton $(PYTHON) -m pytest -q -p no:cacheprovider

## test-java: the Java client's JUnit tests through Maven, against a `peloton dev` they start
test-java: build
	cd clients/java && PELOTON_BIN=$(CURDIR)/$(BIN)/peloton $(MVN) $(MVN_FLAGS) verify

tools:
	@mkdir -p $(TOOLS)
	@test -x $(TOOLS)/protoc-gen-go-$(PROTOC_GEN_GO_VERSION) || { GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION) && touch $(TOOLS)/protoc-gen-go-$(PROTOC_GEN_GO_VERSION); }
	@test -x $(TOOLS)/protoc-gen-go-grpc-$(PROTOC_GEN_GO_GRPC_VERSION) || { GOBIN=$(TOOLS) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION) && touch $(TOOLS)/protoc-gen-go-grpc-$(PROTOC_GEN_GO_GRPC_VERSION); }
	@test -x $(TOOLS)/protoc-gen-grpc-gateway-$(GRPC_GATEWAY_VERSION) || { GOBIN=$(TOOLS) $(GO) install github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway@$(GRPC_GATEWAY_VERSION) github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-openapiv2@$(GRPC_GATEWAY_VERSION) && touch $(TOOLS)/protoc-gen-grpc-gateway-$(GRPC_GATEWAY_VERSION); }

## proto: regenerate Go, gRPC, gateway and OpenAPI code from api/
proto: tools
	PATH=$(TOOLS):$$PATH protoc -I api \
	  --go_out=api --go_opt=paths=source_relative \
	  --go-grpc_out=api --go-grpc_opt=paths=source_relative \
	  --grpc-gateway_out=api --grpc-gateway_opt=paths=source_relative \
	  --grpc-gateway_opt=grpc_api_configuration=api/peloton/v1/http.yaml \
	  --openapiv2_out=api --openapiv2_opt=grpc_api_configuration=api/peloton/v1/http.yaml \
	  --openapiv2_opt=allow_merge=true,merge_file_name=peloton/v1/peloton,output_format=json \
	  api/peloton/v1/types.proto api/peloton/v1/service.proto

## proto-check: fail when the committed generated code is stale
proto-check: proto clients
	@git diff --exit-code -- api clients/python/peloton || { echo "generated code is stale: run make proto clients and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- api clients/python/peloton)" || { git status --short -- api clients/python/peloton; echo "generated files not committed: run make proto clients and commit"; exit 1; }

## clients: regenerate the Python client's stubs from api/ (grpcio-tools); the
## Java client generates its own in every Maven build (clients/java/pom.xml)
clients:
	rm -rf clients/python/peloton
	$(PYTHON) -m grpc_tools.protoc -I api --python_out=clients/python --pyi_out=clients/python \
	  --grpc_python_out=clients/python api/peloton/v1/types.proto api/peloton/v1/service.proto
	rm -f clients/python/peloton/v1/types_pb2_grpc.py
	touch clients/python/peloton/__init__.py clients/python/peloton/v1/__init__.py

## ui: rebuild the web UI's assets (ui/dist, embedded in the binary) from ui/src
ui:
	cd ui && npm ci --no-audit --no-fund && npm run build

## ui-check: fail when the committed web UI assets are stale
ui-check: ui
	@git diff --exit-code -- ui/dist && test -z "$$(git status --porcelain -- ui/dist)" || { echo "web UI assets are stale: run make ui and commit ui/dist"; exit 1; }

## ui-gallery: a screenshot of every page of the web UI into docs/img/gallery,
## listed in docs/ui-gallery.md (the browser suite's TestUIGallery)
ui-gallery:
	bash tests/env.sh setup && eval "$$(bash tests/env.sh vars)" && PELOTON_UI_GALLERY=1 $(GO) test -count=1 -run '^TestUIGallery$$' ./tests/ui

## bench-migrate: instances moved per second by a migration between two
## simulated clusters (1,000 instances, maxUnavailable 5% and 20%) beside a
## rolling update of the same job, through the binary
bench-migrate: build
	$(GO) test -run '^$$' -bench BenchmarkMigration -benchtime 1x -timeout 60m ./tests/e2e

## bench: the scale benchmarks (placement, entitlement, end to end)
bench: build
	$(GO) run ./tests/bench -bin $(BIN)/peloton $(BENCH_FLAGS)

## bench-curves: cost curves (decisions/s vs hosts, bytes/task vs tasks, placed/s vs clients, relocation time vs tasks, entitlement pass vs pools) as SVG + CSV into docs/curves (not in CI; `go test ./tests/bench/curves` runs them small)
bench-curves:
	$(GO) run ./tests/bench/curves -out docs/curves $(CURVES_FLAGS)

## bench-federation: the federation at the seeds' scale, simulated in one process (10 regions, 50,000 sim hosts, 1,000,000 tasks, 10,000 pools): global entitlement pass, routing, failover of a 100,000-task region, gossip traffic (not in CI; `go test ./tests/bench/fedsim` runs it small)
bench-federation:
	$(GO) run ./tests/bench/fedsim $(FEDSIM_FLAGS)

## bench-overload: 1, 8, 32, 128, 512 concurrent clients against a dev cluster; throughput, p50/p99, shed fraction, memory (not in CI)
bench-overload: build
	$(GO) run ./tests/bench/overload -bin $(BIN)/peloton $(OVERLOAD_FLAGS)

## bench-cassandra: small jobs end to end on Cassandra, in two
## sittings, each starting its own fresh Cassandra node (deploy/cassandra, free
## loopback ports, stopped afterwards; JDK 17 and Maven on the first run) beside
## one embedded run: PELOTON_CASSANDRA_JOBS (2000) single-task jobs over HTTP
## from 32 clients on the default commit log, then PELOTON_CASSANDRA_DURABLE_JOBS
## (500) on a --durable node; each store's own write ceiling for the same
## records (through the store package, 32 writers) in the same run, the node's
## CPU and Paxos rounds per job (not in CI)
bench-cassandra: build
	$(GO) run ./tests/bench -bin $(BIN)/peloton -small-jobs $${PELOTON_CASSANDRA_JOBS:-2000} \
		-small-jobs-stores embedded,cassandra=new $(CASSANDRA_BENCH_FLAGS)
	$(GO) run ./tests/bench -bin $(BIN)/peloton -small-jobs $${PELOTON_CASSANDRA_DURABLE_JOBS:-500} \
		-small-jobs-stores embedded,durable=new-durable $(CASSANDRA_BENCH_FLAGS)

## chaos: 20 trials of kill -9 / SIGSTOP of the leader of an HA pair during a 10,000-task job (needs PELOTON_TEST_CASSANDRA; not in CI, which runs 2 trials of 1,000 tasks)
chaos: build
	PELOTON_CHAOS_TRIALS=$${PELOTON_CHAOS_TRIALS:-20} PELOTON_CHAOS_TASKS=$${PELOTON_CHAOS_TASKS:-10000} \
		$(GO) test -count=1 -timeout 3h -run '^TestChaos$$' -v ./tests/ha

## chaos-replicas: a region of three members (leader and two standbys on one
## keyspace) whose leader is killed (-9) or paused (SIGSTOP) PELOTON_REPLICA_FAULTS
## (30) times while clients create jobs and retry on the next member; each
## takeover's time (needs PELOTON_TEST_CASSANDRA; CI runs 4 faults)
chaos-replicas: build
	PELOTON_REPLICA_FAULTS=$${PELOTON_REPLICA_FAULTS:-30} \
		$(GO) test -count=1 -timeout 1h -run '^TestChaosThreeReplicas$$' -v ./tests/ha

## chaos-replicas-ring: the same on the production shape, the three members
## on a ring of three Cassandra nodes of the test's own (replication 3)
chaos-replicas-ring: build
	PELOTON_REPLICA_RING=3 PELOTON_REPLICA_FAULTS=$${PELOTON_REPLICA_FAULTS:-30} \
		$(GO) test -count=1 -timeout 1h -run '^TestChaosThreeReplicas$$' -v ./tests/ha

## cassandra-faults: a region's store on three Cassandra nodes (cassandra.sh
## cluster, replication 3) under load: PELOTON_CLUSTER_ROUNDS (5) rounds of
## one node killed, then two, each for PELOTON_CLUSTER_HOLD seconds (60),
## then a node wiped, replaced and repaired; figures for docs/reliability.md
## (CI runs one round of 10 s)
cassandra-faults: build
	PELOTON_CLUSTER_ROUNDS=$${PELOTON_CLUSTER_ROUNDS:-5} PELOTON_CLUSTER_HOLD=$${PELOTON_CLUSTER_HOLD:-60} \
		$(GO) test -count=1 -timeout 3h -run '^TestCassandraCluster$$' -v ./tests/ha

## reliability: failover over a faulty network (tests/lossy): no false
## failover under 5% loss and 100±50 ms, a flapping region, one-way cuts,
## each for PELOTON_LOSSY_DURATION (30m), then the detection settings
## measured against each other; figures for docs/reliability.md, the
## trade-off chart in docs/detection-tradeoff.svg (CI runs the scenarios
## for 1-2 minutes and not the measurement)
reliability:
	PELOTON_LOSSY_DURATION=$${PELOTON_LOSSY_DURATION:-30m} PELOTON_LOSSY_CHART=$(CURDIR)/docs \
		$(GO) test -count=1 -timeout 4h -v -bench BenchmarkDetectionTradeoff -benchtime 1x ./tests/lossy

## bench-memory: peloton dev holds a job of 1,000,000 pending tasks, stops it, and must give its memory back (resident set within 1.5x of idle); prints idle, peak and after (not in CI, which runs 20,000 tasks)
bench-memory: build
	PELOTON_MEMORY_TASKS=$${PELOTON_MEMORY_TASKS:-1000000} \
		$(GO) test -count=1 -timeout 30m -run '^TestMemoryReturnsAfterABigJob$$' -v ./tests/e2e

clean:
	rm -rf $(BIN)
