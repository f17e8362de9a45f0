// Package placement is the shard's placement engine core: it matches
// admitted tasks to hosts. It owns the host index placement reads (free
// amounts, labels, host pools, ports, GPU hosts, instance counts), the
// feasibility chain and its reasons (a task whose resource pool names host
// pools is charged "not in host pools [batch]" for hosts of others), the
// pack and spread strategies, equivalence classes, gangs, and the commit
// step that lets several workers place against one shared index without
// double-booking a host.
//
// It is a pure core, after Nomad's scheduler: Place takes a HostIndex, the
// tasks and Options (with the seed) and returns a Result; it starts no
// goroutine and does no I/O, logging or clock reads, and the same index,
// tasks and seed give the same assignments. Every host a task cannot use is
// charged to the first filter of feasibilityChain that rejects it, so an
// unplaced task carries an Explanation such as
// "0/50000 hosts: 31200 insufficient cpu, 18800 zone==a"; the Code tells
// "does not fit" from "gang incomplete", "conflict" and "invalid task".
//
// How it is fast: tasks with identical needs form one equivalence class.
// Each constraint set (per tier: plain hosts, then GPU hosts, so GPU hosts
// are kept for GPU tasks unless nothing else fits) is evaluated over the
// hosts once into a group with a segment tree of free amounts; a class is a
// cursor over its group's tree. Pack takes the first host in index order
// that fits (hosts are ordered tightest first) and puts as many instances
// there as fit; spread rotates from a seeded start. Groups and instance
// counts live in the index and are updated in place, not rebuilt per pass.
//
// How the shell uses it:
//
//   - build the index once from the host cache: NewHostIndex(hosts);
//   - follow the host managers: UpsertHost (free amounts, labels, state,
//     running instances), RemoveHost;
//   - when a task ends or a placement is abandoned: Release(host, task);
//   - one worker: Place(index, tasks, opts) deducts as it assigns;
//   - several workers: each does Place(index.Clone(), ...) and the shell
//     serialises index.Commit(tasks, result.Assignments) on the shared
//     index, which re-checks and applies each assignment (gangs whole) and
//     returns the rejected tasks for the next pass.
//
// NaivePlace is the exhaustive best-fit reference (the full scan) the tests
// and the benchmarks (package placebench) compare against. SampledPlace is
// the baseline production schedulers use: the same best-fit scoring over a
// bounded sample of the feasible hosts (kube-scheduler's adaptive
// percentageOfNodesToScore, SampleSize), walked round-robin from where the
// previous task's search stopped, as kube-scheduler does; SampledQuality
// says how much of the full scan's best-fit score it keeps.
//
// This package imports shard/model only; it must not import the resource
// manager, the job manager, storage, host manager plugins or the API.
package placement
