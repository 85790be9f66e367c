package sagemakerbackend

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakerclient"
)

// wordRequest is how a failed request of op on one object reads: the object (subject), the
// operation with its attempts and the API's error code and message (a failed status with its
// FailureReason), and what to do when only the user can fix it.
func wordRequest(op backend.Op, kind, subject string, err error) backend.Problem {
	verb := map[backend.Op]string{backend.OpRead: "read", backend.OpCreate: "create", backend.OpApply: "update", backend.OpDelete: "delete"}[op]
	object := strings.TrimPrefix(kind, "SageMaker ")
	var unsettled *unsettledCreate
	if errors.As(err, &unsettled) {
		detail := fmt.Sprintf("%s: %s.", subject, strings.TrimSuffix(answer(unsettled.last), "."))
		if unsettled.lookup != nil {
			detail += fmt.Sprintf(" That answer does not say whether SageMaker created the %s, and looking it up failed: %s.",
				object, strings.TrimSuffix(unsettled.lookup.Error(), "."))
		} else {
			detail += fmt.Sprintf(" The create was sent %d times without an answer, and each look-up afterwards found no %s: "+
				"SageMaker did not create it. Run apply again once the API answers.", unsettled.rounds, object)
		}
		return backend.Problem{Summary: fmt.Sprintf("Cannot %s the %s", verb, kind), Detail: detail}
	}
	detail := fmt.Sprintf("%s: %s.", subject, strings.TrimSuffix(answer(err), "."))
	switch {
	case strings.Contains(err.Error(), "AccessDenied"):
		detail += " The provider's AWS credentials need the SageMaker actions of the IAM policy in the provider's " +
			"documentation (examples/iam/task-governance-policy.json)."
	case op == backend.OpCreate && sagemakerclient.IsOutcomeUnknown(err):
		detail += fmt.Sprintf(" That answer does not say whether SageMaker created the %s.", object)
	}
	return backend.Problem{Summary: fmt.Sprintf("Cannot %s the %s", verb, kind), Detail: detail}
}

// subject names an object of kind in messages: by its name, with its id when known ("" when
// not); key is its name or, when the name is not known, its id. Knowing neither, it names the kind.
func subject(kind, key, id string) string {
	switch {
	case key == "" && id == "":
		return kind
	case key == "":
		return fmt.Sprintf("%s (id %s)", kind, id)
	case id == "" || id == key:
		return fmt.Sprintf("%s %q", kind, key)
	}
	return fmt.Sprintf("%s %q (id %s)", kind, key, id)
}

// named words e, a failed request on an object named name whose id is e.Name, by both.
func named(err error, name string) error {
	var e *backend.RequestError
	if errors.As(err, &e) && name != "" {
		e.Problem = wordRequest(e.Op, e.Kind, subject(e.Kind, name, e.Name), e.Err)
	}
	return err
}

// answer is what SageMaker answered: the operation's error without the client's note to its
// caller on an unknown outcome (the message says what that means for the user).
func answer(err error) string {
	var opErr *sagemakerclient.OperationError
	if errors.As(err, &opErr) && opErr.OutcomeUnknown {
		quiet := *opErr
		quiet.OutcomeUnknown = false
		return quiet.Error()
	}
	return err.Error()
}

// words are the SageMaker path's own messages.
type words struct{}

// ForeignID: the state records an id this backend did not find its own; a quota or config of the
// API is addressed by its id, so this holds only for an id of another store.
func (words) ForeignID(id string) backend.Problem {
	return backend.Problem{Summary: "Object not held by the SageMaker API", Detail: fmt.Sprintf("This resource records "+
		"the id %s, which the SageMaker API did not give it. Remove it from state (a removed block with lifecycle "+
		"{ destroy = false }) and import the object through the provider configuration that holds it.", id)}
}

func (words) NoQuotaToImport(team string) backend.Problem {
	return backend.Problem{Summary: "Cannot import compute quota", Detail: fmt.Sprintf("No SageMaker compute quota of the cluster "+
		"targets team %q (or it is being deleted), so there is nothing to import. The import ID is the team or the "+
		"quota's id (12 lowercase letters and digits, as aws sagemaker list-compute-quotas shows it). Check it, or "+
		"remove the import and let terraform apply create the quota.", team)}
}

// NotDeleted is the API's reason (a DeleteFailed status carries its FailureReason), then that
// the object stays in state and what to do. The API deletes an object whatever runs under it:
// nothing is read.
func (words) NotDeleted(_ context.Context, err error, timeout time.Duration) backend.Problem {
	var re *backend.RequestError
	p := backend.Problem{Summary: "Object not deleted", Detail: err.Error()}
	if errors.As(err, &re) {
		p = re.Problem
	}
	if errors.Is(err, backend.ErrStillExists) {
		p.Detail += fmt.Sprintf(" SageMaker had not finished deleting it within timeouts.delete (%s). It stays in state: "+
			"run destroy again once SageMaker has deleted it, or raise timeouts.delete.", strings.TrimSuffix(timeout.String(), "0s"))
	} else {
		p.Detail += " It stays in state: fix what the reason names, then run destroy again."
	}
	return p
}
