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
	return pagesOf[json.RawMessage](ctx, c, gvr, labelSelector, false, onPage)
}

// pagesOf lists the objects of gvr, listPageSize at a time, decodes each page's items into T and
// hands them to onPage. With ahead, it asks for the next page before decoding the current one,
// so that the API server encodes the next page while this process decodes this one: for callers
// that read every page, since one that stops early has asked for a page it never reads.
func pagesOf[T any](ctx context.Context, c *Client, gvr schema.GroupVersionResource, labelSelector string, ahead bool, onPage func(items []T) error) error {
	get := func(cont string) ([]byte, error) {
		req := c.json.Get().AbsPath(objectPath(gvr, "", "")...).Param("limit", fmt.Sprint(listPageSize))
		if labelSelector != "" {
			req = req.Param("labelSelector", labelSelector)
		}
		if cont != "" {
			req = req.Param("continue", cont)
		}
		return rawOf(req.Do(ctx))
	}
	type fetched struct {
		raw []byte
		err error
	}
	raw, err := get("")
	for err == nil {
		var next chan fetched
		var askNext func(cont string)
		if ahead {
			askNext = func(cont string) {
				next = make(chan fetched, 1)
				go func() {
					raw, err := get(cont)
					next <- fetched{raw, err}
				}()
			}
		}
		items, cont, decodeErr := decodePage[T](raw, askNext)
		if decodeErr != nil {
			return fmt.Errorf("decoding the %s list: %w", gvr.Resource, decodeErr)
		}
		if err := onPage(items); err != nil {
			return err
		}
		switch {
		case cont == "":
			return nil
		case next != nil:
			f := <-next
			raw, err = f.raw, f.err
		default:
			raw, err = get(cont)
		}
	}
	return err
}

// decodePage decodes a LIST's items into T and returns its continue token. With more set and
// more pages to come, it calls more with the token before decoding the items, which is most of
// the work; without, it decodes the page in one pass.
func decodePage[T any](raw []byte, more func(cont string)) ([]T, string, error) {
	if more == nil {
		var page struct {
			metav1.ListMeta `json:"metadata"`
			Items           []T `json:"items"`
		}
		err := json.Unmarshal(raw, &page)
		return page.Items, page.Continue, err
	}
	var head struct {
		metav1.ListMeta `json:"metadata"`
		Items           json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, "", err
	}
	if head.Continue != "" {
		more(head.Continue)
	}
	var items []T
	if err := json.Unmarshal(head.Items, &items); err != nil {
		return nil, "", err
	}
	return items, head.Continue, nil
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
	return pagesOf(ctx, c, gvr, "", false, onPage)
}

type noRetriesKey struct{}

// WithoutRetries marks ctx so that requests sent with it are sent once: for reads a caller
// would rather skip than wait for, such as a preview on an unreachable cluster.
func WithoutRetries(ctx context.Context) context.Context {
	return context.WithValue(ctx, noRetriesKey{}, true)
}
