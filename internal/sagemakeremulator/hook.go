package sagemakeremulator

import (
	"context"
	"errors"
)

// ClusterWriter does on the cluster what the task-governance add-on does when an object's
// transition completes. Its methods get a copy of the object with its transitional status
// (Creating, Updating or Deleting) and new version; an error fails the transition (CreateFailed,
// UpdateFailed or DeleteFailed) with the error's text as FailureReason. Calls are serialized and
// run without the emulator's lock: a writer may read the Emulator (Quota, Quotas, ...), but not
// call its API or Settle, which wait for the writer.
type ClusterWriter interface {
	// QuotaChanged makes the cluster hold q, created (q.Status Creating) or updated (Updating).
	QuotaChanged(ctx context.Context, q ComputeQuota) error
	// QuotaDeleted removes q from the cluster.
	QuotaDeleted(ctx context.Context, q ComputeQuota) error
	// SchedulerConfigChanged makes the cluster follow c, created or updated.
	SchedulerConfigChanged(ctx context.Context, c ClusterSchedulerConfig) error
	// SchedulerConfigDeleted removes c from the cluster.
	SchedulerConfigDeleted(ctx context.Context, c ClusterSchedulerConfig) error
}

// Settle completes every pending transition now, as if its time had come.
func (e *Emulator) Settle(ctx context.Context) error {
	return errors.Join(settle(ctx, e, e.quotas, nil, true), settle(ctx, e, e.configs, nil, true))
}

// settle completes the due transitions of ids (all objects when nil; all pending ones when
// force). An injected failure fails a transition without asking the writer. The error returned
// is only the context's: a writer's error is the object's FailureReason.
func settle[T any, P object[T]](ctx context.Context, e *Emulator, s *store[T, P], ids []string, force bool) error {
	e.mu.Lock()
	due := s.due(ids, e.opts.Now(), e.settle, force)
	e.mu.Unlock()
	if len(due) == 0 {
		return nil
	}
	e.settleMu.Lock()
	defer e.settleMu.Unlock()
	// Another request may have completed them while this one waited.
	e.mu.Lock()
	due = s.due(ids, e.opts.Now(), e.settle, force)
	e.mu.Unlock()
	for _, d := range due {
		if err := ctx.Err(); err != nil {
			return err
		}
		var failure error
		if d.failReason != "" {
			failure = errors.New(d.failReason)
		} else {
			wctx, cancel := context.WithTimeout(ctx, e.opts.WriterTimeout)
			failure = s.write(wctx, e.opts.Writer, d.obj)
			cancel()
		}
		e.mu.Lock()
		s.finish(d, failure)
		e.mu.Unlock()
	}
	return nil
}
