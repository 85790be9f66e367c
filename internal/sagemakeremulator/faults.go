package sagemakeremulator

import (
	"encoding/json"
	"hash/fnv"
	"slices"
	"sort"
	"strconv"
)

// faults are the failures tests asked for. Guarded by Emulator.mu.
type faults struct {
	// transitions maps the transitional status and an object's name to the FailureReason its
	// next such transition ends with.
	transitions map[[2]string]string
	throttle    requestFault
	serverError requestFault
	// throttleRate and throttleOps: the share of requests of throttleOps (all when empty) that
	// are throttled, decided by a hash of the seed (see injectedFault).
	throttleRate float64
	throttleOps  []string
	// seen counts earlier requests per operation and object, the input of the hash.
	seen map[string]int
	// before runs once, before the next request of its operation is served.
	before map[string]func()
}

// BeforeNext runs f once, just before the emulator serves the next request of operation op:
// what another writer does between a caller's read and its write (f may call UpdateQuota).
func (e *Emulator) BeforeNext(op string, f func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.faults.before == nil {
		e.faults.before = map[string]func(){}
	}
	e.faults.before[op] = f
}

// requestFault answers the next n requests of ops (all when empty) with an error.
type requestFault struct {
	n   int
	ops []string
}

func (f *requestFault) take(op string) bool {
	if f.n > 0 && (len(f.ops) == 0 || slices.Contains(f.ops, op)) {
		f.n--
		return true
	}
	return false
}

// FailCreate makes the next create of a compute quota or cluster scheduler config named name
// end in CreateFailed with reason as FailureReason, without calling the ClusterWriter.
func (e *Emulator) FailCreate(name, reason string) { e.failTransition(StatusCreating, name, reason) }

// FailUpdate makes the next update of the object named name end in UpdateFailed.
func (e *Emulator) FailUpdate(name, reason string) { e.failTransition(StatusUpdating, name, reason) }

// FailDelete makes the next delete of the object named name end in DeleteFailed.
func (e *Emulator) FailDelete(name, reason string) { e.failTransition(StatusDeleting, name, reason) }

func (e *Emulator) failTransition(status, name, reason string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.faults.transitions == nil {
		e.faults.transitions = map[[2]string]string{}
	}
	e.faults.transitions[[2]string{status, name}] = reason
}

// takeFailure returns, and forgets, the failure asked for the next transition of name.
func (f *faults) takeFailure(status, name string) string {
	key := [2]string{status, name}
	reason := f.transitions[key]
	delete(f.transitions, key)
	return reason
}

// ThrottleNext answers the next n requests of ops (every operation when none is given; a new
// call replaces the old) with
// ThrottlingException, HTTP 400, as the API reference's common errors list it
// (https://docs.aws.amazon.com/sagemaker/latest/APIReference/CommonErrors.html). The SDK's
// standard retryer retries that code (aws/retry.DefaultThrottleErrorCodes).
func (e *Emulator) ThrottleNext(n int, ops ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults.throttle = requestFault{n, ops}
}

// ServerErrorNext answers the next n requests of ops (every operation when none is given)
// with InternalFailure, HTTP 500 (CommonErrors.html); the SDK retries HTTP 500.
func (e *Emulator) ServerErrorNext(n int, ops ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults.serverError = requestFault{n, ops}
}

// ThrottleRate throttles a share rate (0 to 1) of the requests of ops (all when none is given).
// Whether a request is throttled depends only on Options.Seed, its operation, the object its
// body names and how many such requests came before, so a run repeats whatever the order in
// which concurrent requests arrive.
func (e *Emulator) ThrottleRate(rate float64, ops ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults.throttleRate, e.faults.throttleOps = rate, ops
}

// injectedFault decides whether a request of op gets an injected error instead of an answer.
func (e *Emulator) injectedFault(op string, body []byte) *apiError {
	e.mu.Lock()
	defer e.mu.Unlock()
	f := &e.faults
	switch {
	case f.throttle.take(op):
		return errThrottled
	case f.serverError.take(op):
		return errInternal
	case f.throttleRate > 0 && (len(f.throttleOps) == 0 || slices.Contains(f.throttleOps, op)):
		key := op + "\x00" + objectKey(body)
		if f.seen == nil {
			f.seen = map[string]int{}
		}
		n := f.seen[key]
		f.seen[key]++
		h := fnv.New64a()
		_, _ = h.Write([]byte(strconv.FormatUint(e.opts.Seed, 10) + "\x00" + key + "\x00" + strconv.Itoa(n)))
		if float64(h.Sum64()>>11)/(1<<53) < f.throttleRate {
			return errThrottled
		}
	}
	return nil
}

// objectKey is the object a request body names (its ID, or its name for a create), "" for a
// List.
func objectKey(body []byte) string {
	var ids struct{ ComputeQuotaId, ClusterSchedulerConfigId, Name, ClusterName string }
	_ = json.Unmarshal(body, &ids)
	return ids.ComputeQuotaId + ids.ClusterSchedulerConfigId + ids.Name + ids.ClusterName
}

// Quota returns the compute quota with this ID as stored now.
func (e *Emulator) Quota(id string) (ComputeQuota, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ent := e.quotas.entries[id]
	if ent == nil {
		return ComputeQuota{}, false
	}
	return clone(ent.obj), true
}

// Quotas returns every stored compute quota, in creation order.
func (e *Emulator) Quotas() []ComputeQuota {
	e.mu.Lock()
	defer e.mu.Unlock()
	return all(e.quotas)
}

// SchedulerConfigs returns every stored cluster scheduler config, in creation order.
func (e *Emulator) SchedulerConfigs() []ClusterSchedulerConfig {
	e.mu.Lock()
	defer e.mu.Unlock()
	return all(e.configs)
}

func all[T any, P object[T]](s *store[T, P]) []T {
	entries := make([]*entry[T], 0, len(s.entries))
	for _, ent := range s.entries {
		entries = append(entries, ent)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].seq < entries[j].seq })
	out := make([]T, 0, len(entries))
	for _, ent := range entries {
		out = append(out, clone(ent.obj))
	}
	return out
}

// UpdateQuota changes a compute quota as someone else would through UpdateComputeQuota: change
// edits a copy, of which Description, ActivationState, Target and Config are taken; they are
// checked as the API checks them, the version goes up by one and the quota is Updating.
func (e *Emulator) UpdateQuota(id string, change func(*ComputeQuota)) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	q, version, aerr := e.quotas.editedCopy(id, change)
	if aerr != nil {
		return aerr
	}
	in := updateComputeQuotaInput{
		ComputeQuotaId: &id, TargetVersion: &version, ComputeQuotaConfig: &q.Config,
		ComputeQuotaTarget: &q.Target, ActivationState: q.ActivationState, Description: &q.Description,
	}
	return updateFromOutside(in, in.check, e.applyQuotaUpdate)
}

// UpdateSchedulerConfig changes a cluster scheduler config as someone else would through
// UpdateClusterSchedulerConfig, over its current version: change edits a copy, of which
// Description and Config are taken; they are checked as the API checks them, the version goes
// up by one and the config is Updating.
func (e *Emulator) UpdateSchedulerConfig(id string, change func(*ClusterSchedulerConfig)) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, version, aerr := e.configs.editedCopy(id, change)
	if aerr != nil {
		return aerr
	}
	in := updateSchedulerConfigInput{
		ClusterSchedulerConfigId: &id, TargetVersion: &version, SchedulerConfig: &c.Config, Description: &c.Description,
	}
	return updateFromOutside(in, in.check, e.applyConfigUpdate)
}

// updateFromOutside checks in as the API checks an update and applies it. Callers hold mu.
func updateFromOutside[In, T any](in In, check func(*violations), apply func(In) (T, *apiError)) error {
	var v violations
	check(&v)
	if aerr := v.err(); aerr != nil {
		return aerr
	}
	if _, aerr := apply(in); aerr != nil {
		return aerr
	}
	return nil
}

// DeleteQuota deletes a compute quota as someone else would through DeleteComputeQuota.
func (e *Emulator) DeleteQuota(id string) error {
	if aerr := remove(e, e.quotas, id); aerr != nil {
		return aerr
	}
	return nil
}
