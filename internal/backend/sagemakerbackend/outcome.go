package sagemakerbackend

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakerclient"
)

// A write whose outcome is unknown (a 5xx, or an answer lost after the request was sent; see
// sagemakerclient.WithRetries) is resolved here by reading what the API holds, so that it
// fails only when the API proves it did not act.

// createRounds bounds the creates of one object whose outcome stays unknown: each round is one
// create (retried by the client while it is throttled) and one look-up that found nothing.
const createRounds = 5

// created names the object a create made.
type created struct{ id, arn string }

// lookup is what the look-up after a create of unknown outcome found.
type lookup struct {
	// ours is the object as the create sent it (name, team and content): the create landed.
	ours *created
	// refused says why creating again would be wrong: another object holds the name or the team.
	refused error
}

// createOnce sends a create (send with in; ids finds the new object's id and ARN in the answer)
// that carries no client token so that the object exists once, whatever the answers. When the
// outcome is unknown (the client does not retry a create then), find looks the object up: one as
// sent is adopted, none means the create did not land and it is sent again. A conflict answered
// after an unknown outcome is our earlier attempt holding the name, resolved the same way. A 4xx
// of a first attempt, which proves the API did not act, fails as it is. wrap makes the caller's
// error.
func createOnce[In, Out, Option any](ctx context.Context, kind string, send func(context.Context, In, ...Option) (Out, error),
	in In, ids func(Out) created, find func(context.Context) (lookup, error), wrap func(error) error,
) (created, error) {
	unknown := false
	for round := 1; ; round++ {
		out, err := send(ctx, in)
		switch {
		case err == nil:
			return ids(out), nil
		case sagemakerclient.IsOutcomeUnknown(err), unknown && sagemakerclient.IsConflict(err):
		default:
			return created{}, wrap(err)
		}
		unknown = true
		found, lerr := find(ctx)
		switch {
		case lerr != nil:
			return created{}, wrap(&unsettledCreate{last: err, lookup: lerr})
		case found.ours != nil:
			tflog.Info(ctx, "a create whose answer did not come had landed: adopted", map[string]any{"kind": kind, "id": found.ours.id})
			return *found.ours, nil
		case found.refused != nil:
			return created{}, found.refused
		case round >= createRounds || ctx.Err() != nil:
			return created{}, wrap(&unsettledCreate{last: err, rounds: round})
		}
		tflog.Info(ctx, "a create whose answer did not come had not landed: sending it again", map[string]any{"kind": kind, "round": round})
	}
}

// unsettledCreate is a create whose outcome its look-ups could not settle: the look-up failed
// (lookup; the outcome stays unknown), or every one of rounds creates went unanswered and the
// look-up after each found nothing (the object was not created).
type unsettledCreate struct {
	last   error
	lookup error
	rounds int
}

func (e *unsettledCreate) Error() string {
	if e.lookup != nil {
		return fmt.Sprintf("%v; looking it up failed too: %v", e.last, e.lookup)
	}
	return fmt.Sprintf("%v; sent %d times, and each look-up afterwards found nothing", e.last, e.rounds)
}

// Unwrap is the last answer while the outcome is unknown; once the look-ups found nothing it is
// known (not created), so the error no longer reads as unknown.
func (e *unsettledCreate) Unwrap() error {
	if e.lookup != nil {
		return e.last
	}
	return nil
}

// updateLanded reports whether an update over version target whose outcome is unknown took
// effect: the object now holds what it sent, at the next version.
func updateLanded(version *int32, target int64, holdsSent bool) bool {
	return version != nil && int64(*version) == target+1 && holdsSent
}

// deleteAndWait sends a delete (send), counts one whose outcome is unknown as sent when the
// object is found gone or being deleted, then waits until the API no longer knows it. wait polls
// the object's Describe until its Until says done.
func deleteAndWait(send func() error, wait func(sagemakerclient.Until) error) error {
	err := send()
	if sagemakerclient.IsOutcomeUnknown(err) && deleteLanded(wait) {
		err = nil
	}
	if err != nil {
		return err
	}
	return wait(sagemakerclient.Deleted)
}

// deleteLanded reports whether a delete whose outcome is unknown took effect: one Describe finds
// the object gone or being deleted.
func deleteLanded(wait func(sagemakerclient.Until) error) bool {
	var seen sagemakerclient.Observation
	err := wait(func(o sagemakerclient.Observation) (bool, error) {
		seen = o
		return true, nil
	})
	return err == nil && (seen.Gone || !live(seen.Status))
}

// sameDocument reports whether the API holds the quota document sent: both are read through the
// API's types (float32 amounts), so only what the API cannot keep is lost on both sides alike.
func sameDocument(held, sent quota.ComputeQuota) bool {
	sent = documentOf(sent.Name, sent.Description, types.ActivationState(sent.ActivationState), sdkTarget(sent), sdkConfig(sent))
	a, errA := json.Marshal(held)
	b, errB := json.Marshal(sent)
	return errA == nil && errB == nil && string(a) == string(b)
}

// samePolicy reports whether a scheduler config holds the policy sent.
func samePolicy(held, sent quota.SchedulerPolicy) bool {
	if held.FairShare != sent.FairShare || held.IdleResourceSharing != sent.IdleResourceSharing || len(held.PriorityClasses) != len(sent.PriorityClasses) {
		return false
	}
	for i := range held.PriorityClasses {
		if held.PriorityClasses[i] != sent.PriorityClasses[i] {
			return false
		}
	}
	return true
}

// refusedCreate is the error of a create of unknown outcome that finds another object in its
// place: its name or its team is taken, so a second create would fail or duplicate.
func refusedCreate(kind, name, why string) error {
	err := fmt.Errorf("the create's answer did not come, and looking it up found %s: it was not adopted and not created again", why)
	return &backend.RequestError{Op: backend.OpCreate, Kind: kind, Name: name, Outcome: backend.ErrExists, Err: err,
		Problem: wordRequest(backend.OpCreate, kind, subject(kind, name, ""), err)}
}
