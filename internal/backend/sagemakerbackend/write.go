package sagemakerbackend

import (
	"context"
	"fmt"
	"strconv"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakerclient"
)

// The steps a write of a compute quota and of a cluster scheduler config share. wrap turns a
// failed request into the kind's error (requestError, schedulerError).

// targetVersion is the version in state an update of over goes over; kind names the object in
// the error.
func targetVersion(kind string, over *backend.Record) (int64, error) {
	target, err := strconv.ParseInt(over.Version, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%s %s: the version %q in state is not a number: refresh, then apply again", kind, over.ID, over.Version)
	}
	return target, nil
}

// tagsOf reads the tags of the object arn; a failure is a read of the object id.
func tagsOf(ctx context.Context, api sagemakerclient.API, arn, id string, wrap func(backend.Op, string, error) error) (map[string]string, error) {
	tags, err := readTags(ctx, api, arn)
	if err != nil {
		return nil, wrap(backend.OpRead, id, err)
	}
	return tags, nil
}

// retag writes only the tags of an object whose definition is unchanged (seen), so its version
// does not move; on failure the record keeps the tags the object had.
func retag(ctx context.Context, api sagemakerclient.API, seen backend.Record, over *backend.Record, tags map[string]string) (backend.Record, error) {
	written := seen
	if err := writeTags(ctx, api, over.ARN, over.Tags, tags); err != nil {
		written.Tags = over.Tags
		return written, err
	}
	written.Tags = tags
	return written, nil
}

// tagUpdated records tags on an object just written: a create sent them with it, an update
// (over != nil) changes them by key.
func tagUpdated(ctx context.Context, api sagemakerclient.API, written backend.Record, over *backend.Record, tags map[string]string) (backend.Record, error) {
	if over != nil {
		if err := writeTags(ctx, api, written.ARN, over.Tags, tags); err != nil {
			return written, err
		}
	}
	written.Tags = tags
	return written, nil
}
