package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A 404 means two different things: the object does not exist, or the cluster does not serve
// its API at all (Kueue missing, or too old to serve the version the provider speaks). Taking
// the second for the first would drop every quota from state on a cluster with an old Kueue, so
// every 404 is classified; only an unclear one costs a discovery request (one per group and
// provider run), and refresh of existing objects never needs one.

// APINotServedError says that the cluster does not serve a resource's API version.
type APINotServedError struct {
	GVR schema.GroupVersionResource
	// Served are the versions of the group the cluster serves; empty when it serves none.
	Served []string
	// Discovery is why the served versions are unknown, when the discovery request failed.
	Discovery error
}

// MinKueue is the first Kueue release that serves kueue.x-k8s.io/v1beta2 (the provider is
// tested with v0.15.0, v0.17.0 and v0.19.2).
const MinKueue = "v0.15"

func (e *APINotServedError) Error() string {
	gv := e.GVR.GroupVersion().String()
	var b strings.Builder
	fmt.Fprintf(&b, "the cluster does not serve %s %s", gv, e.GVR.Resource)
	switch {
	case e.Discovery != nil:
		fmt.Fprintf(&b, " (and asking which versions of %s it serves failed: %v)", e.GVR.Group, e.Discovery)
	case len(e.Served) == 0:
		fmt.Fprintf(&b, ": it serves no version of %s", e.GVR.Group)
	default:
		fmt.Fprintf(&b, ": it serves %s %s only", e.GVR.Group, strings.Join(e.Served, ", "))
	}
	if e.GVR.Group == "kueue.x-k8s.io" {
		switch {
		case len(e.Served) == 0 && e.Discovery == nil:
			fmt.Fprintf(&b, ". Kueue is not installed: install Kueue %s or newer before applying quotas (on a cluster "+
				"with HyperPod's task-governance add-on, manage quotas through the SageMaker API instead)", MinKueue)
		default:
			fmt.Fprintf(&b, ". This provider reads and writes %s, which Kueue serves from %s on (v1beta1-only "+
				"clusters run an older Kueue): upgrade Kueue to %s or newer", gv, MinKueue, MinKueue)
		}
	}
	return b.String()
}

// IsAPINotServed reports whether err says that the cluster does not serve an API.
func IsAPINotServed(err error) bool {
	var e *APINotServedError
	return errors.As(err, &e)
}

// IsObjectNotFound reports whether err is a 404 for a missing object (not for a missing API).
func IsObjectNotFound(err error) bool {
	return apierrors.IsNotFound(err) && !IsAPINotServed(err) && !routeNotFound(err)
}

// routeNotFound reports whether a 404 came from the API server's router rather than from a
// lookup of the object: its Status names no object ("the server could not find the requested
// resource"), or the body was not a Status at all (client-go then records an
// UnexpectedServerResponse cause).
func routeNotFound(err error) bool {
	var se apierrors.APIStatus
	if !errors.As(err, &se) || !apierrors.IsNotFound(err) {
		return false
	}
	st := se.Status()
	if st.Details == nil || st.Details.Name == "" {
		return true
	}
	return slices.ContainsFunc(st.Details.Causes, func(c metav1.StatusCause) bool {
		return c.Type == metav1.CauseTypeUnexpectedServerResponse
	})
}

// objectMissing reports whether a 404 is about an object: the response body (when the caller
// has it: the JSON client does not decode error bodies) or the decoded error is a Status that
// names the object.
func objectMissing(err error, body []byte) bool {
	if len(body) > 0 {
		var st metav1.Status
		if json.Unmarshal(body, &st) == nil && st.Kind == "Status" {
			return st.Details != nil && st.Details.Name != ""
		}
		return false // not a Status: a router or a proxy answered
	}
	return !routeNotFound(err)
}

// notFound classifies a 404 (err, with the response body when the caller has it) of a request
// for gvr: an object 404 is returned as it is, a route 404 becomes an APINotServedError listing
// what the cluster serves.
func (c *Client) notFound(ctx context.Context, gvr schema.GroupVersionResource, err error, body []byte) error {
	if objectMissing(err, body) {
		return err
	}
	served, derr := c.servedVersions(ctx, gvr.Group)
	if derr == nil && slices.Contains(served, gvr.Version) {
		// The version is served, so the resource itself is not (a missing CRD of the group).
		return &APINotServedError{GVR: gvr, Served: served}
	}
	return &APINotServedError{GVR: gvr, Served: served, Discovery: derr}
}

// groupVersions caches the served versions of API groups for the client's lifetime.
type groupVersions struct {
	mu     sync.Mutex
	served map[string][]string
}

// servedVersions asks the API server once per group which versions it serves: one GET of
// /apis/<group> (the core group is always served as v1). A group the server does not know is
// served in no version.
func (c *Client) servedVersions(ctx context.Context, group string) ([]string, error) {
	if group == "" {
		return []string{"v1"}, nil
	}
	c.groups.mu.Lock()
	defer c.groups.mu.Unlock()
	if v, ok := c.groups.served[group]; ok {
		return v, nil
	}
	raw, err := rawOf(c.json.Get().AbsPath("/apis", group).Do(ctx))
	var versions []string
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, err
	default:
		var g metav1.APIGroup
		if err := json.Unmarshal(raw, &g); err != nil {
			return nil, fmt.Errorf("decoding API group %s: %w", group, err)
		}
		for _, v := range g.Versions {
			versions = append(versions, v.Version)
		}
	}
	if c.groups.served == nil {
		c.groups.served = map[string][]string{}
	}
	c.groups.served[group] = versions
	return versions, nil
}

// servedKinds caches, for the client's lifetime, the kinds the API groups serve.
type servedKinds struct {
	mu    sync.Mutex
	kinds map[string]bool
}

// aggregatedDiscovery asks /apis for every group with its resources and their kinds, in one
// response (the API server's aggregated discovery, served since Kubernetes 1.30).
const aggregatedDiscovery = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// ServesKind reports whether any API group the cluster serves has a resource of kind: one GET
// of /apis, made once per client.
func (c *Client) ServesKind(ctx context.Context, kind string) (bool, error) {
	if err := c.init(ctx); err != nil {
		return false, err
	}
	c.kinds.mu.Lock()
	defer c.kinds.mu.Unlock()
	if c.kinds.kinds == nil {
		raw, err := rawOf(c.json.Get().AbsPath("/apis").SetHeader("Accept", aggregatedDiscovery).Do(ctx))
		if err != nil {
			return false, fmt.Errorf("discovering the cluster's APIs: %w", err)
		}
		var list struct {
			Items []struct {
				Versions []struct {
					Resources []struct {
						ResponseKind *struct {
							Kind string `json:"kind"`
						} `json:"responseKind"`
					} `json:"resources"`
				} `json:"versions"`
			} `json:"items"`
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			return false, fmt.Errorf("decoding the cluster's APIs: %w", err)
		}
		kinds := map[string]bool{}
		for _, g := range list.Items {
			for _, v := range g.Versions {
				for _, r := range v.Resources {
					if r.ResponseKind != nil {
						kinds[r.ResponseKind.Kind] = true
					}
				}
			}
		}
		c.kinds.kinds = kinds
	}
	return c.kinds.kinds[kind], nil
}
