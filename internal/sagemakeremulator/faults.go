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
	// serverErrorAfter and lostAnswer act on the next requests, then fail to answer them.
	serverErrorAfter requestFault
	lostAnswer       requestFault
	// rates and rateOps: the share of requests of rateOps (all when empty) that get each
	// fault, decided by a hash of the seed (see injectedFault).
	rates   FaultRates
	rateOps []string
	// seen counts earlier requests per operation and object, the input of the hash.
	seen map[string]int
	// injected records every fault injected, in order.
	injected []InjectedFault
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

// failNext sets f, one of e.faults' request faults, holding mu; a new call replaces the old.
func (e *Emulator) failNext(f *requestFault, n int, ops []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	*f = requestFault{n, ops}
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
func (e *Emulator) ThrottleNext(n int, ops ...string) { e.failNext(&e.faults.throttle, n, ops) }

// ServerErrorNext answers the next n requests of ops (every operation when none is given)
// with InternalFailure, HTTP 500 (CommonErrors.html); the SDK retries HTTP 500.
func (e *Emulator) ServerErrorNext(n int, ops ...string) { e.failNext(&e.faults.serverError, n, ops) }

// ServerErrorAfterNext serves the next n requests of ops (every operation when none is given),
// then answers them with InternalFailure, HTTP 500: the operation took effect, its answer says
// it failed.
func (e *Emulator) ServerErrorAfterNext(n int, ops ...string) {
	e.failNext(&e.faults.serverErrorAfter, n, ops)
}

// LoseAnswerNext serves the next n requests of ops (every operation when none is given), then
// closes their connections without an answer: the operation took effect, the caller never
// hears so.
func (e *Emulator) LoseAnswerNext(n int, ops ...string) { e.failNext(&e.faults.lostAnswer, n, ops) }

// FaultKind is a kind of injected fault.
type FaultKind string

// The fault kinds: the first two answer before the operation acts, the last two after.
const (
	// FaultThrottle answers ThrottlingException, HTTP 400.
	FaultThrottle FaultKind = "throttle"
	// FaultServerErrorBefore answers InternalFailure, HTTP 500, without acting.
	FaultServerErrorBefore FaultKind = "server error before acting"
	// FaultServerErrorAfter acts, then answers InternalFailure, HTTP 500.
	FaultServerErrorAfter FaultKind = "server error after acting"
	// FaultLostAnswer acts, then closes the connection without an answer.
	FaultLostAnswer FaultKind = "lost answer"
)

// FaultRates are the shares (0 to 1, summing to at most 1) of requests that get each fault.
type FaultRates struct {
	Throttle, ServerErrorBefore, ServerErrorAfter, LostAnswer float64
}

// InjectedFault is one fault the emulator injected.
type InjectedFault struct {
	Operation string
	// Object is what the request body names (an ID, or the name of a create), "" for a List.
	Object string
	Kind   FaultKind
}

// ThrottleRate throttles a share rate (0 to 1) of the requests of ops (all when none is given);
// it is InjectFaults with only Throttle.
func (e *Emulator) ThrottleRate(rate float64, ops ...string) {
	e.InjectFaults(FaultRates{Throttle: rate}, ops...)
}

// InjectFaults gives shares of the requests of ops (all when none is given) each fault of r;
// a new call replaces the old, FaultRates{} ends it. Whether a request gets a fault, and which,
// depends only on Options.Seed, its operation, the object its body names and how many such
// requests came before, so a run repeats whatever the order in which concurrent requests
// arrive.
func (e *Emulator) InjectFaults(r FaultRates, ops ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults.rates, e.faults.rateOps = r, ops
}

// Injected returns every fault injected since Start, in order.
func (e *Emulator) Injected() []InjectedFault {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]InjectedFault(nil), e.faults.injected...)
}

// injectedFault decides whether a request of op gets an injected fault, and records it.
func (e *Emulator) injectedFault(op string, body []byte) FaultKind {
	e.mu.Lock()
	defer e.mu.Unlock()
	f := &e.faults
	kind := f.decide(e.opts.Seed, op, body)
	if kind != "" {
		f.injected = append(f.injected, InjectedFault{Operation: op, Object: objectKey(body), Kind: kind})
	}
	return kind
}

func (f *faults) decide(seed uint64, op string, body []byte) FaultKind {
	switch {
	case f.throttle.take(op):
		return FaultThrottle
	case f.serverError.take(op):
		return FaultServerErrorBefore
	case f.serverErrorAfter.take(op):
		return FaultServerErrorAfter
	case f.lostAnswer.take(op):
		return FaultLostAnswer
	}
	r := f.rates
	if r == (FaultRates{}) || len(f.rateOps) > 0 && !slices.Contains(f.rateOps, op) {
		return ""
	}
	key := op + "\x00" + objectKey(body)
	if f.seen == nil {
		f.seen = map[string]int{}
	}
	n := f.seen[key]
	f.seen[key]++
	h := fnv.New64a()
	_, _ = h.Write([]byte(strconv.FormatUint(seed, 10) + "\x00" + key + "\x00" + strconv.Itoa(n)))
	u := float64(mix(h.Sum64())>>11) / (1 << 53)
	for _, c := range []struct {
		rate float64
		kind FaultKind
	}{{r.Throttle, FaultThrottle}, {r.ServerErrorBefore, FaultServerErrorBefore}, {r.ServerErrorAfter, FaultServerErrorAfter}, {r.LostAnswer, FaultLostAnswer}} {
		if u < c.rate {
			return c.kind
		}
		u -= c.rate
	}
	return ""
}

// mix is SplitMix64's finalizer: FNV-1a spreads a change in the last bytes (the request count)
// only into the low bits, which would give every retry of a request the same fault.
func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
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
	return updateFromOutside(e, e.quotas, id, change, func(q ComputeQuota, version int32) updateComputeQuotaInput {
		return updateComputeQuotaInput{
			ComputeQuotaId: &id, TargetVersion: &version, ComputeQuotaConfig: &q.Config,
			ComputeQuotaTarget: &q.Target, ActivationState: q.ActivationState, Description: &q.Description,
		}
	}, (*updateComputeQuotaInput).check, e.applyQuotaUpdate)
}

// UpdateSchedulerConfig changes a cluster scheduler config as someone else would through
// UpdateClusterSchedulerConfig, over its current version: change edits a copy, of which
// Description and Config are taken; they are checked as the API checks them, the version goes
// up by one and the config is Updating.
func (e *Emulator) UpdateSchedulerConfig(id string, change func(*ClusterSchedulerConfig)) error {
	return updateFromOutside(e, e.configs, id, change, func(c ClusterSchedulerConfig, version int32) updateSchedulerConfigInput {
		return updateSchedulerConfigInput{
			ClusterSchedulerConfigId: &id, TargetVersion: &version, SchedulerConfig: &c.Config, Description: &c.Description,
		}
	}, (*updateSchedulerConfigInput).check, e.applyConfigUpdate)
}

// updateFromOutside edits a copy of object id with change, makes of the copy the input of an
// update over the object's current version, checks it as the API checks an update and applies it.
func updateFromOutside[T any, P object[T], In any](e *Emulator, s *store[T, P], id string, change func(*T),
	input func(edited T, version int32) In, check func(*In, *violations), apply func(In) (*T, *apiError)) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	edited, version, aerr := s.editedCopy(id, change)
	if aerr != nil {
		return aerr
	}
	in := input(edited, version)
	var v violations
	check(&in, &v)
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
