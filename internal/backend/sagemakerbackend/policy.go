package sagemakerbackend

import (
	"context"
	"fmt"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// The policy as the cluster's one scheduler config: its id stands for the owner, and its version
// guards an update.

var _ backend.SchedulerPolicy = (*schedulerConfigs)(nil)

// Create creates the config, refusing one the cluster has already (it holds one at most). Once
// the config exists it is returned, also when its creation failed.
func (s *schedulerConfigs) Create(ctx context.Context, p quota.SchedulerPolicy, _ string) (backend.PolicyWritten, error) {
	var w backend.PolicyWritten
	existing, err := s.get(ctx)
	if err != nil {
		return w, err
	}
	if existing != nil {
		return w, backend.Problem{Summary: "Cluster scheduler config already exists", Detail: fmt.Sprintf(
			"The cluster already has %s %q (id %s), and a cluster holds one at most, so this resource will not create "+
				"another. To manage it here, import it:\n\n  %s",
			existing.Kind, existing.Name, existing.ID, backend.PolicyImportCommand(existing.ID))}
	}
	written, err := s.put(ctx, p, nil)
	if written.ID == "" {
		return w, err
	}
	stored := &backend.StoredPolicy{Record: written, Policy: p, OwnerID: written.ID, Drift: configDrift(written)}
	if p.IdleResourceSharing == "" { // unset: the API's default, known once it holds the config
		if c, err := s.get(ctx); err == nil && c != nil {
			stored.Policy.IdleResourceSharing = c.Policy.IdleResourceSharing
		}
	}
	w.Stored = stored
	w.Objects = []backend.ObjectRef{{Kind: written.Kind, Name: written.Name}}
	w.Touched = w.Objects
	return w, err
}

// Read reads the cluster's config: nil when it has none, or another than the state's.
func (s *schedulerConfigs) Read(ctx context.Context, st backend.PolicyState) (*backend.StoredPolicy, error) {
	c, err := s.get(ctx)
	if err != nil {
		return nil, err
	}
	if c == nil || c.Terminating || (st.ID != "" && c.ID != st.ID) {
		return nil, nil
	}
	return s.stored(ctx, c, st.Owner, st.ReadTags)
}

// stored is the policy c holds, recording owner, with its tags when withTags.
func (s *schedulerConfigs) stored(ctx context.Context, c *storedConfig, owner string, withTags bool) (*backend.StoredPolicy, error) {
	out := &backend.StoredPolicy{Record: c.Record, Policy: c.Policy, OwnerID: owner, Drift: configDrift(c.Record)}
	if withTags {
		tags, err := s.tags(ctx, c)
		if err != nil {
			return nil, err
		}
		out.Policy.Tags = tags
	}
	return out, nil
}

// configDrift is what the attributes cannot show: a change the API could not apply.
func configDrift(r backend.Record) []string {
	if r.ChangeFailed {
		return []string{fmt.Sprintf("the config's status is %s: %s", r.Status, r.Failure)}
	}
	return nil
}

// Update writes p over the config at the state's version. An idle_resource_sharing left unset
// keeps the state's.
func (s *schedulerConfigs) Update(ctx context.Context, p quota.SchedulerPolicy, owner string, st backend.PolicyState) (backend.PolicyWritten, error) {
	var w backend.PolicyWritten
	var over *backend.Record
	if st.ID != "" {
		over = &backend.Record{ID: st.ID, ARN: st.ARN, Version: st.Version, Tags: st.Tags}
	}
	written, err := s.put(ctx, p, over)
	if err != nil {
		return w, err
	}
	if p.IdleResourceSharing == "" {
		p.IdleResourceSharing = st.Policy.IdleResourceSharing
	}
	w.Stored = &backend.StoredPolicy{Record: written, Policy: p, OwnerID: owner}
	return w, nil
}

// Delete deletes the state's config. The id in state names the resource's config, so one created
// since in its place (the cluster holds one) is not deleted, even by a destroy that did not
// refresh. A state without an id wrote no config through the API: there is nothing of its own
// to delete.
func (s *schedulerConfigs) Delete(ctx context.Context, st backend.PolicyState, timeout time.Duration) (backend.PolicyWritten, error) {
	if st.ID == "" {
		return backend.PolicyWritten{}, nil
	}
	if err := s.deleteConfig(ctx, st.Record); err != nil {
		return backend.PolicyWritten{}, words{}.NotDeleted(context.WithoutCancel(ctx), err, timeout)
	}
	return backend.PolicyWritten{}, nil
}

// Import reads the cluster's one config, whatever the id names (its id, or its classes).
func (s *schedulerConfigs) Import(ctx context.Context, _ string) (*backend.StoredPolicy, error) {
	c, err := s.get(ctx)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, backend.Problem{Summary: "Cannot import the cluster scheduler config", Detail: "The cluster has no " +
			"cluster scheduler config, so there is nothing to import. Remove the import and let terraform apply create it."}
	}
	return &backend.StoredPolicy{Record: c.Record, Policy: c.Policy, OwnerID: c.ID}, nil
}

// List is the cluster's config, as an import and the read after it save it.
func (s *schedulerConfigs) List(ctx context.Context, withTags bool) (*backend.StoredPolicy, error) {
	c, err := s.get(ctx)
	if err != nil || c == nil || c.Terminating {
		return nil, err
	}
	out, err := s.stored(ctx, c, c.ID, withTags)
	if err != nil {
		return nil, err
	}
	out.Description = fmt.Sprintf("%s %q (id %s)", c.Kind, c.Name, c.ID)
	return out, nil
}
