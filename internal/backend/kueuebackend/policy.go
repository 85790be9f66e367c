package kueuebackend

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

var _ backend.SchedulerPolicy = schedulerPolicy{}

// schedulerPolicy stores the cluster's policy as its priority classes, one WorkloadPriorityClass
// each; fair sharing is the Kueue manager's configuration, which it does not hold.
type schedulerPolicy struct{ classes *PriorityClasses }

// Create creates the classes in order, each with a POST: an existing class is refused with its
// owner named, unless an interrupted run left it, which is adopted.
func (s schedulerPolicy) Create(ctx context.Context, p quota.SchedulerPolicy, owner string) (backend.PolicyWritten, error) {
	var (
		w       backend.PolicyWritten
		created []quota.PriorityClass
	)
	for i, c := range p.PriorityClasses {
		maybe, err := s.create(ctx, i, c, p.Tags, owner, &w)
		if err == nil {
			created = append(created, c)
			continue
		}
		// The last POST may have reached the server before the context ended.
		w.Touched = refsOf(append(slices.Clone(created), c))
		if maybe {
			created = append(created, c)
		}
		if len(created) > 0 {
			w.Stored, w.Objects = &backend.StoredPolicy{Policy: quota.SchedulerPolicy{PriorityClasses: created}, OwnerID: owner}, refsOf(created)
			w.NotWritten = []string{"nothing else"}
			if rest := refsOf(p.PriorityClasses[len(created):]); len(rest) > 0 {
				w.NotWritten = make([]string, len(rest))
				for j, o := range rest {
					w.NotWritten[j] = o.String()
				}
			}
		}
		return w, err
	}
	w.Stored = &backend.StoredPolicy{Policy: quota.SchedulerPolicy{PriorityClasses: p.PriorityClasses}, OwnerID: owner}
	w.Objects = refsOf(p.PriorityClasses)
	return w, nil
}

// create claims the class c, the i-th, with a POST; maybe reports that a failed POST may have
// created it. An existing class is refused, unless an interrupted run left it: then it is
// adopted (w.Adopted) and written over.
func (s schedulerPolicy) create(ctx context.Context, i int, c quota.PriorityClass, tags map[string]string, owner string,
	w *backend.PolicyWritten) (maybe bool, err error) {
	err = s.classes.create(ctx, c, tags, owner)
	if errors.Is(err, backend.ErrExists) {
		existing, getErr := s.classes.Get(ctx, c.Name)
		switch {
		case existing != nil && !existing.Terminating && existing.Unconfirmed != "":
			if err := s.classes.adopt(ctx, existing); err != nil {
				return false, err
			}
			w.Adopted = append(w.Adopted, existing.Record)
			if err := s.classes.Put(ctx, c, tags, owner); err != nil {
				return false, &backend.ClassError{Class: i, Err: err}
			}
			return false, nil
		case existing != nil:
			return false, &backend.ClassError{Class: i, Err: ownedElsewhere(existing, c.Name)}
		case getErr != nil:
			return false, errors.Join(getErr, &backend.ClassError{Class: i, Err: err})
		}
	}
	if err != nil {
		return errors.Is(err, backend.ErrOutcomeUnknown) || ctx.Err() != nil, &backend.ClassError{Class: i, Err: err}
	}
	return false, nil
}

// Read reads the state's classes, one GET each; a class that is gone is left out.
func (s schedulerPolicy) Read(ctx context.Context, st backend.PolicyState) (*backend.StoredPolicy, error) {
	return readClasses(ctx, st, s.classes.Get)
}

// readClasses reads the classes of st with get, one WorkloadPriorityClass each: a refresh and a
// listing (over what it listed) read them here.
func readClasses(ctx context.Context, st backend.PolicyState, get func(context.Context, string) (*StoredClass, error)) (*backend.StoredPolicy, error) {
	out := &backend.StoredPolicy{OwnerID: st.Owner}
	// The tags the classes carry: the state's unless a class carries others.
	out.Policy.Tags = st.Tags
	if st.Takeover {
		out.Drift = append(out.Drift, "imported: the next apply records this resource's owner_id on the WorkloadPriorityClasses")
	}
	for _, c := range st.Policy.PriorityClasses {
		wpc, err := get(ctx, c.Name)
		if err != nil {
			return nil, err
		}
		if wpc == nil || wpc.Terminating {
			tflog.Info(ctx, "WorkloadPriorityClass is gone; the next plan creates it", map[string]any{"class": c.Name})
			continue
		}
		out.Policy.PriorityClasses = append(out.Policy.PriorityClasses, quota.PriorityClass{Name: c.Name, Weight: wpc.Weight})
		if !maps.Equal(wpc.Tags, st.Tags) {
			out.Policy.Tags = wpc.Tags
		}
		switch {
		case st.Takeover:
		case !wpc.Owner.Owns(st.Owner):
			if out.Conflict == nil {
				out.Conflict = &wpc.Record
			}
			out.Drift = append(out.Drift, fmt.Sprintf("%s %q is managed by %s", wpc.Kind, wpc.Name, wpc.Owner.Description))
		default:
			out.Drift = append(out.Drift, wpc.drift(c.Name, st.Owner)...)
		}
	}
	tflog.Debug(ctx, "read cluster scheduler config", map[string]any{"classes": len(out.Policy.PriorityClasses), "drift": strings.Join(out.Drift, "; ")})
	return out, nil
}

// Update checks every class before writing any, then creates or applies each and deletes the
// state's classes that p no longer holds (those it owns, or took over by import).
func (s schedulerPolicy) Update(ctx context.Context, p quota.SchedulerPolicy, owner string, st backend.PolicyState) (backend.PolicyWritten, error) {
	var w backend.PolicyWritten
	priorNames := map[string]bool{}
	for _, c := range st.Policy.PriorityClasses {
		priorNames[c.Name] = true
	}
	existing := make([]*StoredClass, len(p.PriorityClasses))
	for i, c := range p.PriorityClasses {
		wpc, err := s.classes.Get(ctx, c.Name)
		if err != nil {
			return w, err
		}
		if wpc != nil && !wpc.Owner.Owns(st.Owner) && (!st.Takeover || !priorNames[c.Name]) {
			return w, &backend.ClassError{Class: i, Err: &backend.OwnedError{Record: wpc.Record, Managed: priorNames[c.Name]}}
		}
		existing[i] = wpc
	}
	for i, c := range p.PriorityClasses {
		if existing[i] == nil {
			// A class created here carries the resource's owner identity, so if a later step
			// fails, the next apply finds it as this resource's own.
			if _, err := s.create(ctx, i, c, p.Tags, owner, &w); err != nil {
				return w, err
			}
			continue
		}
		if err := s.classes.Put(ctx, c, p.Tags, owner); err != nil {
			return w, &backend.ClassError{Class: i, Err: err}
		}
	}
	for name := range priorNames {
		if slices.ContainsFunc(p.PriorityClasses, func(c quota.PriorityClass) bool { return c.Name == name }) {
			continue
		}
		if err := s.deleteClass(ctx, name, st, &w); err != nil {
			return w, err
		}
	}
	w.Stored = &backend.StoredPolicy{Policy: quota.SchedulerPolicy{PriorityClasses: p.PriorityClasses}, OwnerID: owner}
	return w, nil
}

// Delete deletes the state's classes this resource owns. Workloads that took a class's value
// keep it.
func (s schedulerPolicy) Delete(ctx context.Context, st backend.PolicyState, _ time.Duration) (backend.PolicyWritten, error) {
	var w backend.PolicyWritten
	for _, c := range st.Policy.PriorityClasses {
		if err := s.deleteClass(ctx, c.Name, st, &w); err != nil {
			return w, err
		}
	}
	return w, nil
}

// deleteClass deletes a class's WorkloadPriorityClass when the state's owner owns it (or took it
// over by import); one another owner records is left in place (w.Left).
func (s schedulerPolicy) deleteClass(ctx context.Context, class string, st backend.PolicyState, w *backend.PolicyWritten) error {
	wpc, err := s.classes.Get(ctx, class)
	if err != nil || wpc == nil {
		return err
	}
	if !st.Takeover && !wpc.Owner.Owns(st.Owner) {
		w.Left = append(w.Left, wpc.Record)
		return nil
	}
	return s.classes.Delete(ctx, wpc)
}

// Import reads the classes the id names ("inference,training"): each must exist. The first
// apply afterwards records the resource as their owner.
func (s schedulerPolicy) Import(ctx context.Context, id string) (*backend.StoredPolicy, error) {
	var classes []quota.PriorityClass
	for _, name := range strings.Split(id, ",") {
		classes = append(classes, quota.PriorityClass{Name: strings.TrimSpace(name)})
	}
	for _, p := range quota.ValidatePriorityClasses(classes) {
		return nil, backend.Problem{Summary: "Invalid import ID", Detail: fmt.Sprintf("The import ID is the priority class "+
			"names joined by commas, e.g. `terraform import %s.example inference,training`; got %q. %s",
			backend.SchedulerPolicyResource, id, p.Detail)}
	}
	for _, c := range classes {
		if c.Name == "" {
			return nil, backend.Problem{Summary: "Invalid import ID", Detail: fmt.Sprintf("The import ID is the priority "+
				"class names joined by commas, e.g. `inference,training`; got %q, which has an empty name.", id)}
		}
	}
	var missing []string
	for i, c := range classes {
		wpc, err := s.classes.Get(ctx, c.Name)
		if err != nil {
			return nil, err
		}
		if wpc == nil {
			missing = append(missing, quota.PriorityClassObjectName(c.Name))
			continue
		}
		classes[i].Weight = wpc.Weight
	}
	if len(missing) > 0 {
		return nil, backend.Problem{Summary: "Cannot import priority classes", Detail: fmt.Sprintf("WorkloadPriorityClass %s "+
			"does not exist, so there is nothing to import for it. Check the names (the import ID names classes without the "+
			"-priority suffix), or leave the class out of the import and let terraform apply create it.",
			strings.Join(missing, ", "))}
	}
	return &backend.StoredPolicy{Policy: quota.SchedulerPolicy{PriorityClasses: classes}}, nil
}

// List lists every WorkloadPriorityClass named after a class (<class>-priority), in name order,
// as one policy read as after an import of its classes.
func (s schedulerPolicy) List(ctx context.Context, _ bool) (*backend.StoredPolicy, error) {
	stored, err := s.classes.list(ctx)
	if err != nil {
		return nil, err
	}
	var (
		classes []quota.PriorityClass
		names   []string
		byName  = map[string]*StoredClass{}
	)
	for _, c := range stored {
		name, _ := quota.PriorityClassOfObjectName(c.Name)
		if c.Terminating {
			continue
		}
		classes = append(classes, quota.PriorityClass{Name: name, Weight: c.Weight})
		byName[name], names = c, append(names, c.Name)
	}
	if len(classes) == 0 {
		return nil, nil
	}
	out, err := readClasses(ctx, backend.PolicyState{Policy: quota.SchedulerPolicy{PriorityClasses: classes}, Takeover: true},
		func(_ context.Context, class string) (*StoredClass, error) { return byName[class], nil })
	if err != nil {
		return nil, err
	}
	out.Description = "WorkloadPriorityClasses " + strings.Join(names, ", ")
	out.NotRepresented = classesNotRepresented(classes, byName)
	return out, nil
}

// classesNotRepresented lists what of the classes the resource cannot hold: what the resource's
// own checks refuse, and different tags on different classes (it writes one set on all).
func classesNotRepresented(classes []quota.PriorityClass, byName map[string]*StoredClass) []string {
	var out []string
	for _, p := range quota.ValidatePriorityClasses(classes) {
		out = append(out, p.Detail)
	}
	first := byName[classes[0].Name]
	for _, c := range classes[1:] {
		if other := byName[c.Name]; !maps.Equal(first.Tags, other.Tags) {
			out = append(out, fmt.Sprintf("%s %q carries the tags %v and %s %q the tags %v: an apply writes the same tags on "+
				"every class", first.Kind, first.Name, first.Tags, other.Kind, other.Name, other.Tags))
			break
		}
	}
	return out
}

// refsOf names the WorkloadPriorityClasses of classes.
func refsOf(classes []quota.PriorityClass) []backend.ObjectRef {
	out := make([]backend.ObjectRef, len(classes))
	for i, c := range classes {
		out[i] = classRef(c.Name)
	}
	return out
}
