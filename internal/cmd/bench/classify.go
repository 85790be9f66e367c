package main

import (
	"net/url"
	"strings"
)

// Verbs a request is counted under. "apply" is a PATCH with an apply-patch content type
// (server-side apply); every other PATCH is "patch".
const (
	verbGet              = "get"
	verbList             = "list"
	verbListContinue     = "list-continue" // a further page of a paginated LIST (has ?continue=)
	verbWatch            = "watch"
	verbCreate           = "create"
	verbApply            = "apply"
	verbPatch            = "patch"
	verbUpdate           = "update"
	verbDelete           = "delete"
	verbDeleteCollection = "deletecollection"
	verbDiscovery        = "discovery"
	verbOpenAPI          = "openapi"
	verbOther            = "other"
)

// noResource is the resource label of requests that address no resource (discovery,
// OpenAPI, health checks).
const noResource = "-"

// apiRequest is a Kubernetes API request, classified from its method, URL and content type.
type apiRequest struct {
	Verb        string
	Group       string // "" for the core group
	Version     string
	Resource    string // plural, e.g. "clusterqueues"; "" when none
	Subresource string // e.g. "status"
	Namespace   string
	Name        string // "" for a collection
}

// ResourceLabel is what requests are counted under: the plural resource, with the
// subresource after a slash ("namespaces/finalize"), or noResource.
func (r apiRequest) ResourceLabel() string {
	switch {
	case r.Resource == "":
		return noResource
	case r.Subresource != "":
		return r.Resource + "/" + r.Subresource
	default:
		return r.Resource
	}
}

// classify parses a Kubernetes API request:
//
//	/api, /api/v1, /apis, /apis/<g>, /apis/<g>/<v>, /version    discovery
//	/openapi/...                                                openapi
//	/api/v1/[watch/][namespaces/<ns>/]<resource>[/<name>[/<subresource>]]
//	/apis/<g>/<v>/[watch/][namespaces/<ns>/]<resource>[/<name>[/<subresource>]]
//
// /api/v1/namespaces/<name> is the Namespace object itself, and .../namespaces/<name>/status
// or /finalize its subresources. A GET of a collection is a list, with watch=true (or the
// legacy /watch/ prefix) a watch.
func classify(method, rawPath string, query url.Values, contentType string) apiRequest {
	path := strings.Trim(rawPath, "/")
	parts := strings.Split(path, "/")
	if path == "" {
		return apiRequest{Verb: verbOther}
	}
	var r apiRequest
	var rest []string
	switch parts[0] {
	case "version":
		return apiRequest{Verb: verbDiscovery}
	case "openapi":
		return apiRequest{Verb: verbOpenAPI}
	case "api":
		if len(parts) <= 2 {
			return apiRequest{Verb: verbDiscovery}
		}
		r.Version, rest = parts[1], parts[2:]
	case "apis":
		if len(parts) <= 3 {
			return apiRequest{Verb: verbDiscovery}
		}
		r.Group, r.Version, rest = parts[1], parts[2], parts[3:]
	default:
		return apiRequest{Verb: verbOther} // /healthz, /livez, /metrics, ...
	}

	watch := false
	if rest[0] == "watch" {
		watch, rest = true, rest[1:]
	}
	if len(rest) >= 2 && rest[0] == "namespaces" {
		switch {
		case len(rest) == 2: // the Namespace object
		case len(rest) == 3 && (rest[2] == "status" || rest[2] == "finalize"):
		default:
			r.Namespace, rest = rest[1], rest[2:]
		}
	}
	if len(rest) == 0 {
		return apiRequest{Verb: verbOther}
	}
	r.Resource = rest[0]
	if len(rest) >= 2 {
		r.Name = rest[1]
	}
	if len(rest) >= 3 {
		r.Subresource = strings.Join(rest[2:], "/")
	}
	if w := query.Get("watch"); w == "true" || w == "1" {
		watch = true
	}

	switch strings.ToUpper(method) {
	case "GET", "HEAD":
		switch {
		case watch:
			r.Verb = verbWatch
		case r.Name == "" && query.Get("continue") != "":
			r.Verb = verbListContinue
		case r.Name == "":
			r.Verb = verbList
		default:
			r.Verb = verbGet
		}
	case "POST":
		r.Verb = verbCreate
	case "PUT":
		r.Verb = verbUpdate
	case "PATCH":
		r.Verb = verbPatch
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "application/apply-patch") {
			r.Verb = verbApply
		}
	case "DELETE":
		r.Verb = verbDelete
		if r.Name == "" {
			r.Verb = verbDeleteCollection
		}
	default:
		r.Verb = verbOther
	}
	return r
}
