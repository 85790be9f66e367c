package kube

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// listPages lists the objects of gvr in every namespace, listPageSize at a time, and hands each
// page's items to onPage. labelSelector "" selects all.
func (c *Client) listPages(ctx context.Context, gvr schema.GroupVersionResource, labelSelector string, onPage func(items []json.RawMessage) error) error {
	return pagesOf[json.RawMessage](ctx, c, gvr, labelSelector, onPage)
}

// pagesOf lists the objects of gvr, listPageSize at a time, decodes each page's items into T as
// the page is decoded (one pass over its bytes) and hands them to onPage.
func pagesOf[T any](ctx context.Context, c *Client, gvr schema.GroupVersionResource, labelSelector string, onPage func(items []T) error) error {
	cont := ""
	for {
		req := c.json.Get().AbsPath(objectPath(gvr, "", "")...).Param("limit", fmt.Sprint(listPageSize))
		if labelSelector != "" {
			req = req.Param("labelSelector", labelSelector)
		}
		if cont != "" {
			req = req.Param("continue", cont)
		}
		raw, err := rawOf(req.Do(ctx))
		if err != nil {
			return err
		}
		var page struct {
			metav1.ListMeta `json:"metadata"`
			Items           []T `json:"items"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return fmt.Errorf("decoding the %s list: %w", gvr.Resource, err)
		}
		if err := onPage(page.Items); err != nil {
			return err
		}
		if cont = page.Continue; cont == "" {
			return nil
		}
	}
}

// List decodes every object of gvr in the cluster into *out, a slice of the kind's type. It
// bypasses the read cache: what it returns is the cluster's state at the time of the LIST.
func List[T any](ctx context.Context, c *Client, gvr schema.GroupVersionResource, out *[]T) error {
	*out = nil
	return ListPages(ctx, c, gvr, func(page []T) error {
		*out = append(*out, page...)
		return nil
	})
}

// ListPages lists every object of gvr in the cluster a page at a time (listPageSize objects, the
// next page asked for with the previous one's continue token), decodes each page into T and
// hands it to onPage. An error from onPage ends the listing and is returned: a caller that has
// what it needs stops without reading the other pages. It bypasses the read cache.
func ListPages[T any](ctx context.Context, c *Client, gvr schema.GroupVersionResource, onPage func(page []T) error) error {
	if err := c.init(ctx); err != nil {
		return err
	}
	return pagesOf(ctx, c, gvr, "", onPage)
}

type noRetriesKey struct{}

// WithoutRetries marks ctx so that requests sent with it are sent once: for reads a caller
// would rather skip than wait for, such as a preview on an unreachable cluster.
func WithoutRetries(ctx context.Context) context.Context {
	return context.WithValue(ctx, noRetriesKey{}, true)
}
