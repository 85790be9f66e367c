package sagemakerbackend

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakerclient"
)

// KindComputeQuota names a compute quota in messages.
const KindComputeQuota = "SageMaker compute quota"

// teamQuotas stores a team's quota as the cluster's one compute quota that targets the team.
//
// A refresh reads every quota of the cluster with one paged ListComputeQuotas, shared by all
// the reads of a provider run; the list carries everything but the description and the
// failure reason, which one DescribeComputeQuota adds only for a quota whose version moved
// since the caller last saw it. A quota this run wrote is read by its id.
type teamQuotas struct {
	api     sagemakerclient.API
	cluster string
	catalog *catalog.Catalog
	poll    sagemakerclient.Poll

	mu     sync.Mutex
	listed bool
	byTeam map[string][]types.ComputeQuotaSummary
	// written is the id of each team's quota this run wrote ("" once deleted): read by id,
	// since the list predates the write.
	written map[string]string
	// claims holds each team that a create of this run has claimed and not yet sent (Claim).
	claims map[string]*teamClaim
	// seen is each quota as this run's Get read it, by id: an update that changes only its
	// tags leaves its definition (and version) alone.
	seen map[string]seenQuota
}

// seenQuota is a quota's definition as read at one version.
type seenQuota struct {
	record backend.Record
	doc    quota.ComputeQuota
}

// teamClaim is one create's hold on a team, from its Claim until its create request has been
// answered or the create has ended.
type teamClaim struct {
	owner string
	done  chan struct{} // closed on release
}

// live reports whether a status is that of a quota that exists and is not being deleted.
func live(s types.SchedulerResourceStatus) bool {
	return s != types.SchedulerResourceStatusDeleting && s != types.SchedulerResourceStatusDeleted
}

// summaries returns the quotas that target team, listing the cluster's quotas once per run.
func (s *teamQuotas) summaries(ctx context.Context, team string) ([]types.ComputeQuotaSummary, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.list(ctx); err != nil {
		return nil, err
	}
	return s.byTeam[team], nil
}

// all returns every quota of the cluster, from the same list.
func (s *teamQuotas) all(ctx context.Context) ([]types.ComputeQuotaSummary, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.list(ctx); err != nil {
		return nil, err
	}
	var out []types.ComputeQuotaSummary
	for _, qs := range s.byTeam {
		out = append(out, qs...)
	}
	return out, nil
}

// list reads the cluster's quotas with one paged ListComputeQuotas, once per run; s.mu is held.
func (s *teamQuotas) list(ctx context.Context) error {
	if !s.listed {
		byTeam := map[string][]types.ComputeQuotaSummary{}
		in := &sagemaker.ListComputeQuotasInput{ClusterArn: aws.String(s.cluster), MaxResults: aws.Int32(100)}
		for {
			out, err := s.api.ListComputeQuotas(ctx, in)
			if err != nil {
				return requestError(backend.OpRead, "", err)
			}
			for _, q := range out.ComputeQuotaSummaries {
				if q.ComputeQuotaTarget != nil && q.Status != types.SchedulerResourceStatusDeleted {
					t := aws.ToString(q.ComputeQuotaTarget.TeamName)
					byTeam[t] = append(byTeam[t], q)
				}
			}
			if aws.ToString(out.NextToken) == "" {
				break
			}
			in.NextToken = out.NextToken
		}
		tflog.Debug(ctx, "listed the cluster's compute quotas", map[string]any{"teams": len(byTeam)})
		s.byTeam, s.listed = byTeam, true
	}
	return nil
}

// wrote records the id of the team's quota after a write ("" after a delete).
func (s *teamQuotas) wrote(team, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written == nil {
		s.written = map[string]string{}
	}
	s.written[team] = id
}

func (s *teamQuotas) writtenID(team string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.written[team]
	return id, ok
}

func (s *teamQuotas) Get(ctx context.Context, team string, last *backend.Quota) (*backend.Quota, error) {
	var list []types.ComputeQuotaSummary
	if id, ok := s.writtenID(team); ok {
		if id == "" {
			return nil, nil
		}
		list = []types.ComputeQuotaSummary{{ComputeQuotaId: aws.String(id)}}
		last = nil // a summary of only the id: describe it
	} else {
		var err error
		if list, err = s.summaries(ctx, team); err != nil {
			return nil, err
		}
	}
	var found []types.ComputeQuotaSummary
	for _, q := range list {
		if live(q.Status) {
			found = append(found, q)
		}
	}
	switch {
	case len(found) > 1:
		names := make([]string, len(found))
		for i, q := range found {
			names[i] = fmt.Sprintf("%q (%s)", aws.ToString(q.Name), aws.ToString(q.ComputeQuotaId))
		}
		return nil, backend.Problem{Summary: "Several compute quotas target the team", Detail: fmt.Sprintf(
			"The cluster has %d compute quotas for team %q: %s. This provider manages one quota per team: delete all but one "+
				"(aws sagemaker delete-compute-quota --compute-quota-id <id>), then refresh.", len(found), team, strings.Join(names, ", "))}
	case len(found) == 0 && len(list) == 0:
		return nil, nil
	case len(found) == 0:
		found = list[:1] // being deleted
	}
	sum := found[0]
	q := &backend.Quota{Record: s.record(aws.ToString(sum.Name), aws.ToString(sum.ComputeQuotaId), aws.ToString(sum.ComputeQuotaArn),
		sum.ComputeQuotaVersion, sum.Status, ""), Named: true}
	description := ""
	// The list carries no FailureReason: a failed quota is described for it, whatever its version.
	if last != nil && last.Version == q.Version && last.ID == q.ID && !q.ChangeFailed {
		description = last.Config.Config.Description
	} else {
		out, err := s.api.DescribeComputeQuota(ctx, &sagemaker.DescribeComputeQuotaInput{ComputeQuotaId: sum.ComputeQuotaId})
		switch {
		case sagemakerclient.IsNotFound(err):
			return nil, nil // deleted since the list
		case err != nil:
			return nil, requestError(backend.OpRead, q.ID, err)
		}
		description = aws.ToString(out.Description)
		q.Record = s.record(aws.ToString(out.Name), q.ID, aws.ToString(out.ComputeQuotaArn), out.ComputeQuotaVersion, out.Status, aws.ToString(out.FailureReason))
		sum.ComputeQuotaConfig, sum.ComputeQuotaTarget, sum.ActivationState = out.ComputeQuotaConfig, out.ComputeQuotaTarget, out.ActivationState
	}
	q.Config.Config.Team = team
	if !q.Terminating {
		doc := documentOf(q.Name, description, sum.ActivationState, sum.ComputeQuotaTarget, sum.ComputeQuotaConfig)
		_, q.Config, q.ConfigErr = quota.ConfigFromComputeQuota(s.catalog, doc)
		s.saw(q.Record, doc)
	}
	return q, nil
}

// saw records a quota's definition as read.
func (s *teamQuotas) saw(r backend.Record, doc quota.ComputeQuota) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[string]seenQuota{}
	}
	s.seen[r.ID] = seenQuota{record: r, doc: doc}
}

// unchanged is the quota's record when this run read it at version over.Version with the
// definition doc would send: an update of it would change nothing but the version.
func (s *teamQuotas) unchanged(over *backend.Record, doc quota.ComputeQuota) (backend.Record, bool) {
	s.mu.Lock()
	seen, ok := s.seen[over.ID]
	s.mu.Unlock()
	// Compared as the API holds it: the document read back from what an update would send.
	sent := documentOf(doc.Name, doc.Description, types.ActivationState(doc.ActivationState), sdkTarget(doc), sdkConfig(doc))
	if !ok || seen.record.Version != over.Version || seen.record.ChangeFailed || !reflect.DeepEqual(seen.doc, sent) {
		return backend.Record{}, false
	}
	return seen.record, true
}

// Tags reads the quota's tags with ListTags.
func (s *teamQuotas) Tags(ctx context.Context, q *backend.Quota) (map[string]string, error) {
	if err := ownRecord(q.Record); err != nil {
		return nil, err
	}
	return tagsOf(ctx, s.api, q.ARN, q.ID, requestError)
}

// TeamOf finds the quota by id in the run's list; an import id that is not a quota id's form
// names a team, and is not looked up.
func (s *teamQuotas) TeamOf(ctx context.Context, id string) (string, bool, error) {
	if !quotaIDPattern.MatchString(id) {
		return "", false, nil
	}
	all, err := s.all(ctx)
	if err != nil {
		return "", false, err
	}
	for _, q := range all {
		if aws.ToString(q.ComputeQuotaId) == id && q.ComputeQuotaTarget != nil {
			return aws.ToString(q.ComputeQuotaTarget.TeamName), true, nil
		}
	}
	return "", false, nil
}

// quotaIDPattern is a compute quota id's form.
var quotaIDPattern = regexp.MustCompile(`^[a-z0-9]{12}$`)

// Ref is the quota by its name: the API names a team's quota by the name the configuration gives it.
func (s *teamQuotas) Ref(_, name string) backend.ObjectRef {
	return backend.ObjectRef{Kind: KindComputeQuota, Name: name}
}

// record is what the provider records of a quota besides its content.
func (s *teamQuotas) record(name, id, arn string, version *int32, status types.SchedulerResourceStatus, failure string) backend.Record {
	return recordOf(KindComputeQuota, name, id, arn, version, status, failure)
}

// recordOf is the record of an object of the API, of kind. The API records no owner: the
// object's id in state is its identity (see Get's callers).
func recordOf(kind, name, id, arn string, version *int32, status types.SchedulerResourceStatus, failure string) backend.Record {
	holding := ""
	if !live(status) {
		holding = fmt.Sprintf("SageMaker is deleting it (status %s)", status)
	}
	return backend.Record{Holding: holding,
		Kind: kind, Name: name, ID: id, ARN: arn,
		Version: strconv.Itoa(int(aws.ToInt32(version))), Status: string(status), Failure: failure,
		ChangeFailed: sagemakerclient.Failed(status), Terminating: !live(status),
		Owner: backend.Ownership{Recorded: id, Description: sageMakerOwner, Owns: func(string) bool { return true }, Intrinsic: true},
	}
}

// Claim holds the team for this create until its Put has sent the create request, or until
// ctx ends for a create that stops before it. The API refuses a second quota of the same name
// only, and the caller's check before the claim reads the run's list, which cannot show a quota
// another resource of the same apply is creating: without the hold, two resources of one team
// with different names would both pass the check and both be created. A second claim of the
// team waits for the first to be released, then fails with ErrExists if the team has a quota,
// which the caller's next Get shows, so it is refused as any existing quota is.
func (s *teamQuotas) Claim(ctx context.Context, team, owner string) (string, error) {
	for {
		s.mu.Lock()
		held := s.claims[team]
		if held == nil {
			if s.hasQuota(team) {
				s.mu.Unlock()
				return "", &backend.RequestError{Op: backend.OpCreate, Kind: KindComputeQuota, Name: team, Outcome: backend.ErrExists,
					Err: fmt.Errorf("team %q has a compute quota already: another resource of this run created it", team)}
			}
			c := &teamClaim{owner: owner, done: make(chan struct{})}
			if s.claims == nil {
				s.claims = map[string]*teamClaim{}
			}
			s.claims[team] = c
			s.mu.Unlock()
			context.AfterFunc(ctx, func() { s.release(team, c) })
			return "", nil
		}
		s.mu.Unlock()
		backend.Waiting(backend.Wait{Kind: backend.WaitQuotaClaim, Team: team})
		select {
		case <-held.done:
		case <-ctx.Done():
			return "", backend.Problem{Summary: "Compute quota not created", Detail: fmt.Sprintf(
				"Another resource of this apply was creating the compute quota of team %q, and this create ended (%v) "+
					"while it waited for that one. The provider manages one quota per team: give each team one "+
					"hyperpod_compute_quota resource.", team, ctx.Err())}
		}
	}
}

// hasQuota reports whether the team has a live quota as this run knows it: the one it wrote,
// else the run's list (when read); s.mu is held.
func (s *teamQuotas) hasQuota(team string) bool {
	if id, ok := s.written[team]; ok {
		return id != ""
	}
	for _, q := range s.byTeam[team] {
		if live(q.Status) {
			return true
		}
	}
	return false
}

// release ends claim c of team, once; a later claim of the team is not touched.
func (s *teamQuotas) release(team string, c *teamClaim) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.claims[team] != c {
		return
	}
	delete(s.claims, team)
	close(c.done)
}

// releaseOwner ends the team's claim if owner holds it.
func (s *teamQuotas) releaseOwner(team, owner string) {
	s.mu.Lock()
	c := s.claims[team]
	s.mu.Unlock()
	if c != nil && c.owner == owner {
		s.release(team, c)
	}
}

func (s *teamQuotas) WaitGone(ctx context.Context, team string) error {
	q, err := s.Get(ctx, team, nil)
	if err != nil || q == nil {
		return err
	}
	backend.Waiting(backend.Wait{Kind: backend.WaitQuotaGone, Team: team})
	if _, err = sagemakerclient.WaitComputeQuota(ctx, s.api, s.poll, q.ID, sagemakerclient.Deleted); err == nil {
		s.wrote(team, "")
	}
	return err
}

// Adopt: the API records no mark of an interrupted run.
func (s *teamQuotas) Adopt(context.Context, *backend.Quota) error { return nil }

// Put creates the team's quota (over == nil) or updates it over the version the caller last
// saw, then waits until the API has applied it. The record is returned even on failure once
// the quota exists, so the caller can save it.
func (s *teamQuotas) Put(ctx context.Context, rc quota.ResolvedConfig, owner string, over *backend.Record) (backend.Record, []string, error) {
	doc := quota.ComputeQuotaOf(rc)
	var id, arn string
	if over == nil {
		in := &sagemaker.CreateComputeQuotaInput{
			ClusterArn: aws.String(s.cluster), Name: aws.String(doc.Name), Description: optional(doc.Description),
			ActivationState: types.ActivationState(doc.ActivationState), ComputeQuotaTarget: sdkTarget(doc), ComputeQuotaConfig: sdkConfig(doc),
			Tags: sdkTags(rc.Config.Tags),
		}
		c, err := createOnce(ctx, KindComputeQuota, s.api.CreateComputeQuota, in, createdQuota,
			func(ctx context.Context) (lookup, error) { return s.findCreated(ctx, doc) },
			func(err error) error { return requestError(backend.OpCreate, doc.Name, err) })
		if err != nil {
			s.releaseOwner(doc.Team, owner)
			return backend.Record{}, nil, err
		}
		id, arn = c.id, c.arn
		s.wrote(doc.Team, id)
		// Recorded first: a create waiting for the team now finds this quota.
		s.releaseOwner(doc.Team, owner)
		tflog.Info(ctx, "created compute quota", map[string]any{"id": id, "team": doc.Team})
	} else if seen, ok := s.unchanged(over, doc); ok {
		// Only the tags change: the definition is left alone, so its version does not move.
		s.wrote(doc.Team, over.ID)
		written, err := retag(ctx, s.api, seen, over, rc.Config.Tags)
		if err != nil {
			return written, nil, requestError(backend.OpApply, over.ID, err)
		}
		return written, nil, nil
	} else {
		id, arn = over.ID, over.ARN
		s.wrote(doc.Team, id)
		target, err := targetVersion("compute quota", over)
		if err != nil {
			return *over, nil, err
		}
		_, err = s.api.UpdateComputeQuota(ctx, &sagemaker.UpdateComputeQuotaInput{
			ComputeQuotaId: aws.String(id), TargetVersion: aws.Int32(int32(target)), Description: aws.String(doc.Description),
			ActivationState: types.ActivationState(doc.ActivationState), ComputeQuotaTarget: sdkTarget(doc), ComputeQuotaConfig: sdkConfig(doc),
		})
		// A retry of an update that landed is refused (the version moved): read what it left.
		if sagemakerclient.IsOutcomeUnknown(err) {
			out, derr := s.api.DescribeComputeQuota(ctx, &sagemaker.DescribeComputeQuotaInput{ComputeQuotaId: aws.String(id)})
			if derr == nil && updateLanded(out.ComputeQuotaVersion, target, sameDocument(heldDocument(out), doc)) {
				err = nil
			}
		}
		if err != nil {
			return *over, nil, requestError(backend.OpApply, id, err)
		}
		tflog.Info(ctx, "updated compute quota", map[string]any{"id": id, "target_version": target})
	}
	written := s.record(doc.Name, id, arn, nil, "", "")
	out, err := sagemakerclient.WaitComputeQuota(ctx, s.api, s.poll, id, sagemakerclient.Settled)
	if out != nil {
		written = s.record(aws.ToString(out.Name), id, aws.ToString(out.ComputeQuotaArn), out.ComputeQuotaVersion, out.Status, aws.ToString(out.FailureReason))
	}
	if err != nil {
		return written, nil, named(requestError(writeOp(over), id, err), written.Name)
	}
	if written, err = tagUpdated(ctx, s.api, written, over, rc.Config.Tags); err != nil {
		return written, nil, requestError(backend.OpApply, id, err)
	}
	return written, nil, nil
}

// findCreated looks, after a create of doc whose outcome is unknown, for the cluster's quota of
// doc's name and for other quotas of its team, in one paged ListComputeQuotas. The quota of the
// name is ours when it targets the team with the document sent (described, for its
// description); any other quota of the name or the team refuses a second create.
func (s *teamQuotas) findCreated(ctx context.Context, doc quota.ComputeQuota) (lookup, error) {
	var named, team []types.ComputeQuotaSummary
	in := &sagemaker.ListComputeQuotasInput{ClusterArn: aws.String(s.cluster), MaxResults: aws.Int32(100)}
	for {
		out, err := s.api.ListComputeQuotas(ctx, in)
		if err != nil {
			return lookup{}, err
		}
		for _, q := range out.ComputeQuotaSummaries {
			switch {
			case !live(q.Status):
			case aws.ToString(q.Name) == doc.Name:
				named = append(named, q)
			case q.ComputeQuotaTarget != nil && aws.ToString(q.ComputeQuotaTarget.TeamName) == doc.Team:
				team = append(team, q)
			}
		}
		if aws.ToString(out.NextToken) == "" {
			break
		}
		in.NextToken = out.NextToken
	}
	if len(named) == 0 {
		if len(team) > 0 {
			return lookup{refused: refusedCreate(KindComputeQuota, doc.Name, fmt.Sprintf("compute quota %q (%s) of team %q, under another name",
				aws.ToString(team[0].Name), aws.ToString(team[0].ComputeQuotaId), doc.Team))}, nil
		}
		return lookup{}, nil
	}
	id := aws.ToString(named[0].ComputeQuotaId)
	out, err := s.api.DescribeComputeQuota(ctx, &sagemaker.DescribeComputeQuotaInput{ComputeQuotaId: aws.String(id)})
	switch {
	case sagemakerclient.IsNotFound(err):
		return lookup{}, nil
	case err != nil:
		return lookup{}, err
	case !sameDocument(heldDocument(out), doc):
		return lookup{refused: refusedCreate(KindComputeQuota, doc.Name, fmt.Sprintf(
			"compute quota %s of that name holding something else than this create sent", id))}, nil
	}
	return lookup{ours: &created{id, aws.ToString(out.ComputeQuotaArn)}}, nil
}

// heldDocument is the document a quota holds, as DescribeComputeQuota reads it.
func heldDocument(out *sagemaker.DescribeComputeQuotaOutput) quota.ComputeQuota {
	return documentOf(aws.ToString(out.Name), aws.ToString(out.Description), out.ActivationState, out.ComputeQuotaTarget, out.ComputeQuotaConfig)
}

// writeOp is the operation a write's wait belongs to: the create of a new object or the update of over.
func writeOp(over *backend.Record) backend.Op {
	if over == nil {
		return backend.OpCreate
	}
	return backend.OpApply
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Drift lists what the attributes cannot show: a change the API could not apply.
func (s *teamQuotas) Drift(_ context.Context, q *backend.Quota, _ quota.ResolvedConfig, _ string, _ bool) ([]string, error) {
	if err := ownRecord(q.Record); err != nil {
		return nil, err
	}
	if q.ChangeFailed {
		reason := q.Failure
		if reason == "" {
			reason = "SageMaker gave no reason"
		}
		return []string{fmt.Sprintf("the quota's status is %s: %s", q.Status, reason)}, nil
	}
	return nil, nil
}

// ownRecord refuses a record the API did not give: the API's records carry its id, which every
// request about the object names (a Kubernetes one carries none).
func ownRecord(r backend.Record) error {
	if r.ID != "" {
		return nil
	}
	return backend.Problem{Summary: "Record of another store", Detail: fmt.Sprintf(
		"%s %q was handed to the SageMaker backend without a SageMaker id: it was not read from the SageMaker API. This is "+
			"a bug in the provider; please report it.", r.Kind, r.Name)}
}

// RemoveUnusedInputs: the quota relies on nothing the provider created.
func (s *teamQuotas) RemoveUnusedInputs(context.Context, []string) []backend.Problem { return nil }

// Delete deletes the quota and waits until the API no longer knows it.
func (s *teamQuotas) Delete(ctx context.Context, q *backend.Quota) error {
	if err := ownRecord(q.Record); err != nil {
		return err
	}
	err := deleteAndWait(func() error {
		return sagemakerclient.DeleteSent(s.api.DeleteComputeQuota(ctx, &sagemaker.DeleteComputeQuotaInput{ComputeQuotaId: aws.String(q.ID)}))
	}, func(until sagemakerclient.Until) error {
		_, err := sagemakerclient.WaitComputeQuota(ctx, s.api, s.poll, q.ID, until)
		return err
	})
	if err != nil {
		return requestError(backend.OpDelete, q.ID, err)
	}
	s.wrote(q.Config.Config.Team, "")
	return nil
}

// requestError wraps a failed request on one quota with what it means. A delete that SageMaker
// failed (DeleteFailed) has no outcome of its own: its error carries the FailureReason, which is
// what the caller reports. Only a delete still under way when the time ran out is
// ErrStillExists, the seam's "not gone in time".
func requestError(op backend.Op, name string, err error) error {
	e := &backend.RequestError{Op: op, Kind: KindComputeQuota, Name: name, Err: err, Problem: wordRequest(op, KindComputeQuota, subject(KindComputeQuota, name, ""), err)}
	switch {
	case sagemakerclient.IsOutcomeUnknown(err):
		e.Outcome = backend.ErrOutcomeUnknown
	case op == backend.OpCreate && sagemakerclient.IsConflict(err):
		e.Outcome = backend.ErrExists
	case op == backend.OpApply && sagemakerclient.IsConflict(err):
		e.Outcome = backend.ErrChanged
	case op == backend.OpDelete && errors.Is(err, context.DeadlineExceeded):
		e.Outcome = backend.ErrStillExists
	}
	return e
}

// createdQuota is the new quota CreateComputeQuota answered with.
func createdQuota(out *sagemaker.CreateComputeQuotaOutput) created {
	return created{aws.ToString(out.ComputeQuotaId), aws.ToString(out.ComputeQuotaArn)}
}
