package faultproxy

import (
	"net/http"
	"net/url"
	"strings"
)

// Kinds of requests that address no resource (Request.NonResource).
const (
	NonResourceDiscovery = "discovery" // /api, /api/v1, /apis, /apis/<g>, /apis/<g>/<v>, /version
	NonResourceOpenAPI   = "openapi"   // /openapi/...
	NonResourceOther     = "other"     // /healthz, /livez, /metrics, ...
)

// NoResource is the ResourceLabel of requests that address no resource.
const NoResource = "-"

// Request is a Kubernetes API request, classified from its method, URL and content type:
// what the proxy counts faults under, what the bench counts requests under, and what the
// request-count tests expect.
type Request struct {
	Verb        string // one of the Verb constants
	NonResource string // "" for a resource request, else one of the NonResource kinds
	Group       string // "" for the core group
	Version     string
	Resource    string // plural, e.g. "clusterqueues"; "" when none
	Subresource string // e.g. "status", "finalize", "log"
	Namespace   string
	Name        string // "" for a collection
	Continue    bool   // a LIST of a further page (?continue=)
}

// ResourceLabel is the plural resource, with the subresource after a slash
// ("namespaces/finalize"), or NoResource.
func (r Request) ResourceLabel() string {
	switch {
	case r.Resource == "":
		return NoResource
	case r.Subresource != "":
		return r.Resource + "/" + r.Subresource
	default:
		return r.Resource
	}
}

// Classify returns the Kubernetes verb of r (one of the Verb constants), as ClassifyRequest
// finds it.
func Classify(r *http.Request) string {
	return ClassifyRequest(r.Method, r.URL.Path, r.URL.Query(), r.Header.Get("Content-Type")).Verb
}

// ClassifyRequest parses a Kubernetes API request:
//
//	/api, /api/v1, /apis, /apis/<g>, /apis/<g>/<v>, /version    discovery
//	/openapi/...                                                openapi
//	/api/v1/[watch/][namespaces/<ns>/]<resource>[/<name>[/<subresource>]]
//	/apis/<g>/<v>/[watch/][namespaces/<ns>/]<resource>[/<name>[/<subresource>]]
//
// /api/v1/namespaces/<name> is the Namespace object itself, and .../namespaces/<name>/status
// or /finalize its subresources. A GET of a collection is a LIST, with watch=true (or the
// legacy /watch/ prefix) a WATCH. A request that addresses no resource gets the verb of its
// method (GET for GET and HEAD).
func ClassifyRequest(method, path string, query url.Values, contentType string) Request {
	r := parsePath(path)
	if w := query.Get("watch"); w == "true" || w == "1" {
		r.watch = true
	}
	req := r.Request
	switch method {
	case http.MethodGet, http.MethodHead:
		switch {
		case req.NonResource != "":
			req.Verb = VerbGet
		case r.watch:
			req.Verb = VerbWatch
		case req.Name == "":
			req.Verb = VerbList
			req.Continue = query.Get("continue") != ""
		default:
			req.Verb = VerbGet
		}
	case http.MethodPost:
		req.Verb = VerbCreate
	case http.MethodPut:
		req.Verb = VerbUpdate
	case http.MethodPatch:
		req.Verb = VerbPatch
		if isApply(contentType) {
			req.Verb = VerbApply
		}
	case http.MethodDelete:
		req.Verb = VerbDelete
		if req.NonResource == "" && req.Name == "" {
			req.Verb = VerbDeleteCollection
		}
	default:
		req.Verb = VerbOther
	}
	return req
}

type parsedPath struct {
	Request
	watch bool // the legacy /watch/ prefix
}

// parsePath fills everything of a Request but the verb.
func parsePath(p string) parsedPath {
	p = strings.Trim(p, "/")
	parts := strings.Split(p, "/")
	var r parsedPath
	var rest []string
	switch {
	case p == "":
		r.NonResource = NonResourceOther
		return r
	case parts[0] == "version":
		r.NonResource = NonResourceDiscovery
		return r
	case parts[0] == "openapi":
		r.NonResource = NonResourceOpenAPI
		return r
	case parts[0] == "api":
		if len(parts) <= 2 {
			r.NonResource = NonResourceDiscovery
			return r
		}
		r.Version, rest = parts[1], parts[2:]
	case parts[0] == "apis":
		if len(parts) <= 3 {
			r.NonResource = NonResourceDiscovery
			return r
		}
		r.Group, r.Version, rest = parts[1], parts[2], parts[3:]
	default:
		r.NonResource = NonResourceOther
		return r
	}
	if rest[0] == "watch" {
		r.watch, rest = true, rest[1:]
	}
	if len(rest) >= 3 && rest[0] == "namespaces" && (len(rest) != 3 || rest[2] != "status" && rest[2] != "finalize") {
		r.Namespace, rest = rest[1], rest[2:]
	}
	if len(rest) == 0 {
		return parsedPath{Request: Request{NonResource: NonResourceOther}}
	}
	r.Resource = rest[0]
	if len(rest) >= 2 {
		r.Name = rest[1]
	}
	if len(rest) >= 3 {
		r.Subresource = strings.Join(rest[2:], "/")
	}
	return r
}

// MatchRequest returns a Match function accepting the requests whose classification f
// accepts.
func MatchRequest(f func(Request) bool) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return f(ClassifyRequest(r.Method, r.URL.Path, r.URL.Query(), r.Header.Get("Content-Type")))
	}
}
