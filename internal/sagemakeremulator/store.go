package sagemakeremulator

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"time"
)

// object is a pointer to a stored kind (*ComputeQuota, *ClusterSchedulerConfig).
type object[T any] interface {
	*T
	record() *Record
}

// kindSpec is what differs between compute quotas and cluster scheduler configs.
type kindSpec[T any] struct {
	kind    string // as messages name it
	arnType string // the resource type in its ARNs
	// arnMember, idMember, versionMember and listMember name the members of the object's ARN,
	// ID and version, and the List output's summaries.
	arnMember, idMember, versionMember, listMember string
	sortKeys                                       []string
	// summary is the List element and detail the Describe output of an object.
	summary, detail func(T) any
	// changed and deleted are the ClusterWriter methods for the kind.
	changed, deleted func(ClusterWriter, context.Context, T) error
}

// store holds the objects of one kind and their asynchronous transitions. Its methods run
// with Emulator.mu held.
type store[T any, P object[T]] struct {
	kindSpec[T]
	entries map[string]*entry[T]
	seq     int
	gen     uint64
}

type entry[T any] struct {
	obj T
	// seq orders objects created at the same instant.
	seq int
	// history holds the objects as they were at each superseded version.
	history map[int32]T
	pending *transition
}

// transition is a change the add-on has not completed yet.
type transition struct {
	since time.Time
	// seen counts the answers that reported the transitional status.
	seen int
	// failReason, when set, fails the transition without asking the ClusterWriter.
	failReason string
	gen        uint64
}

func newStore[T any, P object[T]](spec kindSpec[T]) *store[T, P] {
	return &store[T, P]{kindSpec: spec, entries: map[string]*entry[T]{}}
}

// write has w do what the add-on does for a transition of obj; nil accepts every change.
func (s *store[T, P]) write(ctx context.Context, w ClusterWriter, obj T) error {
	switch {
	case w == nil:
		return nil
	case rec[T, P](&obj).Status == StatusDeleting:
		return s.deleted(w, ctx, obj)
	default:
		return s.changed(w, ctx, obj)
	}
}

func rec[T any, P object[T]](obj *T) *Record { return P(obj).record() }

// clone deep-copies an object so that callers and ClusterWriters never share its slices.
func clone[T any](v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // every stored shape is plain data
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

func (s *store[T, P]) get(id string) (*entry[T], *apiError) {
	ent := s.entries[id]
	if ent == nil {
		return nil, notFound("The %s %s does not exist.", s.kind, id)
	}
	return ent, nil
}

// create stores obj, whose Record carries Name, ClusterARN, Description and Tags, as Creating.
// Names are unique within a cluster: "The name must be unique within the SageMaker AI HyperPod
// cluster specified by ClusterArn" (CreateComputeQuotaInput.Name and
// CreateClusterSchedulerConfigInput.Name in aws-sdk-go-v2 service/sagemaker v1.291.0, from the
// API model behind https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateComputeQuota.html).
// The model's error for a create that conflicts is ConflictException. An object being deleted
// still holds its name (emulator's choice).
// editedCopy is a copy of object id with change applied, and the version it was read at: what
// an update someone else sends starts from.
func (s *store[T, P]) editedCopy(id string, change func(*T)) (T, int32, *apiError) {
	ent, aerr := s.get(id)
	if aerr != nil {
		var zero T
		return zero, 0, aerr
	}
	c := clone(ent.obj)
	change(&c)
	return c, P(&ent.obj).record().Version, nil
}

func (s *store[T, P]) create(e *Emulator, obj T) (*entry[T], *apiError) {
	r := rec[T, P](&obj)
	for _, ent := range s.entries {
		if other := rec[T, P](&ent.obj); other.ClusterARN == r.ClusterARN && other.Name == r.Name {
			return nil, conflict("A %s named %s already exists in cluster %s.", s.kind, r.Name, r.ClusterARN)
		}
	}
	id := e.newID()
	for s.entries[id] != nil {
		id = e.newID()
	}
	now := e.opts.Now()
	r.ID, r.ARN, r.Version = id, e.arn(s.arnType, id), 1
	r.Status, r.FailureReason = StatusCreating, ""
	r.CreationTime, r.LastModifiedTime = now, now
	s.seq++
	ent := &entry[T]{obj: obj, seq: s.seq, history: map[int32]T{}}
	s.begin(e, ent, now)
	s.entries[id] = ent
	return ent, nil
}

// update applies change to the object if targetVersion is its version: "TargetVersion" is
// required (API_UpdateComputeQuota.html, API_UpdateClusterSchedulerConfig.html) and the model's
// error for a conflicting update is ConflictException ("There was a conflict when you attempted
// to modify a SageMaker entity", https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_UpdateComputeQuota.html#API_UpdateComputeQuota_Errors).
// The version goes up by one and the object is Updating. An object being deleted cannot be
// updated (emulator's choice: AWS documents nothing, and accepting would undo the delete); one
// still being created or updated can (permissive).
func (s *store[T, P]) update(e *Emulator, ent *entry[T], targetVersion int32, change func(*T)) *apiError {
	r := rec[T, P](&ent.obj)
	if targetVersion != r.Version {
		return conflict("TargetVersion %d does not match version %d of %s %s.", targetVersion, r.Version, s.kind, r.ID)
	}
	if r.Status == StatusDeleting {
		return conflict("The %s %s is being deleted.", s.kind, r.ID)
	}
	ent.history[r.Version] = clone(ent.obj)
	change(&ent.obj)
	r = rec[T, P](&ent.obj)
	now := e.opts.Now()
	r.Version++
	r.Status, r.LastModifiedTime = StatusUpdating, now
	s.begin(e, ent, now)
	return nil
}

// delete starts deleting; an object already being deleted is left as it is.
func (s *store[T, P]) delete(e *Emulator, ent *entry[T]) {
	r := rec[T, P](&ent.obj)
	if r.Status == StatusDeleting {
		return
	}
	now := e.opts.Now()
	r.Status, r.LastModifiedTime = StatusDeleting, now
	s.begin(e, ent, now)
}

// begin starts the transition to the object's status, failed when a fault asked for it.
func (s *store[T, P]) begin(e *Emulator, ent *entry[T], now time.Time) {
	s.gen++
	r := rec[T, P](&ent.obj)
	ent.pending = &transition{since: now, gen: s.gen, failReason: e.faults.takeFailure(r.Status, r.Name)}
}

// version is the object as it was at version v (nil: as it is). An unknown version is
// ResourceNotFound (emulator's choice: ComputeQuotaVersion is documented only as "Version of the
// compute allocation definition").
func (s *store[T, P]) version(ent *entry[T], v *int32) (T, *apiError) {
	r := rec[T, P](&ent.obj)
	if v == nil || *v == r.Version {
		return clone(ent.obj), nil
	}
	old, ok := ent.history[*v]
	if !ok {
		return old, notFound("Version %d of %s %s does not exist.", *v, s.kind, r.ID)
	}
	return clone(old), nil
}

// observe counts an answer that reported ent's current status.
func (s *store[T, P]) observe(ent *entry[T]) {
	if ent.pending != nil {
		ent.pending.seen++
	}
}

// dueTransition is a transition to complete, with the object as the ClusterWriter sees it.
type dueTransition[T any] struct {
	id         string
	gen        uint64
	obj        T
	failReason string
}

// due lists the transitions of ids (all objects when ids is nil) that rule says are complete,
// or every pending one when force is set.
func (s *store[T, P]) due(ids []string, now time.Time, rule SettleRule, force bool) []dueTransition[T] {
	if ids == nil {
		for id := range s.entries {
			ids = append(ids, id)
		}
		sort.Strings(ids)
	}
	var out []dueTransition[T]
	for _, id := range ids {
		ent := s.entries[id]
		if ent == nil || ent.pending == nil {
			continue
		}
		p := ent.pending
		byCount := rule.Observations >= 0 && p.seen >= rule.Observations
		byTime := rule.After > 0 && now.Sub(p.since) >= rule.After
		if force || byCount || byTime {
			out = append(out, dueTransition[T]{id: id, gen: p.gen, obj: clone(ent.obj), failReason: p.failReason})
		}
	}
	return out
}

// finish completes a due transition with the ClusterWriter's answer; a transition replaced
// meanwhile by a newer one is left alone. A failed update keeps what it wrote and its version
// (emulator's choice: the UpdateRollbackFailed status hints that AWS rolls back, but AWS does
// not document what a failed update leaves).
func (s *store[T, P]) finish(d dueTransition[T], failure error) {
	ent := s.entries[d.id]
	if ent == nil || ent.pending == nil || ent.pending.gen != d.gen {
		return
	}
	ent.pending = nil
	r := rec[T, P](&ent.obj)
	next := map[string][2]string{
		StatusCreating: {StatusCreated, StatusCreateFailed},
		StatusUpdating: {StatusUpdated, StatusUpdateFailed},
		StatusDeleting: {"", StatusDeleteFailed},
	}[r.Status]
	if failure != nil {
		r.Status, r.FailureReason = next[1], truncate(failure.Error(), maxFailureReason)
		return
	}
	if next[0] == "" {
		delete(s.entries, d.id)
		return
	}
	r.Status, r.FailureReason = next[0], ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// listQuery is the input of ListComputeQuotas and ListClusterSchedulerConfigs
// (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ListComputeQuotas.html).
type listQuery struct {
	CreatedAfter  *epochSeconds `json:"CreatedAfter,omitempty"`
	CreatedBefore *epochSeconds `json:"CreatedBefore,omitempty"`
	NameContains  *string       `json:"NameContains,omitempty"`
	Status        string        `json:"Status,omitempty"`
	ClusterArn    *string       `json:"ClusterArn,omitempty"`
	SortBy        string        `json:"SortBy,omitempty"`
	SortOrder     string        `json:"SortOrder,omitempty"`
	NextToken     *string       `json:"NextToken,omitempty"`
	MaxResults    *int32        `json:"MaxResults,omitempty"`
}

func (q *listQuery) check(sortKeys []string) *apiError {
	var v violations
	v.optionalStr(q.NameContains, "nameContains", 1, maxEntityName, &entityNamePattern)
	v.enum(q.Status, "status", schedulerStatuses)
	v.checkClusterARN(q.ClusterArn, false)
	v.enum(q.SortBy, "sortBy", sortKeys)
	v.enum(q.SortOrder, "sortOrder", sortOrders)
	v.optionalStr(q.NextToken, "nextToken", 0, maxNextToken, nil)
	inRange(&v, q.MaxResults, "maxResults", 1, maxListResults)
	return v.err()
}

// fingerprint identifies the query apart from its paging, so that a NextToken is only
// accepted by the query that issued it.
func (q listQuery) fingerprint() string {
	q.NextToken, q.MaxResults = nil, nil
	b, _ := json.Marshal(q)
	h := fnv.New64a()
	_, _ = h.Write(b)
	return strconv.FormatUint(h.Sum64(), 36)
}

// list filters, sorts and pages the objects. Filters: ClusterArn equal, NameContains a
// substring (case-insensitive: emulator's choice, AWS says only "name containing this string"),
// Status equal, CreationTime strictly after CreatedAfter and before CreatedBefore. Sorting:
// "By default, listed in Descending order" (documented); the default SortBy is CreationTime
// (emulator's choice: undocumented), ties in creation order. NextToken is opaque.
func (s *store[T, P]) list(q listQuery, defaultMax int) ([]*entry[T], *string, *apiError) {
	var match []*entry[T]
	for _, ent := range s.entries {
		r := rec[T, P](&ent.obj)
		switch {
		case q.ClusterArn != nil && r.ClusterARN != *q.ClusterArn,
			q.NameContains != nil && !strings.Contains(strings.ToLower(r.Name), strings.ToLower(*q.NameContains)),
			q.Status != "" && r.Status != q.Status,
			q.CreatedAfter != nil && !r.CreationTime.After(time.Time(*q.CreatedAfter)),
			q.CreatedBefore != nil && !r.CreationTime.Before(time.Time(*q.CreatedBefore)):
			continue
		}
		match = append(match, ent)
	}
	key := func(ent *entry[T]) string {
		r := rec[T, P](&ent.obj)
		switch q.SortBy {
		case "Name":
			return r.Name
		case "Status":
			return r.Status
		case "ClusterArn":
			return r.ClusterARN
		}
		return fmt.Sprintf("%020d", r.CreationTime.UnixNano())
	}
	descending := q.SortOrder != "Ascending"
	sort.SliceStable(match, func(i, j int) bool {
		ki, kj := key(match[i]), key(match[j])
		if ki == kj {
			ki, kj = fmt.Sprintf("%09d", match[i].seq), fmt.Sprintf("%09d", match[j].seq)
		}
		if descending {
			return ki > kj
		}
		return ki < kj
	})
	offset := 0
	if q.NextToken != nil {
		var ok bool
		if offset, ok = parseToken(*q.NextToken, q.fingerprint()); !ok || offset > len(match) {
			return nil, nil, validationError("The NextToken is not valid for this request.")
		}
	}
	limit := defaultMax
	if q.MaxResults != nil {
		limit = int(*q.MaxResults)
	}
	end := min(offset+limit, len(match))
	var next *string
	if end < len(match) {
		t := base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end) + ":" + q.fingerprint()))
		next = &t
	}
	return match[offset:end], next, nil
}

func parseToken(token, fingerprint string) (int, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return 0, false
	}
	offset, fp, found := strings.Cut(string(raw), ":")
	n, err := strconv.Atoi(offset)
	return n, found && err == nil && n >= 0 && fp == fingerprint
}
