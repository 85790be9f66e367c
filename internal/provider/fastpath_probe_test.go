package provider

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand"
	"testing"

	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// TestFastPathFallsBackWhenTheFrameworkChanges runs the fast path beside a probe that sees a
// changed framework (a framework upgrade, simulated on the server the probe asks) and sends it
// the read and plan tests' requests: it must give the framework's answers, and no panic. Where
// the probe finds the framework's private state not as the fast path handles it, every plan and
// read must go to the framework; where the framework renamed its import mark, the plans and
// reads carrying the mark Terraform holds must.
func TestFastPathFallsBackWhenTheFrameworkChanges(t *testing.T) {
	f := newReadFixture(t)
	if c := probePrivate(context.Background(), providerserver.NewProtocol6WithError); c == nil || !f.hasImportMark(markOnly(c.importMark)) {
		t.Fatalf("the probe finds the framework's private state not as the fast path handles it, or an import mark (%+v) "+
			"other than the one of the framework's import of a quota (%s)", c, f.imported)
	}
	for _, c := range frameworkChanges {
		t.Run(c.name, func(t *testing.T) {
			d := newProbedDifferential(t, f.attrs, changedFramework(c.change))
			renamed := d.fast.private != nil
			if renamed != c.renamesMark || renamed && f.hasImportMark(markOnly(d.fast.private.importMark)) {
				t.Fatalf("the probe found %+v", d.fast.private)
			}
			// mustGoBack is whether the change sends a request with this private state to the framework.
			mustGoBack := func(private []byte) bool { return !renamed || f.hasImportMark(private) }
			var back, fast int
			count := func(label string, private []byte, answered bool) {
				switch {
				case mustGoBack(private) && answered:
					t.Errorf("%s: answered by the fast path, on a changed framework", label)
				case mustGoBack(private):
					back++
				case answered:
					fast++
				}
			}
			f.reads(t, d, func(req *tfprotov6.ReadResourceRequest, _, answered bool) {
				count("read of "+string(req.Private), req.Private, answered)
			})
			d.plans(t, rand.New(rand.NewSource(11)), 60, func(label string, req *tfprotov6.PlanResourceChangeRequest, _ *tfprotov6.PlanResourceChangeResponse, answered bool) {
				count(label, req.PriorPrivate, answered)
			})
			t.Logf("%d plans and reads handed to the framework, %d answered by the fast path", back, fast)
			if back < 50 || renamed && fast < 50 {
				t.Errorf("%d plans and reads went to the framework, %d did not: too few to prove the fallback", back, fast)
			}
		})
	}
}

func markOnly(mark string) []byte {
	out, _ := json.Marshal(map[string][]byte{mark: []byte(`true`)})
	return out
}

// frameworkChanges are framework upgrades the probe must see: a server that changes what the
// framework answers. renamesMark says the probe finds another import mark; else it finds none.
var frameworkChanges = []struct {
	name        string
	change      func(tfprotov6.ProviderServer) (tfprotov6.ProviderServer, error)
	renamesMark bool
}{
	{"private state written as raw JSON", func(s tfprotov6.ProviderServer) (tfprotov6.ProviderServer, error) {
		return rawJSONPrivate{s}, nil
	}, false},
	{"import mark renamed", func(s tfprotov6.ProviderServer) (tfprotov6.ProviderServer, error) {
		return &renamedImportMark{ProviderServer: s}, nil
	}, true},
	{"no import mark", func(s tfprotov6.ProviderServer) (tfprotov6.ProviderServer, error) {
		return unmarkedImport{s}, nil
	}, false},
	{"identity change after an import refused", func(s tfprotov6.ProviderServer) (tfprotov6.ProviderServer, error) {
		return identityKeptAfterImport{s}, nil
	}, false},
	{"framework panics", func(s tfprotov6.ProviderServer) (tfprotov6.ProviderServer, error) {
		return panickingImport{s}, nil
	}, false},
	{"framework server fails", func(tfprotov6.ProviderServer) (tfprotov6.ProviderServer, error) {
		return nil, errors.New("simulated")
	}, false},
}

// changedFramework serves a provider as the framework does, through change.
func changedFramework(change func(tfprotov6.ProviderServer) (tfprotov6.ProviderServer, error)) frameworkServe {
	return func(p fwprovider.Provider) func() (tfprotov6.ProviderServer, error) {
		return func() (tfprotov6.ProviderServer, error) {
			s, err := providerserver.NewProtocol6WithError(p)()
			if err != nil {
				return nil, err
			}
			return change(s)
		}
	}
}

// rawJSONPrivate writes private states as one JSON object of the values themselves.
type rawJSONPrivate struct{ tfprotov6.ProviderServer }

func rawJSON(private []byte) []byte {
	var m map[string][]byte
	if json.Unmarshal(private, &m) != nil || len(m) == 0 {
		return private
	}
	raw := map[string]json.RawMessage{}
	for k, v := range m {
		raw[k] = v
	}
	out, _ := json.Marshal(raw)
	return out
}

func (s rawJSONPrivate) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	resp, err := s.ProviderServer.ReadResource(ctx, req)
	if resp != nil {
		resp.Private = rawJSON(resp.Private)
	}
	return resp, err
}

func (s rawJSONPrivate) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	resp, err := s.ProviderServer.PlanResourceChange(ctx, req)
	if resp != nil {
		resp.PlannedPrivate = rawJSON(resp.PlannedPrivate)
	}
	return resp, err
}

// renamedImportMark writes, and reads, another key than the framework's as its import mark.
type renamedImportMark struct {
	tfprotov6.ProviderServer
	marks map[string]bool // the framework's import marks
}

// renamed is private with each key k that from says is a mark renamed to(k).
func renamed(private []byte, from func(string) bool, to func(string) string) []byte {
	var m map[string][]byte
	if json.Unmarshal(private, &m) != nil {
		return private
	}
	out := map[string][]byte{}
	for k, v := range m {
		if from(k) {
			k = to(k)
		}
		out[k] = v
	}
	b, _ := json.Marshal(out)
	return b
}

func (s *renamedImportMark) isMark(k string) bool    { return s.marks[k] }
func (s *renamedImportMark) isRenamed(k string) bool { return len(k) > 3 && s.marks[k[:len(k)-3]] }
func (*renamedImportMark) rename(k string) string    { return k + "_v2" }
func (*renamedImportMark) restore(k string) string   { return k[:len(k)-3] }

func (s *renamedImportMark) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	resp, err := s.ProviderServer.ImportResourceState(ctx, req)
	for _, r := range resp.ImportedResources {
		var m map[string][]byte
		_ = json.Unmarshal(r.Private, &m)
		s.marks = map[string]bool{}
		for k := range m {
			s.marks[k] = true
		}
		r.Private = renamed(r.Private, s.isMark, s.rename)
	}
	return resp, err
}

func (s *renamedImportMark) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	in := *req
	in.Private = renamed(req.Private, s.isRenamed, s.restore)
	resp, err := s.ProviderServer.ReadResource(ctx, &in)
	if resp != nil {
		resp.Private = renamed(resp.Private, s.isMark, s.rename)
	}
	return resp, err
}

func (s *renamedImportMark) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	in := *req
	in.PriorPrivate = renamed(req.PriorPrivate, s.isRenamed, s.restore)
	resp, err := s.ProviderServer.PlanResourceChange(ctx, &in)
	if resp != nil {
		resp.PlannedPrivate = renamed(resp.PlannedPrivate, s.isMark, s.rename)
	}
	return resp, err
}

// unmarkedImport writes no private state on an import.
type unmarkedImport struct{ tfprotov6.ProviderServer }

func (s unmarkedImport) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	resp, err := s.ProviderServer.ImportResourceState(ctx, req)
	for _, r := range resp.ImportedResources {
		r.Private = nil
	}
	return resp, err
}

// identityKeptAfterImport refuses a read that changes the identity, after an import too.
type identityKeptAfterImport struct{ tfprotov6.ProviderServer }

func (s identityKeptAfterImport) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	resp, err := s.ProviderServer.ReadResource(ctx, req)
	if resp != nil && req.CurrentIdentity != nil && resp.NewIdentity != nil && !sameDynamic(probeIdentityType, req.CurrentIdentity.IdentityData, resp.NewIdentity.IdentityData) {
		resp.Diagnostics = append(resp.Diagnostics, &tfprotov6.Diagnostic{Severity: tfprotov6.DiagnosticSeverityError, Summary: "Unexpected Identity Change"})
	}
	return resp, err
}

var probeIdentityType = probeObjectType // the probe resource's identity has its state's one attribute

// panickingImport panics on an import.
type panickingImport struct{ tfprotov6.ProviderServer }

func (panickingImport) ImportResourceState(context.Context, *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	panic("simulated")
}
