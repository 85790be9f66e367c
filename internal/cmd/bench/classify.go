package main

import (
	"strings"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/faultproxy"
)

// Verbs a request is counted under: faultproxy's verbs in lower case, with requests that
// address no resource counted by kind and further pages of a paginated LIST apart. "apply" is
// a PATCH with an apply-patch content type (server-side apply); every other PATCH is "patch".
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
	verbDiscovery        = faultproxy.NonResourceDiscovery
	verbOpenAPI          = faultproxy.NonResourceOpenAPI
	verbOther            = "other"
)

// noResource is the resource label of requests that address no resource (discovery,
// OpenAPI, health checks).
const noResource = faultproxy.NoResource

// benchVerb is the verb the bench counts a classified request under.
func benchVerb(r faultproxy.Request) string {
	switch {
	case r.NonResource != "":
		return r.NonResource
	case r.Verb == faultproxy.VerbList && r.Continue:
		return verbListContinue
	default:
		return strings.ToLower(r.Verb)
	}
}
